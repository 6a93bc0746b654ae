package io.sandgate.web;

import java.lang.reflect.Proxy;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Collections;
import java.util.List;

import io.sandgate.net.Cidr;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** The client address the gateway trusts: {@code X-Forwarded-For} only through trusted proxies, read from the right. */
class ClientInfoTest
{
    private final ClientInfo clients = new ClientInfo(List.of(Cidr.parse("10.0.0.0/8")));

    /** A request from {@code peer} carrying these X-Forwarded-For headers. */
    private static HttpServletRequest request(String peer, String... forwardedFor)
    {
        return (HttpServletRequest)Proxy.newProxyInstance(ClientInfoTest.class.getClassLoader(), new Class<?>[] {HttpServletRequest.class},
            (proxy, method, args) -> switch (method.getName())
            {
                case "getRemoteAddr" -> peer;
                case "getHeaders" -> Collections.enumeration(ClientInfo.X_FORWARDED_FOR.equalsIgnoreCase((String)args[0]) ? List.of(forwardedFor) : List.of());
                case "getHeader" -> ClientInfo.X_FORWARDED_FOR.equalsIgnoreCase((String)args[0]) && forwardedFor.length > 0 ? forwardedFor[0] : null;
                default -> throw new UnsupportedOperationException("request." + method.getName());
            });
    }

    @Test
    void untrustedPeer_isTheClient_whateverItForwards()
    {
        assertEquals("192.0.2.1", clients.clientAddress(request("192.0.2.1", "198.51.100.7")));
        assertEquals("192.0.2.1", new ClientInfo(List.of()).clientAddress(request("192.0.2.1", "198.51.100.7")));
    }

    @Test
    void trustedProxy_namesTheClient_asTheLastAddressItAppended()
    {
        assertEquals("198.51.100.7", clients.clientAddress(request("10.0.0.2", "198.51.100.7")));
        // The client wrote the left part itself; the proxy appended what it saw.
        assertEquals("198.51.100.7", clients.clientAddress(request("10.0.0.2", "203.0.113.9, 198.51.100.7")));
    }

    @Test
    void chainOfTrustedProxies_isWalkedBack_headerByHeader()
    {
        assertEquals("198.51.100.7", clients.clientAddress(request("10.0.0.2", "203.0.113.9, 198.51.100.7", "10.1.1.1")));
        assertEquals("2001:db8:0:0:0:0:0:7", clients.clientAddress(request("10.0.0.2", "2001:db8::7, 10.2.2.2")));
    }

    @Test
    void trustedProxyWithoutForwarding_orOnlyTrustedHops_isItselfTheClient()
    {
        assertEquals("10.0.0.2", clients.clientAddress(request("10.0.0.2")));
        assertEquals("10.3.3.3", clients.clientAddress(request("10.0.0.2", "10.3.3.3")));
    }

    @Test
    void entryThatIsNoAddress_endsTheWalk_atTheLastTrustedHop()
    {
        assertEquals("10.0.0.2", clients.clientAddress(request("10.0.0.2", "unknown")));
        assertEquals("10.4.4.4", clients.clientAddress(request("10.0.0.2", "198.51.100.7, evil.example, 10.4.4.4")));
    }

    @Test
    void limitKey_isTheAddress_andAnIpv6OneByItsSlash64() throws Exception
    {
        assertEquals("192.0.2.7", clients.limitKey("192.0.2.7"));
        assertEquals("2001:db8:0:7:0:0:0:0/64", clients.limitKey("2001:db8:0:7:1:2:3:4"));
        assertEquals(clients.limitKey("2001:db8:0:7::1"), clients.limitKey("2001:DB8:0:7:ffff::9"));
        assertEquals("192.0.2.7", clients.limitKey("::ffff:192.0.2.7"), "an IPv4-mapped address is the IPv4 one");
        assertEquals("0:0:0:0:0:0:0:0/64", clients.limitKey(InetAddress.getByName("::1")));
        assertEquals("not:an address", clients.limitKey("not:an address"), "what is not an address is its own key");
    }

    /** {@code server.client-ipv6-prefix}: the pods of one IPv6 Kubernetes node share its /64, one address each. */
    @Test
    void limitKey_countsIpv6ClientsByTheConfiguredPrefix() throws Exception
    {
        ClientInfo perAddress = new ClientInfo(List.of(), 128);
        assertEquals("2001:db8:0:7:0:0:0:1/128", perAddress.limitKey("2001:db8:0:7::1"));
        assertNotEquals(perAddress.limitKey("2001:db8:0:7::1"), perAddress.limitKey("2001:db8:0:7::2"));
        InetAddress scoped = Inet6Address.getByAddress(null, InetAddress.getByName("2001:db8:0:7::1").getAddress(), 1);
        assertEquals("2001:db8:0:7:0:0:0:1/128", perAddress.limitKey(scoped), "a scope is no part of the key");

        ClientInfo site = new ClientInfo(List.of(), 56);
        assertEquals("2001:db8:0:700:0:0:0:0/56", site.limitKey("2001:db8:0:7ff:1::1"), "the bits past the prefix cleared, within a group too");
        assertEquals(site.limitKey("2001:db8:0:700::1"), site.limitKey("2001:db8:0:7ff::1"));
        assertNotEquals(site.limitKey("2001:db8:0:700::1"), site.limitKey("2001:db8:0:800::1"));
        assertEquals("192.0.2.7", site.limitKey("192.0.2.7"), "IPv4 is counted by address whatever the prefix");
    }
}
