package io.sandgate.core;

/**
 * What readiness reports about the store.
 *
 * @param type memory or redis
 * @param reachable whether the backing store answers now
 * @param detail a short human text; never an address with credentials
 */
public record StoreHealth(String type, boolean reachable, String detail)
{
}
