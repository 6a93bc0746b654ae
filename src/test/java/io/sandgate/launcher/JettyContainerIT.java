package io.sandgate.launcher;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged WAR in a real Jetty 12 distribution (jetty-home from Maven Central) with the
 * modules an operator would enable (http, ee10-deploy, ee10-websocket-jakarta), configured only by
 * init parameters in the context XML.
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
            "--add-modules=http,ee10-deploy,ee10-websocket-jakarta")
            .directory(base.toFile()).redirectErrorStream(true).redirectOutput(base.resolve("modules.log").toFile()).start();
        assertEquals(0, modules.waitFor(), Files.readString(base.resolve("modules.log")));
        Files.createDirectories(base.resolve("webapps"));
        Files.copy(war(), base.resolve("webapps/sandgate.war"));
        Files.writeString(base.resolve("webapps/sandgate.xml"), """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE Configure PUBLIC "-//Jetty//Configure//EN" "https://jetty.org/configure_10_0.dtd">
            <Configure class="org.eclipse.jetty.ee10.webapp.WebAppContext">
              <Set name="contextPath">/sandgate</Set>
              <Set name="war"><Property name="jetty.webapps" default="."/>/sandgate.war</Set>
              <Call name="setInitParameter"><Arg>sandgate.ingress.static-routes</Arg><Arg>42=%s,43=%s</Arg></Call>
              <Call name="setInitParameter"><Arg>sandgate.ingress.cookie.secret</Arg><Arg>jetty-secret-0123456789abcdef</Arg></Call>
            </Configure>
            """.formatted(http.hostPort(), ws.hostPort()));
        startContainer(new ProcessBuilder(java.toString(), "-jar", home.resolve("start.jar").toString(), "jetty.http.port=" + port, "jetty.http.host=127.0.0.1")
            .directory(base.toFile()).redirectErrorStream(true).redirectOutput(base.resolve("console.log").toFile()));
    }

    @Test
    void httpIngress_throughTheWarInJetty() throws Exception
    {
        HttpResponse<String> response = get(port, "/sandgate/vnc/42/echo");
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().startsWith("backend=jetty-http"), response.body());
    }

    @Test
    void webSocketBridge_onJettysWebSocketModule() throws Exception
    {
        CompletableFuture<String> greeting = greeting(port, "/sandgate/vnc/43/websockify");
        assertEquals("hello from jetty-ws", greeting.get(10, TimeUnit.SECONDS));
    }
}
