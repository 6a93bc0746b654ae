package io.sandgate.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;

/**
 * An inspected CONNECT ({@code inspect: true}) against a blind one, in one run: the same gateway,
 * node and HTTPS target, the same host; only the task type the CONNECT names picks the inspecting
 * route, so both tunnels differ in nothing but the interception. Two measures, interleaved round by
 * round (the order alternating) so both see the same machine state:
 * <ul>
 * <li>handshakes: CONNECT, a full TLS handshake (the client drops each session, so none is resumed)
 * and one tiny GET per connection, {@value #CLIENTS} clients at once; the inspected client trusts
 * only the gateway's CA (as fetched from {@code /egress/ca.pem}), the blind one only the target's
 * certificate. The leaf for the host is minted during the warm-up, so the run measures a cached leaf;</li>
 * <li>requests inside one kept-alive tunnel: 1 KB POSTs to the target's echo, one at a time.</li>
 * </ul>
 * Clients, gateway, node and target share this JVM and its cores.
 *
 * <p>Run: {@code java -cp target/test-classes:target/classes:$(cat CLASSPATH_FILE) io.sandgate.bench.EgressInspectBenchmark
 * [ROUNDS SECONDS_PER_MEASURE OUT.md]}, the class path from {@code mvn -o -q dependency:build-classpath
 * -Dmdep.outputFile=CLASSPATH_FILE -Dmdep.includeScope=test}.
 */
public final class EgressInspectBenchmark
{
    private static final String HEADING = "## Inspected CONNECT against a blind one";
    private static final String HOST = "localhost";
    private static final int CLIENTS = 4;
    private static final int WARMUP_SECONDS = 8;
    private static final byte[] KILOBYTE = "x".repeat(1024).getBytes(StandardCharsets.US_ASCII);

    private EgressInspectBenchmark()
    {
    }

    /** One side: the client's trust and the task type its CONNECT names (null: the blind route). */
    record Mode(String name, SSLContext trust, String taskType)
    {
    }

    /** A TLS connection inside a tunnel, read through one buffer for as long as it is open. */
    record Tunnel(SSLSocket tls, InputStream input) implements AutoCloseable
    {
        @Override
        public void close() throws IOException
        {
            tls.close();
        }
    }

    record Measure(long count, double seconds, long[] sorted)
    {
        double perSecond()
        {
            return count / seconds;
        }
    }

