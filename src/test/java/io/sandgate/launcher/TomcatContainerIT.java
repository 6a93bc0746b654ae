package io.sandgate.launcher;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;

import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged {@code target/sandgate.war} in a real Tomcat 10.1 (the distribution from Maven
 * Central, unpacked by the build), configured only by context-params: HTTP ingress and the
 * WebSocket tunnel, which takes the browser's connection over with the standard servlet upgrade.
 */
public class TomcatContainerIT extends WarDeployment
{
    @BeforeAll
    static void start(WorkDir workDir) throws Exception
    {
        Path home = containerHome("tomcat.home", "apache-tomcat-");
        prepareContainer("tomcat", workDir);
        for (String dir : new String[]{"conf", "logs", "temp", "work", "webapps", "conf/Catalina/localhost"})
            Files.createDirectories(base.resolve(dir));
        try (Stream<Path> files = Files.list(home.resolve("conf")))
        {
            for (Path file : files.filter(Files::isRegularFile).toList())
                Files.copy(file, base.resolve("conf").resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
        Path serverXml = base.resolve("conf/server.xml");
        Files.writeString(serverXml, Files.readString(serverXml)
            .replace("port=\"8005\"", "port=\"-1\"")
            .replace("port=\"8080\"", "port=\"" + port + "\""));
        Files.copy(war(), base.resolve("webapps/sandgate.war"));
        // Configuration only through context-params, as an operator would give them.
        Files.writeString(base.resolve("conf/Catalina/localhost/sandgate.xml"), """
            <Context>
              <Parameter name="sandgate.ingress.static-routes" value="42=%s,43=%s" override="false"/>
              <Parameter name="sandgate.ingress.cookie.secret" value="tomcat-secret-0123456789abcdef" override="false"/>
            </Context>
            """.formatted(http.hostPort(), ws.hostPort()));
        ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/catalina.sh").toString(), "run")
            .redirectErrorStream(true)
            .redirectOutput(base.resolve("logs/console.log").toFile());
        builder.environment().put("CATALINA_HOME", home.toString());
        builder.environment().put("CATALINA_BASE", base.toString());
        builder.environment().put("CATALINA_PID", base.resolve("tomcat.pid").toString());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        // A short-lived server: the quick compiler only, as the test JVMs run (the pom's test.jvm.args).
        builder.environment().put("CATALINA_OPTS", "-XX:TieredStopAtLevel=1");
        startContainer(builder);
    }

    @Test
    void httpIngress_throughTheWarInTomcat() throws Exception
    {
        HttpResponse<String> response = get(port, "/sandgate/vnc/42/echo");
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().startsWith("backend=tomcat-http"), response.body());
        assertTrue(response.body().contains("path=/echo"), response.body());
        String cookie = response.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("vnc_session_id=")).findFirst().orElseThrow();
        assertTrue(cookie.contains("Path=/sandgate/vnc/"), cookie);
    }

    @Test
    void webSocketTunnel_onTomcatsServletUpgrade() throws Exception
    {
        assertEquals(List.of("hello from tomcat-ws", "echo:ping-me"), greetingAndEcho(port, "/sandgate/vnc/43/websockify"));
        assertEquals("/websockify", ws.lastPath.get());
    }
}
