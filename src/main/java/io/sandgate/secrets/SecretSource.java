package io.sandgate.secrets;

import io.sandgate.core.Secret;

/**
 * Where real provider keys and agents' internal tokens come from. Implementations: {@code file}
 * (the default), {@code env} and {@code vault}. A source answers with the value it holds now; the
 * caller ({@link io.sandgate.secrets}'s rotation ring) notices changes and keeps the previous value
 * valid for an overlap window, so a source never has to remember old values.
 */
public interface SecretSource extends AutoCloseable
{
    /**
     * The current value of the named secret.
     *
     * @throws SecretUnavailableException when the name is unknown, or the source cannot answer and
     *         holds no cached value that is still within its lifetime
     */
    Secret get(String name);

    /** Short name for logs and metrics ({@code file}, {@code env}, {@code vault}). */
    String kind();

    @Override
    default void close()
    {
    }
}
