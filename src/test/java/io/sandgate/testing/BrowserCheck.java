package io.sandgate.testing;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.toolchain.test.MavenPaths;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs one of the Node scripts in {@code src/test/browser} (Playwright driving Debian's headless
 * Chromium) and fails the test unless it exits 0 in time, with everything it printed in the message.
 * The test can act while the script runs, on a line it prints (such as {@code READY}).
 */
public final class BrowserCheck
{
    private static final Path BROWSER = MavenPaths.projectBase().resolve("src/test/browser");

    /** What the test does when the script prints a given line. */
    @FunctionalInterface
    public interface OnLine
    {
        void accept(String line) throws Exception;
    }

    private BrowserCheck()
    {
    }

    /** Where the browser tests keep their screenshots: artefacts of the run, not goldens. */
    public static Path screenshot(String name)
    {
        return MavenPaths.targetDir().resolve("screenshots").resolve(name);
    }

    /** @return what the script printed */
    public static String run(String script, List<String> args, Duration timeout, OnLine onLine) throws Exception
    {
        assertTrue(Files.isDirectory(BROWSER.resolve("node_modules/playwright-core")), "run ./scripts/test.sh to install the browser test packages");
        List<String> command = new ArrayList<>(List.of("node", BROWSER.resolve(script).toString()));
        command.addAll(args);
        Process check = new ProcessBuilder(command).redirectErrorStream(true).start();
        StringBuilder output = new StringBuilder();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(check.getInputStream())))
        {
            String line;
            while ((line = lines.readLine()) != null)
            {
                output.append(line).append('\n');
                onLine.accept(line);
            }
        }
        finally
        {
            if (!check.waitFor(timeout.toSeconds(), TimeUnit.SECONDS))
                check.destroyForcibly();
        }
        assertEquals(0, check.exitValue(), output.toString());
        // What the script saw, in the test's output when it passes too.
        System.out.print(output);
        return output.toString();
    }
}
