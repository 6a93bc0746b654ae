package io.sandgate.secrets;

import java.util.Objects;

import io.sandgate.config.VaultSettings;

/**
 * A field of a KV v2 entry: {@code GET /v1/{mount}/data/{path}}, then {@code data.data.{field}}.
 *
 * @param mount where the KV v2 engine is mounted
 * @param path  the entry's path under the mount
 * @param field the field of the entry that holds the value
 */
record VaultLocation(String mount, String path, String field)
{
    /**
     * Where a secret name points: {@code name} is field {@link VaultSettings#defaultField()} of
     * {@code {pathPrefix}/{name}}; {@code some/path#field} is that field of that path, without the
     * prefix. Both are under {@link VaultSettings#kvMount()}.
     */
    static VaultLocation of(VaultSettings settings, String name)
    {
        Objects.requireNonNull(name, "name");
        int hash = name.lastIndexOf('#');
        String path;
        String field;
        if (hash >= 0)
        {
            path = name.substring(0, hash);
            field = name.substring(hash + 1);
        }
        else
        {
            path = settings.pathPrefix().isEmpty() ? name : settings.pathPrefix() + "/" + name;
            field = settings.defaultField();
        }
        path = path.replaceAll("^/+|/+$", "");
        if (path.isEmpty() || field.isEmpty() || path.contains("..") || path.contains("?"))
            throw new IllegalArgumentException("secret name '" + name + "' (expected: name or some/path#field)");
        return new VaultLocation(settings.kvMount(), path, field);
    }

    /** {@code mount/path}, the form the Vault client and Vault's CLI take. */
    String logicalPath()
    {
        return mount + "/" + path;
    }

    /** The HTTP API path of the read, for messages. */
    String apiPath()
    {
        return mount + "/data/" + path;
    }
}
