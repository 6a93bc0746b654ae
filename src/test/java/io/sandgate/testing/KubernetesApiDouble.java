package io.sandgate.testing;

import java.util.HashMap;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;

/**
 * A Kubernetes API server test double: fabric8's mock server in CRUD mode, where list, watch,
 * create, update, JSON merge patch and delete behave as an API server's do, for any resource
 * including agent-sandbox's {@code Sandbox} (a real API server cannot run here). It does not
 * validate objects against a CRD's schema, so a test can store what a real server would refuse
 * and see that the gateway ignores it. Also the test's own client, playing the platform and the
 * agent-sandbox controller: it makes sandbox pods and {@code Sandbox} objects.
 */
public final class KubernetesApiDouble implements AutoCloseable
{
    public static final String ID_LABEL = "sandgate.io/sandbox-id";

    private final KubernetesMockServer server;
    private final KubernetesClient client;

    private KubernetesApiDouble()
    {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
        server.init();
        client = server.createClient();
    }

    public static KubernetesApiDouble start()
    {
        return new KubernetesApiDouble();
    }

    /** For {@code controlplane.kubernetes.master-url}. */
    public String masterUrl()
    {
        return client.getConfiguration().getMasterUrl();
    }

    public KubernetesClient client()
    {
        return client;
    }

    /** Requests the double has served so far. */
    public int requestCount()
    {
        return server.getRequestCount();
    }

    /** A sandbox pod of {@code id}, Running, with the given readiness; {@code port} null leaves the annotation out. */
    public static Pod pod(String namespace, String name, String id, String ip, boolean ready, String port)
    {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(namespace).addToLabels(ID_LABEL, id).endMetadata()
            .withNewStatus().withPhase("Running").withPodIP(ip)
            .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition().endStatus();
        if (port != null)
            pod.editMetadata().addToAnnotations("sandgate.io/port", port).endMetadata();
        return pod.build();
    }

    public Pod create(Pod pod)
    {
        return client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).create();
    }

    public void delete(Pod pod)
    {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).delete();
    }

    /** Replaces a pod's labels and status, as its kubelet and controller would. */
    public Pod update(Pod pod)
    {
        Pod copy = new PodBuilder(pod).editMetadata().withResourceVersion(null).endMetadata().build();
        return client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(copy).update();
    }

    /** Where a {@code Sandbox} of this version lives. */
    public static ResourceDefinitionContext sandboxes(String version)
    {
        return new ResourceDefinitionContext.Builder().withGroup("agents.x-k8s.io").withVersion(version).withKind("Sandbox")
            .withPlural("sandboxes").withNamespaced(true).build();
    }

    /** A {@code Sandbox} object with this spec (its pod template left out: the gateway never reads it). */
    public static GenericKubernetesResource sandbox(String version, String namespace, String name, Map<String, Object> spec)
    {
        return new GenericKubernetesResourceBuilder().withApiVersion("agents.x-k8s.io/" + version).withKind("Sandbox")
            .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
            .withAdditionalProperties(Map.of("spec", spec)).build();
    }

    public GenericKubernetesResource create(String version, GenericKubernetesResource sandbox)
    {
        return sandboxesIn(version, sandbox.getMetadata().getNamespace()).resource(sandbox).create();
    }

    /** A JSON merge patch to a {@code Sandbox}, as {@code kubectl patch --type=merge} sends it. */
    public GenericKubernetesResource patch(String version, String namespace, String name, String mergePatch)
    {
        return sandbox(version, namespace, name).patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch);
    }

    public Resource<GenericKubernetesResource> sandbox(String version, String namespace, String name)
    {
        return sandboxesIn(version, namespace).withName(name);
    }

    private NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> sandboxesIn(
        String version, String namespace)
    {
        return client.genericKubernetesResources(sandboxes(version)).inNamespace(namespace);
    }

    @Override
    public void close()
    {
        client.close();
        server.destroy();
    }
}