    public static void main(String[] args) throws Exception
    {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Path out = Path.of(args.length > 2 ? args[2] : "docs/BENCHMARKS.md");
        String section;
        try (TargetServer target = TargetServer.start(); ForwardProxy node = ForwardProxy.start("n1");
             RunningGateway gateway = RunningGateway.start(config -> config
                 .set("log.access", "false")
                 .trustStoreOf(target)
                 .set("egress.ssrf.allow", "127.0.0.0/8")
                 .set("egress.routes", List.of(
                     Map.of("match", Map.of("domains", List.of(HOST), "task_type", "inspect"), "upstream", "main", "inspect", true),
                     Map.of("match", Map.of("domains", List.of(HOST)), "upstream", "main")))
                 .set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))))))
        {
            Mode blind = new Mode("blind tunnel", target.clientTrust(), null);
            Mode inspected = new Mode("inspected (cached leaf)", trusting(gatewayCa(gateway)), "inspect");
            List<Mode> modes = List.of(blind, inspected);
            List<String> peers = new ArrayList<>();
            for (Mode mode : modes)
            {
                try (Tunnel tunnel = open(gateway, target, mode))
                {
                    javax.net.ssl.SSLSession session = tunnel.tls().getSession();
                    peers.add(mode.name() + ": " + session.getProtocol() + ", " + session.getCipherSuite() + ", an "
                        + session.getPeerCertificates()[0].getPublicKey().getAlgorithm() + " key (" + (mode.taskType() == null ? "the target's" : "the gateway's leaf") + ")");
                }
            }
            long started = System.nanoTime();
            for (Mode mode : modes)
            {
                handshakes(gateway, target, mode, WARMUP_SECONDS / 2);
                requests(gateway, target, mode, WARMUP_SECONDS / 2);
            }
            List<List<Measure>> handshakes = List.of(new ArrayList<>(), new ArrayList<>());
            List<List<Measure>> requests = List.of(new ArrayList<>(), new ArrayList<>());
            for (int round = 0; round < rounds; round++)
            {
                for (int k = 0; k < 2; k++)
                {
                    int m = (round + k) % 2;
                    handshakes.get(m).add(handshakes(gateway, target, modes.get(m), seconds));
                }
                for (int k = 0; k < 2; k++)
                {
                    int m = (round + k + 1) % 2;
                    requests.get(m).add(requests(gateway, target, modes.get(m), seconds));
                }
            }
            double okHandshakes = counter(gateway, "sandgate_egress_inspect_handshakes_total\\{outcome=\"ok\"[^}]*}");
            double failedHandshakes = counter(gateway, "sandgate_egress_inspect_handshakes_total\\{outcome=\"(?!ok\")[^\"]*\"[^}]*}");
            section = section(rounds, seconds, modes, peers, handshakes, requests, okHandshakes, failedHandshakes,
                (System.nanoTime() - started) / 1e9);
        }
        BenchmarksDocument.writeSection(out, HEADING, section);
        System.out.println(section);
        // The servers' threads are not daemons.
        System.exit(0);
    }

    private static String gatewayCa(RunningGateway gateway) throws Exception
    {
        HttpResponse<String> ca = HttpClient.newHttpClient().send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.internalPort() + "/egress/ca.pem")).build(),
            HttpResponse.BodyHandlers.ofString());
        if (ca.statusCode() != 200)
            throw new IllegalStateException("/egress/ca.pem: " + ca.statusCode() + " " + ca.body());
        return ca.body();
    }

    private static SSLContext trusting(String pem) throws Exception
    {
        Certificate ca = CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        store.setCertificateEntry("gateway-ca", ca);
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }

    /** {@value #CLIENTS} clients, each a new CONNECT, TLS handshake and one GET per connection, for {@code seconds}. */
    private static Measure handshakes(RunningGateway gateway, TargetServer target, Mode mode, int seconds) throws Exception
    {
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        Samples samples = new Samples();
        AtomicLong failures = new AtomicLong();
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        List<Future<?>> running = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++)
        {
            running.add(clients.submit(() ->
            {
                while (System.nanoTime() < end)
                {
                    long begin = System.nanoTime();
                    try (Tunnel tunnel = open(gateway, target, mode))
                    {
                        int status = exchange(tunnel, "GET", null, target, true);
                        // A resumed session would skip the handshake this measures.
                        tunnel.tls().getSession().invalidate();
                        if (status != 200)
                            throw new IOException("status " + status);
                        samples.add(System.nanoTime() - begin);
                    }
                    catch (IOException x)
                    {
                        if (failures.incrementAndGet() == 1)
                            System.err.println(mode.name() + ": " + x);
                    }
                }
                return null;
            }));
        }
        for (Future<?> run : running)
            run.get();
        clients.shutdown();
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (failures.get() > 0)
            throw new IllegalStateException(mode.name() + ": " + failures.get() + " failed connections");
        return new Measure(samples.size(), elapsed, samples.sorted());
    }

    /** 1 KB POSTs one after another inside one tunnel opened beforehand, for {@code seconds}. */
    private static Measure requests(RunningGateway gateway, TargetServer target, Mode mode, int seconds) throws Exception
    {
        Samples samples = new Samples();
        try (Tunnel tunnel = open(gateway, target, mode))
        {
            long start = System.nanoTime();
            long end = start + seconds * 1_000_000_000L;
            long now = start;
            while (now < end)
            {
                int status = exchange(tunnel, "POST", KILOBYTE, target, false);
                if (status != 200)
                    throw new IllegalStateException(mode.name() + ": status " + status);
                long done = System.nanoTime();
                samples.add(done - now);
                now = done;
            }
            return new Measure(samples.size(), (now - start) / 1e9, samples.sorted());
        }
    }

    /** A CONNECT through the gateway's internal listener, then TLS with the host's name checked. */
    private static Tunnel open(RunningGateway gateway, TargetServer target, Mode mode) throws IOException
    {
        Socket socket = new Socket("127.0.0.1", gateway.internalPort());
        try
        {
            socket.setTcpNoDelay(true);
            String authority = HOST + ":" + target.httpsPort();
            String connect = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n"
                + (mode.taskType() == null ? "" : "X-Agent-Task-Type: " + mode.taskType() + "\r\n") + "\r\n";
            socket.getOutputStream().write(connect.getBytes(StandardCharsets.US_ASCII));
            String head = head(socket.getInputStream());
            if (!head.startsWith("HTTP/1.1 200"))
                throw new IOException("CONNECT: " + head);
            SSLSocket tls = (SSLSocket)mode.trust().getSocketFactory().createSocket(socket, HOST, target.httpsPort(), true);
            SSLParameters parameters = tls.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            parameters.setApplicationProtocols(new String[]{"http/1.1"});
            tls.setSSLParameters(parameters);
            tls.startHandshake();
            return new Tunnel(tls, new BufferedInputStream(tls.getInputStream(), 16 * 1024));
        }
        catch (IOException | RuntimeException x)
        {
            socket.close();
            throw x;
        }
    }

    /** One HTTP/1.1 request on {@code tls}; the answer read whole (Content-Length or chunked); its status. */
    private static int exchange(Tunnel tunnel, String method, byte[] body, TargetServer target, boolean close) throws IOException
    {
        StringBuilder request = new StringBuilder(method).append(" /echo HTTP/1.1\r\nHost: ").append(HOST).append(':').append(target.httpsPort()).append("\r\n");
        if (body != null)
            request.append("Content-Type: text/plain\r\nContent-Length: ").append(body.length).append("\r\n");
        if (close)
            request.append("Connection: close\r\n");
        OutputStream output = tunnel.tls().getOutputStream();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.write(request.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
        if (body != null)
            bytes.write(body);
        output.write(bytes.toByteArray());
        output.flush();
        InputStream input = tunnel.input();
        String head = head(input);
        int status = Integer.parseInt(head.substring(9, 12));
        Matcher length = Pattern.compile("(?im)^content-length:\\s*(\\d+)").matcher(head);
        if (length.find())
            skip(input, Long.parseLong(length.group(1)));
        else if (Pattern.compile("(?im)^transfer-encoding:\\s*chunked").matcher(head).find())
        {
            long size;
            do
            {
                size = Long.parseLong(line(input).split(";")[0].trim(), 16);
                skip(input, size);
                line(input);
            }
            while (size > 0);
        }
        else if (close)
            input.transferTo(OutputStream.nullOutputStream());
        return status;
    }

    private static String head(InputStream input) throws IOException
    {
        StringBuilder head = new StringBuilder();
        String line;
        while (!(line = line(input)).isEmpty())
            head.append(line).append('\n');
        return head.toString();
    }

    private static String line(InputStream input) throws IOException
    {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = input.read()) != '\n')
        {
            if (c < 0)
                throw new IOException("closed mid-answer");
            if (c != '\r')
                line.append((char)c);
        }
        return line.toString();
    }

    private static void skip(InputStream input, long bytes) throws IOException
    {
        input.skipNBytes(bytes);
    }

    private static double counter(RunningGateway gateway, String pattern) throws Exception
    {
        String metrics = HttpClient.newHttpClient().send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.internalPort() + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString()).body();
        Matcher line = Pattern.compile("(?m)^" + pattern + " (\\S+)$").matcher(metrics);
        double sum = 0;
        while (line.find())
            sum += Double.parseDouble(line.group(1));
        return sum;
    }

    private static Measure merged(List<Measure> rounds)
    {
        long count = 0;
        double seconds = 0;
        List<long[]> all = new ArrayList<>();
        for (Measure round : rounds)
        {
            count += round.count();
            seconds += round.seconds();
            all.add(round.sorted());
        }
        long[] sorted = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        return new Measure(count, seconds, sorted);
    }

    /** Each round's inspected/blind rate, sorted. */
    private static double[] ratios(List<List<Measure>> measures)
    {
        double[] ratios = new double[measures.get(0).size()];
        for (int i = 0; i < ratios.length; i++)
            ratios[i] = measures.get(1).get(i).perSecond() / measures.get(0).get(i).perSecond();
        Arrays.sort(ratios);
        return ratios;
    }

    private static String section(int rounds, int seconds, List<Mode> modes, List<String> peers, List<List<Measure>> handshakes, List<List<Measure>> requests,
        double okHandshakes, double failedHandshakes, double runSeconds)
    {
        StringBuilder text = new StringBuilder(HEADING).append("\n\n")
            .append("One gateway, one egress node (`ForwardProxy`), one HTTPS target, the same host (`localhost`), in one run on ")
            .append(java.time.LocalDate.now()).append(": a CONNECT whose route has `inspect: true` (the task type on the CONNECT picks it) against a blind one. ")
            .append("Handshakes: each connection is a new CONNECT, a full TLS handshake (the client drops its session, so none is resumed) and one small GET, ")
            .append(CLIENTS).append(" clients at once; the inspected client trusts only the gateway's CA from `/egress/ca.pem`, the blind one only the target's certificate, and the leaf for the host was minted during the warm-up. ")
            .append("Requests: 1 KB POSTs to the target's echo, one at a time inside one kept-alive tunnel. ")
            .append(rounds).append(" rounds of ").append(seconds).append(" s per measure and side after ").append(WARMUP_SECONDS)
            .append(" s of warm-up, interleaved (the order alternates each round); ").append(String.format(Locale.ROOT, "%.0f", runSeconds)).append(" s in all. ")
            .append("Clients, gateway, node and target share one JVM and the machine's ").append(Runtime.getRuntime().availableProcessors())
            .append(" cores; Java ").append(System.getProperty("java.version")).append(".\n")
            .append("Command: `java -cp target/test-classes:target/classes:$(cat CLASSPATH_FILE) io.sandgate.bench.EgressInspectBenchmark ")
            .append(rounds).append(' ').append(seconds).append("`\n\n")
            .append("| measure | blind tunnel | inspected tunnel | inspected / blind (rounds) |\n|---|---|---|---|\n");
        Measure blindHandshakes = merged(handshakes.get(0));
        Measure inspectedHandshakes = merged(handshakes.get(1));
        Measure blindRequests = merged(requests.get(0));
        Measure inspectedRequests = merged(requests.get(1));
        double[] handshakeRatios = ratios(handshakes);
        double[] requestRatios = ratios(requests);
        row(text, "connections/s (CONNECT + TLS handshake + GET), " + CLIENTS + " clients", blindHandshakes.perSecond(), inspectedHandshakes.perSecond(), "%.0f",
            String.format(Locale.ROOT, "%.2fx (%.2f-%.2f)", inspectedHandshakes.perSecond() / blindHandshakes.perSecond(), handshakeRatios[0], handshakeRatios[handshakeRatios.length - 1]));
        row(text, "connection p50 ms", Samples.millis(blindHandshakes.sorted(), 0.5), Samples.millis(inspectedHandshakes.sorted(), 0.5), "%.2f", ratio(blindHandshakes, inspectedHandshakes, 0.5));
        row(text, "connection p99 ms", Samples.millis(blindHandshakes.sorted(), 0.99), Samples.millis(inspectedHandshakes.sorted(), 0.99), "%.2f", ratio(blindHandshakes, inspectedHandshakes, 0.99));
        row(text, "1 KB requests/s in one tunnel", blindRequests.perSecond(), inspectedRequests.perSecond(), "%.0f",
            String.format(Locale.ROOT, "%.2fx (%.2f-%.2f)", inspectedRequests.perSecond() / blindRequests.perSecond(), requestRatios[0], requestRatios[requestRatios.length - 1]));
        row(text, "1 KB request p50 ms", Samples.millis(blindRequests.sorted(), 0.5), Samples.millis(inspectedRequests.sorted(), 0.5), "%.3f", ratio(blindRequests, inspectedRequests, 0.5));
        row(text, "1 KB request p99 ms", Samples.millis(blindRequests.sorted(), 0.99), Samples.millis(inspectedRequests.sorted(), 0.99), "%.3f", ratio(blindRequests, inspectedRequests, 0.99));
        text.append('\n').append(String.format(Locale.ROOT,
            "The gateway counted %.0f inspected handshakes that succeeded and %.0f that failed (`sandgate_egress_inspect_handshakes_total`). ", okHandshakes, failedHandshakes))
            .append("The agent's TLS, ").append(String.join("; ", peers)).append(". ")
            .append("A blind connection is a CONNECT through the node, a new TCP connection from the node to the target and the handshake with the target, every time; ")
            .append("an inspected one ends at the gateway (its handshake with the cached leaf) and its requests go to the target over the gateway's pooled connections, ")
            .append("so a new inspected connection costs no more than a blind one. Each request inside an inspected tunnel is decrypted, run through the base-URL pipeline ")
            .append("(route, credential, leak scan of the 1 KB body, node selection, metrics) and encrypted again towards the target, where a blind tunnel only relays bytes: ")
            .append("that is the price per request, paid on the gateway's cores.\n");
        return text.toString();
    }

    private static String ratio(Measure blind, Measure inspected, double q)
    {
        return String.format(Locale.ROOT, "%.2fx", Samples.millis(inspected.sorted(), q) / Samples.millis(blind.sorted(), q));
    }

    private static void row(StringBuilder text, String measure, double blind, double inspected, String format, String ratio)
    {
        text.append("| ").append(measure).append(" | ").append(String.format(Locale.ROOT, format, blind)).append(" | ")
            .append(String.format(Locale.ROOT, format, inspected)).append(" | ").append(ratio).append(" |\n");
    }
}
