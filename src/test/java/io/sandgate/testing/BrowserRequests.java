package io.sandgate.testing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Requests to a gateway as a browser sends them, for ITs that look at statuses, redirects and cookies. */
public final class BrowserRequests
{
    /**
     * HTTP/1.1 as browsers speak it to a plain-HTTP origin (the JDK would try an h2c upgrade); redirects
     * are not followed, so a test sees the 30x and the cookies it sets.
     */
    public static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .followRedirects(HttpClient.Redirect.NEVER).build();

    private BrowserRequests()
    {
    }

    /**
     * @param base    the gateway's {@code uri()}
     * @param path    absolute, with its query if any
     * @param headers name, value, name, value, ...
     */
    public static HttpResponse<String> get(URI base, String path, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A POST of an octet stream, as an upload from a page sends it; {@code base} and {@code path} as for {@link #get}. */
    public static HttpResponse<String> post(URI base, String path, HttpRequest.BodyPublisher body) throws Exception
    {
        return CLIENT.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10)).POST(body)
            .header("Content-Type", "application/octet-stream").build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Which sandbox served the path through the gateway: the {@code X-Backend} name of a
     * {@link SandboxBackend}, else the status, or the failure; never throws, for use in awaits and
     * in loops that run through a fault.
     */
    public static String servedBy(Gateway gateway, String path)
    {
        try
        {
            HttpResponse<String> response = get(gateway.uri(), path);
            if (response.statusCode() != 200)
                return Integer.toString(response.statusCode());
            return response.headers().firstValue("X-Backend").orElse("?");
        }
        catch (Exception x)
        {
            return x.toString();
        }
    }

    /** The gateway's session cookie as the browser sends it back: {@code vnc_session_id=<value>}. */
    public static String sessionCookie(HttpResponse<?> response)
    {
        String setCookie = response.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("vnc_session_id="))
            .findFirst().orElseThrow(() -> new AssertionError("no session cookie in " + response.headers()));
        return setCookie.substring(0, setCookie.indexOf(';'));
    }
}
