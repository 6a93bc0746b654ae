package io.sandgate.launcher;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.sandgate.testing.RawHttp;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged WAR in a real Jetty 12 distribution (jetty-home from Maven Central) with the
 * modules an operator would enable (http, ee10-deploy), configured by init parameters in the
 * context XML, which also shows Jetty's own classes to the webapp so that WebSocket tunnels can take
 * over the browser's connection (see docs/operations.md, Deploying the WAR).
 */
public class JettyContainerIT extends WarDeployment
{
    @BeforeAll
    static void start(WorkDir workDir) throws Exception
    {
        Path home = containerHome("jetty.home", "jetty-home-");
        prepareContainer("jetty", workDir);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process modules = new ProcessBuilder(java.toString(), "-jar", home.resolve("start.jar").toString(),
            "--add-modules=http,ee10-deploy")
            .directory(base.toFile()).redirectErrorStream(true).redirectOutput(base.resolve("modules.log").toFile()).start();
        assertEquals(0, modules.waitFor(), Files.readString(base.resolve("modules.log")));
        Files.createDirectories(base.resolve("webapps"));
        Files.copy(war(), base.resolve("webapps/sandgate.war"));
        Files.writeString(base.resolve("webapps/sandgate.xml"), context("/sandgate", """
              <Call name="setInitParameter"><Arg>sandgate.ingress.static-routes</Arg><Arg>42=%s,43=%s</Arg></Call>
              <Call name="setInitParameter"><Arg>sandgate.ingress.cookie.secret</Arg><Arg>jetty-secret-0123456789abcdef</Arg></Call>
              <Call name="addHiddenClassMatcher"><Arg><New class="org.eclipse.jetty.util.ClassMatcher"><Arg>
                <Array type="String"><Item>-org.eclipse.jetty.</Item></Array></Arg></New></Arg></Call>
              <Call name="addProtectedClassMatcher"><Arg><New class="org.eclipse.jetty.util.ClassMatcher"><Arg>
                <Array type="String"><Item>org.eclipse.jetty.</Item></Array></Arg></New></Arg></Call>
            """.formatted(http.hostPort(), ws.hostPort())));
        // The same WAR as an operator deploys it without the last two calls: WebSockets are refused, and say why.
        Files.writeString(base.resolve("webapps/hidden.xml"), context("/hidden", """
              <Call name="setInitParameter"><Arg>sandgate.ingress.static-routes</Arg><Arg>43=%s</Arg></Call>
              <Call name="setInitParameter"><Arg>sandgate.mcp.enabled</Arg><Arg>false</Arg></Call>
              <Call name="setInitParameter"><Arg>sandgate.egress.enabled</Arg><Arg>false</Arg></Call>
            """.formatted(ws.hostPort())));
        // A short-lived server: the quick compiler only, as the test JVMs run (the pom's test.jvm.args).
        startContainer(new ProcessBuilder(java.toString(), "-XX:TieredStopAtLevel=1", "-jar", home.resolve("start.jar").toString(), "jetty.http.port=" + port, "jetty.http.host=127.0.0.1")
            .directory(base.toFile()).redirectErrorStream(true).redirectOutput(base.resolve("console.log").toFile()));
    }

    /** A context XML deploying the WAR at this path, with these elements inside. */
    private static String context(String path, String elements)
    {
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE Configure PUBLIC "-//Jetty//Configure//EN" "https://jetty.org/configure_10_0.dtd">
            <Configure class="org.eclipse.jetty.ee10.webapp.WebAppContext">
              <Set name="contextPath">%s</Set>
              <Set name="war"><Property name="jetty.webapps" default="."/>/sandgate.war</Set>
            %s</Configure>
            """.formatted(path, elements);
    }

    @Test
    void httpIngress_throughTheWarInJetty() throws Exception
    {
        HttpResponse<String> response = get(port, "/sandgate/vnc/42/echo");
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().startsWith("backend=jetty-http"), response.body());
    }

    @Test
    void webSocketTunnel_onJettysOwnConnections() throws Exception
    {
        assertEquals(List.of("hello from jetty-ws", "echo:ping-me"), greetingAndEcho(port, "/sandgate/vnc/43/websockify"));
    }

    @Test
    void webSocket_inAContextThatHidesJettysClasses_is501WithTheReason() throws Exception
    {
        await().atMost(Duration.ofSeconds(30)).until(() -> get(port, "/hidden/healthz").statusCode() == 200);
        int before = ws.connections.get();

        RawHttp.Response response = RawHttp.upgrade(port, "127.0.0.1", "/hidden/vnc/43/websockify");

        assertEquals(501, response.status(), response.body());
        assertTrue(response.body().contains("Deploying the WAR"), response.body());
        assertEquals(before, ws.connections.get(), "refused before the sandbox was asked");
    }
}
