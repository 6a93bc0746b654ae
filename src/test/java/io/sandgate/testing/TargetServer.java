package io.sandgate.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.toolchain.test.FS;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * A real web server that agents reach through egress: one plain HTTP and one HTTPS connector, both
 * on 127.0.0.1 and ephemeral ports, serving the same routes. The HTTPS certificate is self-signed,
 * generated once per JVM with the JDK's {@code keytool} (EC P-256, SAN {@code IP:127.0.0.1} and
 * {@code DNS:localhost}), so no private key is committed; clients are told to trust it with
 * {@link #trustStore()} / {@link #trustStorePassword()} or the ready-made
 * {@link #newClientSslContextFactory()}.
 *
 * <p>Routes:
 * <ul>
 *   <li>{@code /echo} - {@code scheme=}, {@code protocol=} (the HTTP version the target was spoken to in),
 *       {@code method=}, {@code path=}, {@code via=} (the Via header
 *       received, empty if none), then every request header as {@code h:<lower-case name>=<value>},
 *       then {@code body=}.</li>
 *   <li>{@code /stream?events=N&intervalMs=M} - {@code text/event-stream}; N events
 *       ({@code id: i} / {@code data: event-i}), each flushed on its own, M ms apart.</li>
 *   <li>{@code /status/<code>} - that status.</li>
 *   <li>{@code /big?bytes=N} - N bytes of {@code 0123456789...} with a Content-Length.</li>
 *   <li>{@code /slow?ms=N} - {@code slow} after N ms, to tell target slowness from proxy delay.</li>
 *   <li>{@code /encoded-echo?encoding=E} - the echo's {@code scheme=}, {@code path=}, {@code via=},
 *       headers and body, with {@code Content-Encoding: E} whatever the request accepts: gzip and
 *       deflate (zlib) compressed, any other value only claimed.</li>
 *   <li>{@code /bomb?mb=N} - N megabytes of zeros gzipped (about N KB on the wire), {@code Content-Encoding: gzip}.</li>
 * </ul>
 * Every response carries {@code X-Target: http|https}; every request is recorded.
 */
public final class TargetServer implements RecordsRequests<TargetServer.Recorded>, AutoCloseable
{
    /** One request as received; header names are case-insensitive, as in HTTP. */
    public record Recorded(String scheme, String protocol, String method, String pathAndQuery,
                           Map<String, List<String>> headers, String body) implements RecordedHeaders
    {
    }

    private final Server server;
    private final ServerConnector http;
    private final ServerConnector https;
    private final List<Recorded> requests = new CopyOnWriteArrayList<>();

    private TargetServer()
    {
        server = LoopbackServers.server("target");
        http = LoopbackServers.connector(server);

        HttpConfiguration httpsConfig = new HttpConfiguration();
        SecureRequestCustomizer secure = new SecureRequestCustomizer();
        // Clients reach the server by IP; no SNI is sent for IP literals, so there is nothing to check.
        secure.setSniHostCheck(false);
        httpsConfig.addCustomizer(secure);
        SslContextFactory.Server ssl = new SslContextFactory.Server();
        ssl.setKeyStorePath(TestCertificate.get().keyStore.toString());
        ssl.setKeyStorePassword(TestCertificate.PASSWORD);
        ssl.setKeyStoreType("PKCS12");
        https = LoopbackServers.connector(server, new SslConnectionFactory(ssl, "http/1.1"), new HttpConnectionFactory(httpsConfig));

        server.setHandler(new TargetHandler());
    }

    public static TargetServer start()
    {
        TargetServer target = new TargetServer();
        LoopbackServers.start(target.server, target::close, "target server");
        return target;
    }

    public int httpPort()
    {
        return http.getLocalPort();
    }

    public int httpsPort()
    {
        return https.getLocalPort();
    }

    /** {@code http://127.0.0.1:<httpPort><pathAndQuery>}. */
    public String httpUrl(String pathAndQuery)
    {
        return "http://127.0.0.1:" + httpPort() + pathAndQuery;
    }

    /** {@code https://127.0.0.1:<httpsPort><pathAndQuery>}. */
    public String httpsUrl(String pathAndQuery)
    {
        return "https://127.0.0.1:" + httpsPort() + pathAndQuery;
    }

    /**
     * A PKCS12 trust store holding only the test certificate (a trusted-certificate entry, no key).
     * Shared by every TargetServer of this JVM and deleted on exit.
     */
    public Path trustStore()
    {
        return TestCertificate.get().trustStore;
    }

    public String trustStorePassword()
    {
        return TestCertificate.PASSWORD;
    }

    public String trustStoreType()
    {
        return "PKCS12";
    }

    /** The test certificate as a loaded trust store, e.g. for {@code SslContextFactory.setTrustStore}. */
    public KeyStore trustKeyStore()
    {
        return TestCertificate.get().loadTrustStore();
    }

    /**
     * A client SSL context trusting only the test certificate, for clients that take an
     * {@link SSLContext} (java.net.http, or {@code SslContextFactory.setSslContext}).
     */
    public SSLContext clientTrust()
    {
        try
        {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trustKeyStore());
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        }
        catch (GeneralSecurityException e)
        {
            throw new IllegalStateException("cannot build an SSLContext trusting the test certificate", e);
        }
    }

    /**
     * What a Jetty {@code HttpClient} needs: trusts only the test certificate, with endpoint
     * identification left at Jetty's default (HTTPS), which the certificate's IP SAN satisfies.
     * Use as {@code new HttpClient()} + {@code client.setSslContextFactory(...)} before start, or on
     * the {@code ClientConnector} the client is built with.
     */
    public SslContextFactory.Client newClientSslContextFactory()
    {
        SslContextFactory.Client ssl = new SslContextFactory.Client();
        ssl.setTrustStorePath(trustStore().toString());
        ssl.setTrustStorePassword(trustStorePassword());
        ssl.setTrustStoreType(trustStoreType());
        return ssl;
    }

    @Override
    public List<Recorded> requestLog()
    {
        return requests;
    }

    @Override
    public void close()
    {
        LoopbackServers.stop(server, "target server");
    }

    /*
     * Handler.Abstract is BLOCKING by default, so handle() runs on a pooled thread and may read the
     * (small) request body synchronously; all writes are callback-driven.
     */
    private final class TargetHandler extends Handler.Abstract
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            String body = Content.Source.asString(request, StandardCharsets.UTF_8);
            String scheme = request.isSecure() ? "https" : "http";
            requests.add(new Recorded(scheme, request.getConnectionMetaData().getProtocol(), request.getMethod(),
                    request.getHttpURI().getPathQuery(), CommonRoutes.copyHeaders(request), body));
            response.getHeaders().put("X-Target", scheme);

            String path = Request.getPathInContext(request);
            if (path.equals("/echo"))
            {
                echo(request, scheme, body, response, callback);
            }
            else if (path.equals("/encoded-echo"))
            {
                encodedEcho(request, scheme, body, response, callback);
            }
            else if (path.equals("/bomb"))
            {
                bomb(request, response, callback);
            }
            else if (path.equals("/stream"))
            {
                stream(request, response, callback);
            }
            else if (path.equals("/hints"))
            {
                // 103 Early Hints, as CDNs send them before the answer.
                response.writeInterim(HttpStatus.EARLY_HINTS_103, HttpFields.build().add(HttpHeader.LINK, "</style.css>; rel=preload"))
                    .whenComplete((ignored, failure) -> CommonRoutes.text(response, callback, "final"));
            }
            else if (!CommonRoutes.handle(path, request, response, callback, server.getScheduler()))
            {
                Response.writeError(request, response, callback, HttpStatus.NOT_FOUND_404);
            }
            return true;
        }

        private void echo(Request request, String scheme, String body, Response response, Callback callback)
        {
            String via = request.getHeaders().get(HttpHeader.VIA);
            CommonRoutes.text(response, callback, CommonRoutes.echo(new StringBuilder()
                    .append("scheme=").append(scheme).append('\n')
                    .append("protocol=").append(request.getConnectionMetaData().getProtocol()).append('\n')
                    .append("method=").append(request.getMethod()).append('\n')
                    .append("path=").append(request.getHttpURI().getPathQuery()).append('\n')
                    .append("via=").append(via == null ? "" : via).append('\n'), request, body));
        }

        /*
         * A target that compresses whatever the client asked for (Accept-Encoding: identity
         * included), as some do: the echo in the encoding the query names, gzip and deflate
         * really compressed, any other name only claimed.
         */
        private void encodedEcho(Request request, String scheme, String body, Response response, Callback callback) throws IOException
        {
            String encoding = Request.extractQueryParameters(request).getValue("encoding");
            String via = request.getHeaders().get(HttpHeader.VIA);
            byte[] text = CommonRoutes.echo(new StringBuilder()
                    .append("scheme=").append(scheme).append('\n')
                    .append("path=").append(request.getHttpURI().getPathQuery()).append('\n')
                    .append("via=").append(via == null ? "" : via).append('\n'), request, body).getBytes(StandardCharsets.UTF_8);
            ByteArrayOutputStream encoded = new ByteArrayOutputStream();
            try (OutputStream out = "gzip".equals(encoding) ? new GZIPOutputStream(encoded) : "deflate".equals(encoding) ? new DeflaterOutputStream(encoded) : encoded)
            {
                out.write(text);
            }
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
            response.getHeaders().put(HttpHeader.CONTENT_ENCODING, encoding);
            response.write(true, ByteBuffer.wrap(encoded.toByteArray()), callback);
        }

        /*
         * A decompression bomb: `mb` gzip members of 1 MB of zeros each, about a thousandth of that
         * on the wire. One member is compressed and repeated (RFC 1952 allows a series of them):
         * compressing hundreds of megabytes would cost the test seconds.
         */
        private void bomb(Request request, Response response, Callback callback) throws IOException
        {
            long members = CommonRoutes.parameter(request, "mb", -1);
            if (members < 0)
            {
                CommonRoutes.badRequest(response, callback, "mb must be a non-negative number");
                return;
            }
            ByteArrayOutputStream member = new ByteArrayOutputStream();
            try (GZIPOutputStream out = new GZIPOutputStream(member))
            {
                out.write(new byte[1024 * 1024]);
            }
            ByteArrayOutputStream encoded = new ByteArrayOutputStream();
            for (long i = 0; i < members; i++)
                member.writeTo(encoded);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
            response.getHeaders().put(HttpHeader.CONTENT_ENCODING, "gzip");
            response.write(true, ByteBuffer.wrap(encoded.toByteArray()), callback);
        }

        private void stream(Request request, Response response, Callback callback)
        {
            long events = CommonRoutes.parameter(request, "events", 3);
            long interval = CommonRoutes.parameter(request, "intervalMs", 100);
            if (events < 0 || interval < 0)
            {
                CommonRoutes.badRequest(response, callback, "events and intervalMs must be non-negative numbers");
                return;
            }
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
            sendEvent(response, callback, 1, events, interval);
        }

        /*
         * Each event is a separate non-last write, which Jetty's core API sends to the socket at
         * once; the next one is scheduled only when the previous write completed, so a slow reader
         * cannot make events pile up. The first event goes out right away.
         */
        private void sendEvent(Response response, Callback callback, long index, long total, long interval)
        {
            if (index > total)
            {
                response.write(true, null, callback);
                return;
            }
            String event = "id: " + index + "\ndata: event-" + index + "\n\n";
            Content.Sink.write(response, false, event, Callback.from(
                    () -> server.getScheduler().schedule(
                            () -> sendEvent(response, callback, index + 1, total, interval),
                            index == total ? 0 : interval, TimeUnit.MILLISECONDS),
                    callback::failed));
        }
    }

    /**
     * The self-signed key pair and its trust store, made once per JVM: keytool costs about a second
     * (a JVM start), which every test class would otherwise pay again.
     */
    private static final class TestCertificate
    {
        static final String PASSWORD = "sandgate-test";
        private static TestCertificate instance;

        final Path directory;
        final Path keyStore;
        final Path trustStore;

        private TestCertificate(Path directory)
        {
            this.directory = directory;
            this.keyStore = directory.resolve("target-key.p12");
            this.trustStore = directory.resolve("target-trust.p12");
        }

        /**
         * The JDK's PKCS12 settings for one round of each key derivation instead of 10 000: every
         * server and client of a test reads these files, and the test JVMs (C1 only, without the
         * SHA intrinsics) spent more CPU on those rounds than on anything else.
         */
        private static final Map<String, String> PKCS12_CHEAP = Map.of("keystore.pkcs12.macIterationCount", "1",
            "keystore.pkcs12.keyPbeIterationCount", "1", "keystore.pkcs12.certPbeIterationCount", "1");

        static synchronized TestCertificate get()
        {
            if (instance == null)
            {
                instance = generate();
            }
            return instance;
        }

        private static TestCertificate generate()
        {
            Path directory;
            try
            {
                directory = Files.createTempDirectory(MavenPaths.targetTests(), "target-tls-");
            }
            catch (IOException e)
            {
                throw new UncheckedIOException("cannot create a directory for the test certificate", e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(directory), "target-tls-cleanup"));
            TestCertificate cert = new TestCertificate(directory);
            cert.runKeytool();
            cert.writeTrustStore();
            return cert;
        }

        private void runKeytool()
        {
            // The keytool of the JDK running the tests, so it is there wherever the tests run.
            Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
            List<String> command = new ArrayList<>(List.of(keytool.toString()));
            PKCS12_CHEAP.forEach((name, value) -> command.add("-J-D" + name + "=" + value));
            command.addAll(List.of("-genkeypair", "-noprompt",
                    "-alias", "target",
                    "-keyalg", "EC", "-groupname", "secp256r1", "-sigalg", "SHA256withECDSA",
                    "-dname", "CN=127.0.0.1, O=Sandgate tests",
                    // Hostname verification of Jetty's client (and the JDK's) checks the SAN.
                    "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                    // Back-dated a day so a skewed clock cannot make it "not yet valid".
                    "-startdate", "-1d", "-validity", "30",
                    "-storetype", "PKCS12", "-keystore", keyStore.toString(),
                    "-storepass", PASSWORD, "-keypass", PASSWORD));
            Path output = directory.resolve("keytool.out");
            try
            {
                Process process = new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(output.toFile())
                        .start();
                if (!process.waitFor(30, TimeUnit.SECONDS))
                {
                    process.destroyForcibly();
                    throw new IllegalStateException("keytool did not finish within 30 s");
                }
                if (process.exitValue() != 0)
                {
                    throw new IllegalStateException("keytool failed (" + process.exitValue() + "): "
                            + Files.readString(output));
                }
            }
            catch (IOException e)
            {
                throw new UncheckedIOException("cannot run " + keytool, e);
            }
            catch (InterruptedException e)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while generating the test certificate", e);
            }
        }

        private void writeTrustStore()
        {
            Map<String, String> before = new HashMap<>();
            PKCS12_CHEAP.forEach((name, value) -> before.put(name, System.setProperty(name, value)));
            try (InputStream in = Files.newInputStream(keyStore); OutputStream out = Files.newOutputStream(trustStore))
            {
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(in, PASSWORD.toCharArray());
                Certificate certificate = keys.getCertificate("target");
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                trust.setCertificateEntry("sandgate-test-target", certificate);
                trust.store(out, PASSWORD.toCharArray());
            }
            catch (IOException | GeneralSecurityException e)
            {
                throw new IllegalStateException("cannot write the test trust store", e);
            }
            finally
            {
                before.forEach((name, value) ->
                {
                    if (value == null)
                        System.clearProperty(name);
                    else
                        System.setProperty(name, value);
                });
            }
        }

        KeyStore loadTrustStore()
        {
            try (InputStream in = Files.newInputStream(trustStore))
            {
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(in, PASSWORD.toCharArray());
                return trust;
            }
            catch (IOException | GeneralSecurityException e)
            {
                throw new IllegalStateException("cannot read the test trust store", e);
            }
        }

        private static void deleteQuietly(Path root)
        {
            try
            {
                FS.ensureDeleted(root);
            }
            catch (RuntimeException | AssertionError e)
            {
                // Best effort at JVM exit: a leftover directory under target/ is harmless.
            }
        }
    }
}
