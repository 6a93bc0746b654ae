package io.sandgate.controlplane;

import java.util.Map;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.sandgate.config.WatcherConfig;
import io.sandgate.ingress.IdSyntax;
import io.sandgate.ingress.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which route a pod stands for: a pod carrying the sandbox id that is Running, Ready, not being
 * deleted and has an IP routes to {@code podIP:port}, with its uid as the route's generation.
 */
final class PodRoutes
{
    private static final Logger LOG = LoggerFactory.getLogger(PodRoutes.class);

    private final WatcherConfig config;
    private final IdSyntax ids;

    PodRoutes(WatcherConfig config, IdSyntax ids)
    {
        this.config = config;
        this.ids = ids;
    }

    /** The sandbox id the pod carries (label, or annotation), when it is a valid id. */
    Optional<String> sandboxId(Pod pod)
    {
        String id = value(pod.getMetadata().getLabels(), config.idLabel());
        if (id == null)
            id = value(pod.getMetadata().getAnnotations(), config.idLabel());
        if (!ids.isId(id))
            return Optional.empty();
        return Optional.of(id);
    }

    /** Whether the pod carries the id label (or annotation) at all, valid or not. */
    boolean claimsSandbox(Pod pod)
    {
        return value(pod.getMetadata().getLabels(), config.idLabel()) != null || value(pod.getMetadata().getAnnotations(), config.idLabel()) != null;
    }

    /** Whether the pod is not on its way out: a terminating pod may still report Ready for a while. */
    static boolean alive(Pod pod)
    {
        return pod.getMetadata().getDeletionTimestamp() == null;
    }

    /** The route while the pod can serve, empty otherwise. */
    Optional<Route> route(Pod pod)
    {
        if (!alive(pod) || pod.getStatus() == null)
            return Optional.empty();
        String ip = pod.getStatus().getPodIP();
        if (!"Running".equals(pod.getStatus().getPhase()) || ip == null || ip.isBlank() || !ready(pod))
            return Optional.empty();
        int port = config.defaultPort();
        String annotated = value(pod.getMetadata().getAnnotations(), config.portAnnotation());
        if (annotated != null)
        {
            try
            {
                port = Integer.parseInt(annotated.trim());
            }
            catch (NumberFormatException x)
            {
                LOG.warn("Pod {}/{}: annotation {} is not a port; no route to it", pod.getMetadata().getNamespace(), pod.getMetadata().getName(),
                    config.portAnnotation());
                return Optional.empty();
            }
        }
        try
        {
            return Optional.of(new Route(ip, port, Optional.of(pod.getMetadata().getUid())));
        }
        catch (IllegalArgumentException x)
        {
            return Optional.empty();
        }
    }

    private static boolean ready(Pod pod)
    {
        if (pod.getStatus().getConditions() == null)
            return false;
        for (PodCondition condition : pod.getStatus().getConditions())
        {
            if ("Ready".equals(condition.getType()))
                return "True".equals(condition.getStatus());
        }
        return false;
    }

    private static String value(Map<String, String> map, String key)
    {
        return map == null ? null : map.get(key);
    }
}
