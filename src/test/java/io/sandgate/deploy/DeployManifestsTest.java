package io.sandgate.deploy;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import io.sandgate.config.ConfigLoader;
import io.sandgate.config.DrainConfig;
import io.sandgate.config.IngressConfig;
import io.sandgate.config.SandgateConfig;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Kubernetes manifests under deploy/ stay true to the code: they parse, the ConfigMap holds a
 * configuration Sandgate accepts, and the NetworkPolicies keep the trust boundary. That the alert
 * rules read metrics the gateway exports is {@link MonitoringIT}'s to check.
 */
@ExtendWith(WorkDirExtension.class)
class DeployManifestsTest
{
    private static final Path DEPLOY = MavenPaths.projectBase().resolve("deploy/kubernetes");

    private static List<Object> documents() throws Exception
    {
        List<Object> documents = new ArrayList<>();
        try (Stream<Path> files = Files.list(DEPLOY))
        {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList())
            {
                try (Reader reader = Files.newBufferedReader(file))
                {
                    new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(reader).forEach(documents::add);
                }
            }
        }
        return documents;
    }

    /** The configuration the ConfigMap holds, loaded as the gateway loads it. */
    private static SandgateConfig shippedConfig(WorkDir workDir) throws Exception
    {
        String yaml = null;
        for (Object document : documents())
        {
            Map<?, ?> map = (Map<?, ?>)document;
            if ("ConfigMap".equals(map.get("kind")))
                yaml = (String)((Map<?, ?>)map.get("data")).get("sandgate.yaml");
        }
        Path file = workDir.getEmptyPathDir().resolve("sandgate.yaml");
        Files.writeString(file, yaml);
        return ConfigLoader.load(Map.of(), Map.of("sandgate.config", file.toString()), Map.of());
    }

    @Test
    void manifestsParse_andTheConfigMapIsAValidSandgateConfig(WorkDir workDir) throws Exception
    {
        List<Object> documents = documents();
        assertTrue(documents.size() >= 7, "documents: " + documents.size());
        SandgateConfig config = shippedConfig(workDir);
        assertTrue(config.watcher().enabled());
        assertEquals(List.of("sandboxes"), config.watcher().namespaces());
        // The trust boundary as shipped: grants required, MCP/egress/admin/metrics off the public port.
        assertEquals(IngressConfig.Access.SIGNED, config.ingress().access());
        assertEquals(Optional.of(8081), config.server().internalPort());
        assertEquals(8080, config.server().port());
    }

    /**
     * A rolling update drains each pod (SIGTERM): the kubelet's SIGKILL must not come before the
     * drain's own timeout, and the readiness probe, which is how an admin drain takes the pod out,
     * must see the 503 well inside the grace.
     */
    @Test
    void terminationGracePeriod_outlastsTheDrain_andReadinessNoticesItWithinTheGrace(WorkDir workDir) throws Exception
    {
        DrainConfig drain = shippedConfig(workDir).drain();
        Map<?, ?> pod = null;
        for (Object document : documents())
        {
            Map<?, ?> map = (Map<?, ?>)document;
            if ("Deployment".equals(map.get("kind")))
                pod = (Map<?, ?>)((Map<?, ?>)((Map<?, ?>)map.get("spec")).get("template")).get("spec");
        }
        Map<?, ?> container = (Map<?, ?>)((List<?>)pod.get("containers")).get(0);
        int preStop = (Integer)((Map<?, ?>)((Map<?, ?>)((Map<?, ?>)container.get("lifecycle")).get("preStop")).get("sleep")).get("seconds");
        int terminationGrace = (Integer)pod.get("terminationGracePeriodSeconds");
        // Closes spread over the spread, each close handshake given up to 5 s, all after the grace.
        assertTrue(drain.timeout().compareTo(drain.grace().plus(drain.spread()).plusSeconds(5)) >= 0, "server.drain.timeout " + drain);
        assertTrue(terminationGrace >= preStop + drain.timeout().toSeconds() + 5,
            "terminationGracePeriodSeconds " + terminationGrace + " < preStop " + preStop + " s + " + drain.timeout() + " + 5 s");
        Map<?, ?> readiness = (Map<?, ?>)container.get("readinessProbe");
        assertEquals("/readyz", ((Map<?, ?>)readiness.get("httpGet")).get("path"));
        int noticed = (Integer)readiness.get("periodSeconds") * (Integer)readiness.get("failureThreshold");
        assertTrue(noticed * 2 <= drain.grace().toSeconds(), "readiness notices a drain after " + noticed + " s, grace " + drain.grace());
    }

    @Test
    void theWatchersRole_readsPodsAndScalesSandboxes_andNothingMore() throws Exception
    {
        Map<String, List<?>> verbs = new HashMap<>();
        for (Object document : documents())
        {
            Map<?, ?> map = (Map<?, ?>)document;
            if (!"Role".equals(map.get("kind")))
                continue;
            for (Object rule : (List<?>)map.get("rules"))
            {
                Map<?, ?> r = (Map<?, ?>)rule;
                for (Object group : (List<?>)r.get("apiGroups"))
                {
                    for (Object resource : (List<?>)r.get("resources"))
                        verbs.put(group + "/" + resource, (List<?>)r.get("verbs"));
                }
            }
        }
        assertEquals(Map.of("/pods", List.of("get", "list", "watch"), "agents.x-k8s.io/sandboxes", List.of("get", "list", "watch", "patch")), verbs);
    }

    @Test
    void networkPolicies_keepSandboxesOffBothPorts_andReachableOnlyFromTheGateway() throws Exception
    {
        Map<String, Map<?, ?>> policies = new HashMap<>();
        for (Object document : documents())
        {
            Map<?, ?> map = (Map<?, ?>)document;
            if ("NetworkPolicy".equals(map.get("kind")))
                policies.put((String)((Map<?, ?>)map.get("metadata")).get("name"), (Map<?, ?>)map.get("spec"));
        }
        Map<?, ?> sandboxes = policies.get("sandboxes-reachable-only-from-sandgate");
        assertEquals(List.of("Ingress", "Egress"), sandboxes.get("policyTypes"));
        // Sandboxes may only look up names: no rule lets them reach 8080 or 8081.
        String egress = sandboxes.get("egress").toString();
        assertFalse(egress.contains("8080") || egress.contains("8081") || egress.contains("app=sandgate"), egress);
        String ingress = sandboxes.get("ingress").toString();
        assertTrue(ingress.contains("app=sandgate") && ingress.contains("kubernetes.io/metadata.name=sandgate"), ingress);
        // Agents reach the internal port only; the gateway takes its internal port only from agents and monitoring.
        String agents = policies.get("agents-only-through-sandgate").get("egress").toString();
        assertTrue(agents.contains("port=8081") && !agents.contains("8080"), agents);
        List<?> gatewayRules = (List<?>)policies.get("sandgate-ports").get("ingress");
        for (Object rule : gatewayRules)
        {
            String text = rule.toString();
            if (text.contains("8081"))
                assertTrue(text.contains("from="), "the internal port must name who may reach it: " + text);
        }
    }
}
