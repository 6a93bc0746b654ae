package io.sandgate.testing;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The {@code curl} command line as an agent in a sandbox runs it: {@code HTTPS_PROXY} names the
 * gateway, and the CAs it trusts come from the environment only ({@code CURL_CA_BUNDLE}); nothing
 * of the test JVM's environment about proxies or CAs is passed on.
 *
 * @param status the HTTP status curl got, 0 when it got none
 * @param exit curl's exit code (60: the peer's certificate was not trusted)
 * @param body the response body
 * @param error what curl wrote on its error output
 */
public record Curl(int status, int exit, String body, String error)
{
    /** The system's CAs, which know neither a gateway's CA nor a test certificate. */
    public static final Path SYSTEM_CAS = Path.of("/etc/ssl/certs/ca-certificates.crt");

    /**
     * Runs curl through the proxy at {@code 127.0.0.1:proxyPort}.
     *
     * @param work a scratch directory for the body and the error output
     * @param caBundle the only CAs curl trusts
     */
    public static Curl viaProxy(Path work, int proxyPort, Path caBundle, String... arguments) throws Exception
    {
        return viaProxy(work, "http://127.0.0.1:" + proxyPort, caBundle, arguments);
    }

    /**
     * Runs curl with {@code HTTPS_PROXY} set to {@code proxyUrl}, which may carry a user and password
     * ({@code http://agent:token@127.0.0.1:port}) that curl sends as {@code Proxy-Authorization}.
     */
    public static Curl viaProxy(Path work, String proxyUrl, Path caBundle, String... arguments) throws Exception
    {
        Path body = Files.createTempFile(work, "curl", ".body");
        Path error = Files.createTempFile(work, "curl", ".err");
        List<String> command = new ArrayList<>(List.of("curl", "-sS", "--max-time", "20", "-o", body.toString(), "-w", "%{http_code}"));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command);
        Map<String, String> environment = builder.environment();
        environment.keySet().removeIf(name -> name.toLowerCase(Locale.ROOT).endsWith("_proxy") || name.startsWith("SSL_CERT_") || name.equals("CURL_CA_BUNDLE"));
        environment.put("HTTPS_PROXY", proxyUrl);
        environment.put("CURL_CA_BUNDLE", caBundle.toString());
        builder.redirectError(error.toFile());
        Process process = builder.start();
        String out;
        try (InputStream stdout = process.getInputStream())
        {
            out = new String(stdout.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
        if (!process.waitFor(30, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IllegalStateException("curl did not finish within 30 s");
        }
        return new Curl(out.isEmpty() ? 0 : Integer.parseInt(out), process.exitValue(), Files.readString(body), Files.readString(error));
    }

    /** Status, body and error output, for assertion messages. */
    public String describe()
    {
        return "status " + status + ", exit " + exit + ": " + error + body;
    }
}
