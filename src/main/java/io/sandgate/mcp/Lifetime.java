package io.sandgate.mcp;

/** What an upstream stream the gateway holds lives as long as: a client's stream, or a session. */
interface Lifetime
{
    boolean isOpen();

    /** Runs the action when it ends, whoever ends it; at once if it has. */
    void onClose(Runnable action);

    void close();
}
