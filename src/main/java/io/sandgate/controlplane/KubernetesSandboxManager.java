package io.sandgate.controlplane;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.sandgate.ingress.lifecycle.SandboxManager;

/**
 * The sandbox manager of a cluster running agent-sandbox: resumes a sandbox by patching its
 * {@code Sandbox} (named by the sandbox id, in one of the watched namespaces) running, and pauses it
 * by patching it suspended; the agent-sandbox controller then starts or deletes its pod, and the pod
 * watcher turns the route running or paused. A JSON merge patch names only the one field, so it
 * needs no read first and cannot undo a concurrent change to the rest of the object.
 *
 * <p>The client calls block, so they run on the workers, never on the thread of the request that
 * asked. What the API server answers is never passed on: only its status.</p>
 */
final class KubernetesSandboxManager implements SandboxManager
{
    private final KubernetesClient client;
    private final SandboxResources sandboxes;
    private final List<String> namespaces;
    private final Executor workers;

    KubernetesSandboxManager(KubernetesClient client, SandboxResources sandboxes, List<String> namespaces, Executor workers)
    {
        this.client = client;
        this.sandboxes = sandboxes;
        this.namespaces = List.copyOf(namespaces);
        this.workers = workers;
    }

    @Override
    public CompletableFuture<Void> resume(String sandboxId)
    {
        return scale(sandboxId, true);
    }

    @Override
    public CompletableFuture<Void> pause(String sandboxId)
    {
        return scale(sandboxId, false);
    }

    private CompletableFuture<Void> scale(String sandboxId, boolean running)
    {
        CompletableFuture<Void> done = new CompletableFuture<>();
        // The id becomes part of a request path: one that is no object name has no Sandbox.
        if (!SandboxResources.isObjectName(sandboxId))
        {
            done.completeExceptionally(new ManagerException("no Sandbox can be named " + sandboxId, true));
            return done;
        }
        try
        {
            workers.execute(() ->
            {
                try
                {
                    sandbox(sandboxId).patch(PatchContext.of(PatchType.JSON_MERGE), sandboxes.scale(running));
                    done.complete(null);
                }
                catch (ManagerException x)
                {
                    done.completeExceptionally(x);
                }
                catch (KubernetesClientException x)
                {
                    done.completeExceptionally(refusal(sandboxId, x));
                }
                catch (RuntimeException x)
                {
                    done.completeExceptionally(new ManagerException("Kubernetes API failed (" + x.getClass().getSimpleName() + ")"));
                }
            });
        }
        catch (RejectedExecutionException x)
        {
            done.completeExceptionally(new ManagerException("the gateway is stopping"));
        }
        return done;
    }

    /** The sandbox's {@code Sandbox}: in the one watched namespace, or in the only one of several that has it. */
    private Resource<GenericKubernetesResource> sandbox(String sandboxId)
    {
        if (namespaces.size() == 1)
            return resource(namespaces.get(0), sandboxId);
        List<String> holding = new ArrayList<>();
        for (String namespace : namespaces)
        {
            try
            {
                if (resource(namespace, sandboxId).get() != null)
                    holding.add(namespace);
            }
            catch (KubernetesClientException x)
            {
                throw refusal(sandboxId, x);
            }
        }
        if (holding.isEmpty())
            throw new ManagerException("no Sandbox " + sandboxId + " in the watched namespaces", true);
        // Which one the traffic meant cannot be told: scaling either could wake or stop the wrong one.
        if (holding.size() > 1)
            throw new ManagerException("Sandbox " + sandboxId + " is in several watched namespaces " + holding);
        return resource(holding.get(0), sandboxId);
    }

    private Resource<GenericKubernetesResource> resource(String namespace, String sandboxId)
    {
        return client.genericKubernetesResources(sandboxes.context()).inNamespace(namespace).withName(sandboxId);
    }

    /**
     * A 404 says there is no such Sandbox, unless the API server's own answer says it found no
     * object to name: then it does not serve the resource at all (agent-sandbox is not installed, or
     * not this version), which is the operator's to fix, not the sandbox's unknown.
     */
    private ManagerException refusal(String sandboxId, KubernetesClientException x)
    {
        if (x.getCode() == 404)
        {
            Status status = x.getStatus();
            boolean notServed = status != null && "NotFound".equals(status.getReason())
                && (status.getDetails() == null || status.getDetails().getName() == null);
            return notServed ? new ManagerException("Kubernetes API does not serve " + SandboxResources.GROUP + "/" + sandboxes.version() + " sandboxes")
                : new ManagerException("no Sandbox " + sandboxId, true);
        }
        if (x.getCode() <= 0)
            return new ManagerException("Kubernetes API unreachable (" + rootName(x) + ")");
        return new ManagerException("Kubernetes API answered " + x.getCode());
    }

    private static String rootName(Throwable failure)
    {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root)
            root = root.getCause();
        return root.getClass().getSimpleName();
    }
}
