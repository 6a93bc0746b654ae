package io.sandgate.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A Node script of the suite (the TypeScript SDK clients of {@code src/test/mcp-ts}) run to its
 * end, as the tests that drive the gateway with one run them: no input, standard output and error
 * in files a test keeps for a look after a failure, and a backstop past the script's own hard
 * timeout. By the scripts' convention the last line of standard output is a JSON report and
 * standard error logs each step as {@code step <name> ...}.
 */
public final class NodeScript
{
    /**
     * How a run ended.
     *
     * @param lastLine the last line of standard output (the report), empty when it printed nothing
     * @param output both streams, for a failure message
     */
    public record Ended(int exitCode, String lastLine, String output)
    {
    }

    private NodeScript()
    {
    }

    /**
     * Runs {@code node script args...} in {@code directory}, writing {@code <name>.out} and
     * {@code <name>.err} under {@code work}. Fails the test when it outlasts {@code timeout}: the
     * script's own timer ends it earlier unless its event loop is blocked, which the node
     * process's CPU time and the last step logged tell apart.
     */
    public static Ended run(Path node, Path directory, Path script, Path work, String name, Duration timeout, String... args)
        throws IOException, InterruptedException
    {
        List<String> command = new ArrayList<>(List.of(node.toString(), script.toString()));
        command.addAll(List.of(args));
        Path out = work.resolve(name + ".out");
        Path err = work.resolve(name + ".err");
        Process process = new ProcessBuilder(command).directory(directory.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
        {
            String cpu = process.info().totalCpuDuration().map(d -> d.toMillis() + " ms").orElse("unknown");
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
            fail(script.getFileName() + " " + name + " did not end within " + timeout.toSeconds() + " s (node CPU " + cpu + ", " + lastStep(err) + ")\n"
                + output(out, err));
        }
        String stdout = Files.readString(out, StandardCharsets.UTF_8).trim();
        return new Ended(process.exitValue(), stdout.substring(stdout.lastIndexOf('\n') + 1), output(out, err));
    }

    /** The last "step ..." line the script logged on standard error. */
    private static String lastStep(Path err) throws IOException
    {
        List<String> steps = Files.readAllLines(err, StandardCharsets.UTF_8).stream().filter(l -> l.startsWith("step ")).toList();
        return steps.isEmpty() ? "no step logged" : "last " + steps.get(steps.size() - 1);
    }

    private static String output(Path out, Path err) throws IOException
    {
        return "--- stderr\n" + Files.readString(err, StandardCharsets.UTF_8) + "--- stdout\n" + Files.readString(out, StandardCharsets.UTF_8);
    }
}
