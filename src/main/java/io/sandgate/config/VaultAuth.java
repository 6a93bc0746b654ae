package io.sandgate.config;

import java.nio.file.Path;
import java.util.Objects;

import io.sandgate.core.Secret;

/**
 * How the Vault secret source gets its token ({@code egress.secrets.vault.auth}): one record per
 * auth method, each with only the values that method needs.
 */
public sealed interface VaultAuth
{
    /** The values of {@code egress.secrets.vault.auth}. */
    enum Method
    {
        TOKEN,
        APPROLE,
        KUBERNETES
    }

    Method method();

    /** Whether a new token can be had by logging in again (a given token cannot be replaced). */
    default boolean canLogIn()
    {
        return method() != Method.TOKEN;
    }

    /** A token given by the operator; it is looked up at start and renewed while renewable. */
    record Token(Secret token) implements VaultAuth
    {
        public Token
        {
            Objects.requireNonNull(token, "token");
        }

        @Override
        public Method method()
        {
            return Method.TOKEN;
        }
    }

    /**
     * AppRole login at {@code auth/{mount}/login}.
     *
     * @param mount where the AppRole method is enabled (default {@code approle})
     */
    record AppRole(Secret roleId, Secret secretId, String mount) implements VaultAuth
    {
        public static final String DEFAULT_MOUNT = "approle";

        public AppRole
        {
            Objects.requireNonNull(roleId, "roleId");
            Objects.requireNonNull(secretId, "secretId");
            mount = VaultSettings.trimSlashes(mount, "mount");
        }

        public AppRole(Secret roleId, Secret secretId)
        {
            this(roleId, secretId, DEFAULT_MOUNT);
        }

        @Override
        public Method method()
        {
            return Method.APPROLE;
        }
    }

    /**
     * Kubernetes login at {@code auth/{mount}/login} with the pod's service-account token. The
     * token file is read again at every login, because projected tokens are rotated by the kubelet.
     *
     * @param jwtPath the service-account token (default {@link #DEFAULT_JWT_PATH})
     * @param mount   where the Kubernetes method is enabled (default {@code kubernetes})
     */
    record Kubernetes(String role, Path jwtPath, String mount) implements VaultAuth
    {
        public static final Path DEFAULT_JWT_PATH = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");
        public static final String DEFAULT_MOUNT = "kubernetes";

        public Kubernetes
        {
            Objects.requireNonNull(role, "role");
            if (role.isBlank())
                throw new IllegalArgumentException("role: empty (expected: a Vault Kubernetes auth role)");
            Objects.requireNonNull(jwtPath, "jwtPath");
            mount = VaultSettings.trimSlashes(mount, "mount");
        }

        public Kubernetes(String role)
        {
            this(role, DEFAULT_JWT_PATH, DEFAULT_MOUNT);
        }

        @Override
        public Method method()
        {
            return Method.KUBERNETES;
        }
    }
}
