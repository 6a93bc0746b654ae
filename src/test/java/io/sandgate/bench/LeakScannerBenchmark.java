package io.sandgate.bench;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.ToIntFunction;
import java.util.regex.Matcher;

import io.sandgate.leak.LeakRule;
import io.sandgate.leak.LeakScanner;

/**
 * Throughput of the streaming leak scanner on OpenAI chat-completions request bodies (a long
 * conversation of prose, code and JSON escapes), fed in 8 KB chunks, beside the plain approach of
 * running every rule's regex over the whole body. Each sample scans the body enough times to take
 * at least 100 ms; the median of the samples after a warm-up is reported.
 *
 * <p>Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.sandgate.bench.LeakScannerBenchmark [-Dexec.args="OUT.md"]}</p>
 */
public final class LeakScannerBenchmark
{
    private static final int CHUNK = 8192;
    private static final int WARMUP_SAMPLES = 5;
    private static final int SAMPLES = 11;
    private static final String SECTION = "## Leak scanner throughput";

    private static final String[] WORDS = {
        "the", "model", "should", "return", "a", "task", "list", "for", "each", "request", "risk-free", "desk",
        "Asia", "region", "token", "budget", "async", "retry", "with", "backoff", "and", "ask", "user", "about",
        "their", "config", "key", "rotation", "policy", "when", "disk", "usage", "grows", "beyond", "limits",
        "Grüße", "naïve", "café", "—", "stream", "chunk", "boundary", "secret", "scanner", "gateway", "proxy"};

    private static final String CODE = "public List<Task> tasks(String region) {\\n    if (region == null)\\n"
        + "        throw new IllegalArgumentException(\\\"region\\\");\\n    var ask = client.ask(\\\"sk-\\\" + id);\\n"
        + "    return repo.find(region).stream().filter(t -> t.risk() < 3).toList();\\n}\\n";

    private LeakScannerBenchmark()
    {
    }

    public static void main(String[] args) throws Exception
    {
        Path out = Path.of(args.length > 0 ? args[0] : "docs/BENCHMARKS.md");
        LeakScanner scanner = LeakScanner.defaults();
        String secret = "sk" + "-ant-" + "api03-" + random(93, 7) + "AA";
        StringBuilder table = new StringBuilder(SECTION).append("\n\n")
            .append("OpenAI chat-completions request bodies (a long conversation of prose, code and JSON escapes; ")
            .append("keyword look-alikes such as `task-`, `Asia`, `sk-` occur throughout), ")
            .append("fed to a stream in ").append(CHUNK / 1024).append(" KB chunks. ")
            .append("\"All regexes\" runs each of the ").append(scanner.rules().size())
            .append(" rules' patterns with `find()` over the whole body, already decoded to a String (decoding not timed). ")
            .append("MB = 10^6 bytes; median of ").append(SAMPLES).append(" samples of at least 100 ms after ")
            .append(WARMUP_SAMPLES).append(" warm-up samples.\n")
            .append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ")
            .append(System.getProperty("java.version"))
            // Shared machines: the load says whether other work competed for the cores.
            .append(String.format(", load average %.1f at start.%n", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()))
            .append("Command: `mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.sandgate.bench.LeakScannerBenchmark`\n\n")
            .append("| body | stream, REPORT MB/s | stream, REDACT MB/s | all regexes, whole body MB/s | hits |\n")
            .append("|---|---|---|---|---|\n");
        // One JIT warm-up over every path before any row, so the first row is not the slow one.
        byte[] warm = chatRequest(256 * 1024, secret);
        String warmText = new String(warm, StandardCharsets.ISO_8859_1);
        throughput(warm.length, () -> stream(scanner, LeakScanner.Mode.REPORT, warm));
        throughput(warm.length, () -> stream(scanner, LeakScanner.Mode.REDACT, warm));
        throughput(warm.length, () -> allRegexes(scanner, warmText));
        for (int size : new int[]{64 * 1024, 1024 * 1024})
        {
            for (boolean withSecret : new boolean[]{false, true})
            {
                byte[] body = chatRequest(size, withSecret ? secret : null);
                String text = new String(body, StandardCharsets.ISO_8859_1);
                int hits = stream(scanner, LeakScanner.Mode.REPORT, body);
                int naiveHits = allRegexes(scanner, text);
                if (hits != naiveHits)
                    throw new IllegalStateException("stream found " + hits + ", regexes " + naiveHits);
                double report = throughput(body.length, () -> stream(scanner, LeakScanner.Mode.REPORT, body));
                double redact = throughput(body.length, () -> stream(scanner, LeakScanner.Mode.REDACT, body));
                double naive = throughput(body.length, () -> allRegexes(scanner, text));
                String row = String.format("| %d KB%s | %.0f | %.0f | %.0f | %d |%n", body.length / 1024,
                    withSecret ? ", one key near the end" : ", no secrets", report, redact, naive, hits);
                System.out.print(row);
                table.append(row);
            }
        }
        String existing = Files.exists(out) ? Files.readString(out) : "# Benchmarks\n\n";
        int start = existing.indexOf(SECTION);
        if (start >= 0)
        {
            int end = existing.indexOf("\n## ", start + 3);
            existing = existing.substring(0, start) + (end < 0 ? "" : existing.substring(end + 1));
        }
        Files.writeString(out, existing.stripTrailing() + "\n\n" + table);
        System.out.println(table);
    }

