package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.Curl;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Inspected tunnels on two replicas sharing a Redis store: both sign with the CA the first one
 * generated, so a client that trusts the CA fetched from one replica is served by the other; and
 * a target the gateway cannot verify is a 502 inside the tunnel, never a silent downgrade.
 */
@ExtendWith(WorkDirExtension.class)
class EgressInspectionReplicasIT
{
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private RedisServerProcess redis;
    private TargetServer target;
    private ForwardProxy node;
    private Path work;
    /** Whether the next gateway started trusts the target's certificate. */
    private boolean trustTarget = true;

    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(config ->
    {
        config.redisStore(redis);
        if (trustTarget)
            config.trustStoreOf(target);
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.connect-ports", "443," + target.httpsPort());
        config.set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("localhost")), "upstream", "p", "inspect", true)));
        config.set("egress.pools", Map.of("p", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))));
    });

    @BeforeEach
    void start(WorkDir workDir)
    {
        work = workDir.getEmptyPathDir();
        redis = RedisServerProcess.start();
        target = TargetServer.start();
        node = ForwardProxy.start("n1");
    }

    @AfterEach
    void stop()
    {
        node.close();
        target.close();
        redis.close();
    }

    private Path caOf(Gateway gateway, String file) throws Exception
    {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.internalUri("/egress/ca.pem")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode());
        return Files.writeString(work.resolve(file), response.body());
    }

    private String url()
    {
        return "https://localhost:" + target.httpsPort() + "/echo";
    }

    @Test
    void twoReplicas_signWithTheSameCa_aClientOfOneIsServedByTheOther() throws Exception
    {
        RunningGateway a = gateways.startAnother();
        RunningGateway b = gateways.startAnother();
        Path caOfA = caOf(a, "a.pem");
        assertEquals(Files.readString(caOfA), Files.readString(caOf(b, "b.pem")), "one CA for both replicas");
        Curl viaA = Curl.viaProxy(work, a.internalPort(), caOfA, url());
        assertEquals(200, viaA.status(), viaA.describe());
        // The same client, trusting only what replica A served, reconnects through B.
        Curl viaB = Curl.viaProxy(work, b.internalPort(), caOfA, url());
        assertEquals(200, viaB.status(), viaB.describe());
        assertEquals(2, target.requests().size());
        // A restarted replica adopts the stored CA rather than making its own.
        a.close();
        RunningGateway c = gateways.startAnother();
        assertEquals(Files.readString(caOfA), Files.readString(caOf(c, "c.pem")));
    }

    @Test
    void targetTheGatewayCannotVerify_is502_andNothingIsSent() throws Exception
    {
        trustTarget = false;
        RunningGateway gateway = gateways.startAnother();
        Curl answer = Curl.viaProxy(work, gateway.internalPort(), caOf(gateway, "ca.pem"), url());
        assertEquals(502, answer.status(), answer.describe());
        assertTrue(target.requests().isEmpty(), "the target's self-signed certificate is not trusted: no request reaches it");
    }
}
