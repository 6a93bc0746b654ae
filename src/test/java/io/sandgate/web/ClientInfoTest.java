package io.sandgate.web;

import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.util.Collections;
import java.util.List;

import io.sandgate.net.Cidr;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
        assertEquals("192.0.2.7", ClientInfo.limitKey("192.0.2.7"));
        assertEquals("2001:db8:0:7::/64", ClientInfo.limitKey("2001:db8:0:7:1:2:3:4"));
        assertEquals(ClientInfo.limitKey("2001:db8:0:7::1"), ClientInfo.limitKey("2001:DB8:0:7:ffff::9"));
        assertEquals("192.0.2.7", ClientInfo.limitKey("::ffff:192.0.2.7"), "an IPv4-mapped address is the IPv4 one");
        assertEquals("0:0:0:0::/64", ClientInfo.limitKey(InetAddress.getByName("::1")));
        assertEquals("not:an address", ClientInfo.limitKey("not:an address"), "what is not an address is its own key");
    }
}
