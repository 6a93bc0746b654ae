package io.sandgate.egress;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.sandgate.config.EgressConfig;
import io.sandgate.core.Schedulers;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The active health checks of every egress node: a TCP connect to the node itself every
 * {@code tcpInterval}, and, when a probe URL is configured, an HTTP request through the node every
 * {@code httpInterval}. The timer only hands each node's probe to a worker, so a node that hangs
 * delays no other node's probe; {@link NodeState} draws the conclusions.
 */
final class HealthProber implements AutoCloseable
{
    private final EgressConfig.Health health;
    private final NodePools pools;
    private final NodeClients clients;
    private final Schedulers schedulers;
    private final List<ScheduledFuture<?>> schedules = new ArrayList<>();

    HealthProber(EgressConfig.Health health, NodePools pools, NodeClients clients, Schedulers schedulers)
    {
        this.health = health;
        this.pools = pools;
        this.clients = clients;
        this.schedulers = schedulers;
    }

    /** Starts the probes; the first round runs at once. */
    void start()
    {
        long tcp = health.tcpInterval().toMillis();
        // Each round probes the pools' nodes as they are then, so a reload needs no new schedule.
        schedules.add(schedulers.timer().scheduleWithFixedDelay(() -> tcpProbes(pools.nodes()), 0, tcp, TimeUnit.MILLISECONDS));
        health.httpUrl().ifPresent(url ->
        {
            long http = health.httpInterval().toMillis();
            schedules.add(schedulers.timer().scheduleWithFixedDelay(() -> httpProbes(pools.nodes(), url), 0, http, TimeUnit.MILLISECONDS));
        });
    }

    /**
     * Probes nodes a reload added at once, as start-up does, rather than at the next round: until
     * then they count as healthy. Nodes a reload removed are out of every later round.
     */
    void probeNow(List<NodeState> added)
    {
        tcpProbes(added);
        health.httpUrl().ifPresent(url -> httpProbes(added, url));
    }

    private void tcpProbes(List<NodeState> nodes)
    {
        for (NodeState node : nodes)
            schedulers.workers().execute(() -> node.tcpProbe(tcpProbe(node.node()), System.nanoTime()));
    }

    /** Connects to the node itself: the probe never rides on the traffic it judges. */
    private boolean tcpProbe(EgressConfig.Node node)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(node.host(), node.port()), (int)health.tcpTimeout().toMillis());
            return true;
        }
        catch (Exception x)
        {
            return false;
        }
    }

    private void httpProbes(List<NodeState> nodes, String url)
    {
        for (NodeState node : nodes)
            schedulers.workers().execute(() -> httpProbe(node, url));
    }

    /** Fetches the probe URL through the node: its answer and how long it took judge the node's weight. */
    private void httpProbe(NodeState node, String url)
    {
        long start = System.nanoTime();
        boolean ok;
        try
        {
            ContentResponse response = clients.probe(node).newRequest(url)
                .timeout(health.slowTls().toMillis() * 2, TimeUnit.MILLISECONDS).send();
            ok = response.getStatus() < HttpStatus.BAD_REQUEST_400;
        }
        catch (Exception x)
        {
            ok = false;
        }
        node.httpProbe(ok, System.nanoTime() - start, System.nanoTime());
    }

    /** Stops scheduling probes; a probe under way ends on its own timeout. */
    @Override
    public void close()
    {
        schedules.forEach(schedule -> schedule.cancel(false));
    }
}
