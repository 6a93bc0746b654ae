package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Ports and programs for the external processes the tests start. Their scratch directories are
 * under {@code target/tests} (jetty-test-helper's {@code MavenPaths} and {@code WorkDir}).
 */
public final class LocalResources
{
    private LocalResources()
    {
    }

    /**
     * A loopback port that was free a moment ago. Another process may take it before ours binds;
     * callers that start servers retry on a fresh port when that happens.
     */
    public static int freeLoopbackPort()
    {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByAddress(new byte[]{127, 0, 0, 1})))
        {
            return probe.getLocalPort();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot find a free loopback port", e);
        }
    }

    /**
     * The executable of that name in a PATH directory or in {@code extraDirs} (Debian puts some
     * daemons in /usr/sbin, which a PATH may lack), or null.
     */
    public static Path executable(String name, String... extraDirs)
    {
        List<String> dirs = new java.util.ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null)
            dirs.addAll(List.of(path.split(java.io.File.pathSeparator)));
        dirs.addAll(List.of(extraDirs));
        for (String dir : dirs)
        {
            if (dir.isEmpty())
                continue;
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate))
                return candidate;
        }
        return null;
    }
}
