package io.sandgate.web;

import java.util.Optional;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Who a request counts as for per-client limits when a face knows better than the client's
 * address: an egress request carrying an agent's internal token is that agent's, wherever it
 * comes from. {@link #NONE} leaves every request to its address.
 */
@FunctionalInterface
public interface ClientIdentity
{
    ClientIdentity NONE = request -> Optional.empty();

    /** The identity the request proves, or empty to count it by its client address. */
    Optional<String> of(HttpServletRequest request);
}
