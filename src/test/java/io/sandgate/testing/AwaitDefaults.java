package io.sandgate.testing;

import java.time.Duration;

import org.awaitility.Awaitility;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Awaitility waits one poll interval before it first looks at a condition. Most of the suite's
 * conditions are already true, or nearly, when they are first asked, and the tests ask thousands of
 * them, so that wait alone added tens of seconds to a run: here every await looks at once, then
 * every 100 ms. A test that needs a delay before its first look still says so with {@code pollDelay}.
 */
public final class AwaitDefaults implements LauncherSessionListener
{
    @Override
    public void launcherSessionOpened(LauncherSession session)
    {
        Awaitility.setDefaultPollDelay(Duration.ZERO);
    }
}
