package io.sandgate.testing;

/** Stopping what a test started. */
public final class Fixtures
{
    private Fixtures()
    {
    }

    /**
     * Closes the fixtures in the order given, users before what they use (replicas before Redis),
     * passing over those never started (null). Each one is closed even when an earlier one fails:
     * the first failure is thrown, with the later ones suppressed.
     */
    public static void closeInOrder(AutoCloseable... fixtures) throws Exception
    {
        Exception failure = null;
        for (AutoCloseable fixture : fixtures)
        {
            if (fixture == null)
                continue;
            try
            {
                fixture.close();
            }
            catch (Exception x)
            {
                if (failure == null)
                    failure = x;
                else
                    failure.addSuppressed(x);
            }
        }
        if (failure != null)
            throw failure;
    }
}