    private static int stream(LeakScanner scanner, LeakScanner.Mode mode, byte[] body)
    {
        LeakScanner.Stream stream = scanner.stream(mode);
        int hits = 0;
        for (int from = 0; from < body.length; from += CHUNK)
            hits += stream.feed(ByteBuffer.wrap(body, from, Math.min(CHUNK, body.length - from))).hits().size();
        return hits + stream.finish().hits().size();
    }

    private static int allRegexes(LeakScanner scanner, String text)
    {
        int hits = 0;
        for (LeakRule rule : scanner.rules())
        {
            Matcher m = rule.pattern().matcher(text);
            while (m.find())
                hits++;
        }
        return hits;
    }

    /** MB/s, median over samples, each repeating the work until at least 100 ms have passed. */
    private static double throughput(int bytes, Runnable work)
    {
        List<Double> rates = new ArrayList<>();
        for (int s = 0; s < WARMUP_SAMPLES + SAMPLES; s++)
        {
            long begin = System.nanoTime();
            long elapsed;
            int rounds = 0;
            do
            {
                work.run();
                rounds++;
                elapsed = System.nanoTime() - begin;
            }
            while (elapsed < 100_000_000L);
            if (s >= WARMUP_SAMPLES)
                rates.add((double)bytes * rounds / (elapsed / 1e9) / 1e6);
        }
        Collections.sort(rates);
        return rates.get(rates.size() / 2);
    }

    /** A chat-completions request of about {@code size} bytes; the secret, if any, in the last message. */
    private static byte[] chatRequest(int size, String secret)
    {
        Random random = new Random(42);
        StringBuilder json = new StringBuilder("{\"model\":\"gpt-4o\",\"temperature\":0.2,\"stream\":true,\"messages\":[")
            .append("{\"role\":\"system\",\"content\":\"You are a careful coding assistant.\"}");
        int turn = 0;
        while (json.length() < size - 600)
        {
            json.append(",{\"role\":\"").append(turn++ % 2 == 0 ? "user" : "assistant").append("\",\"content\":\"");
            int sentences = 3 + random.nextInt(8);
            for (int s = 0; s < sentences; s++)
            {
                int words = 6 + random.nextInt(14);
                for (int w = 0; w < words; w++)
                    json.append(w == 0 ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
                json.append(". ");
            }
            if (random.nextInt(3) == 0)
                json.append("Here is the code:\\n```java\\n").append(CODE).append("```\\n");
            json.append("\"}");
        }
        json.append(",{\"role\":\"user\",\"content\":\"One more thing, my key is ")
            .append(secret == null ? "in the vault" : secret).append(", please keep it safe.\"}]}");
        return json.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String random(int n, long seed)
    {
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
        Random random = new Random(seed);
        StringBuilder s = new StringBuilder(n);
        for (int i = 0; i < n; i++)
            s.append(alphabet.charAt(random.nextInt(alphabet.length())));
        return s.toString();
    }
}
