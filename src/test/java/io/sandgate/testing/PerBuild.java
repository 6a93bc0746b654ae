package io.sandgate.testing;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * What the test JVMs of one build make once and share, because it costs seconds of both cores and
 * comes out alike whoever makes it: the first JVM to ask makes it under a file lock, the others wait
 * on the lock and take up what it left. A build is named by {@code test.run}, which the pom sets;
 * what another build left is never taken, and outside Maven every ask makes it anew.
 */
public final class PerBuild
{
    /** Makes the thing, and says in one line what another JVM needs to take it up. */
    @FunctionalInterface
    public interface Maker
    {
        String make() throws Exception;
    }

    private PerBuild()
    {
    }

    /**
     * @param directory where the lock and the record of what was made go
     * @param name the thing's name there
     * @return the maker's line, made now or by another JVM of this build
     */
    public static String once(Path directory, String name, Maker maker) throws Exception
    {
        String build = System.getProperty("test.run", "");
        Files.createDirectories(directory);
        Path done = directory.resolve(name + ".done");
        try (FileChannel channel = FileChannel.open(directory.resolve(name + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock held = channel.lock())
        {
            if (!build.isEmpty() && Files.isRegularFile(done))
            {
                List<String> made = Files.readAllLines(done, StandardCharsets.UTF_8);
                if (made.size() == 2 && made.get(0).equals(build))
                    return made.get(1);
            }
            String line = maker.make();
            Files.write(done, List.of(build, line), StandardCharsets.UTF_8);
            return line;
        }
    }
}
