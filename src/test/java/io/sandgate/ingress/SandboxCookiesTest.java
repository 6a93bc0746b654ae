package io.sandgate.ingress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What a sandbox's Set-Cookie becomes on its way to the browser, in path mode and in host mode. */
class SandboxCookiesTest
{
    private final SandboxCookies cookies = new SandboxCookies("vnc_session_id");

    @ParameterizedTest
    @ValueSource(strings = {
        "vnc_session_id=EVIL; Path=/vnc/",
        "vnc_session_id=EVIL",
        "VNC_Session_ID=EVIL; Path=/",
        " vnc_session_id =EVIL",
        "\"vnc_session_id\"=EVIL",
        "__Host-vnc_session_id=EVIL; Path=/; Secure",
        "__Secure-vnc_session_id=EVIL; Secure",
        "__HOST-VNC_SESSION_ID=EVIL; Path=/; Secure",
        "=vnc_session_id=EVIL; Path=/vnc/",
        "vnc_session_id; Path=/vnc/",
    })
    void theGatewaysCookie_inAnySpelling_andNamelessCookies_areDropped(String setCookie)
    {
        assertNull(cookies.confine(setCookie, "/vnc/42", "/"));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "app=1; Path=/                                   | app=1; Path=/vnc/42/",
        "app=1; Path=/vnc/                               | app=1; Path=/vnc/42/vnc/",
        "app=1; Path=/admin                              | app=1; Path=/vnc/42/admin",
        "app=1; path=/x; HttpOnly                        | app=1; HttpOnly; Path=/vnc/42/x",
        "app=1; Domain=gw.example; Path=/                | app=1; Path=/vnc/42/",
        "app=1; Path=/a; Path=/b                         | app=1; Path=/vnc/42/b",
        "app=1; Path=/a/../41000/                        | app=1; Path=/vnc/42/41000/",
        "app=1; Path=/../41000/                          | app=1; Path=/vnc/42/",
        "app=1; SameSite=Strict; Secure; Max-Age=60      | app=1; SameSite=Strict; Secure; Max-Age=60; Path=/vnc/42/app",
    })
    void otherCookies_areConfinedToTheSandboxsMount_withoutADomain(String setCookie, String sent)
    {
        assertEquals(sent, cookies.confine(setCookie, "/vnc/42", "/app/ui.js"));
    }

    /** Without a (valid) Path the browser would use the directory of the URL it asked for. */
    @ParameterizedTest(name = "{0} for {1} -> {2}")
    @CsvSource(delimiter = '|', value = {
        "app=1                 | /app/ui.js?v=1       | app=1; Path=/vnc/42/app",
        "app=1                 | /vnc.html            | app=1; Path=/vnc/42/",
        "app=1                 | /                    | app=1; Path=/vnc/42/",
        "app=1; Path=relative  | /a/b/c               | app=1; Path=/vnc/42/a/b",
        "app=1; Path=          | /a/b                 | app=1; Path=/vnc/42/a",
        "app=1; Path=/x; Path= | /a/b                 | app=1; Path=/vnc/42/a",
    })
    void aMissingOrInvalidPath_becomesTheDefaultPathUnderTheMount(String setCookie, String upstreamPath, String sent)
    {
        assertEquals(sent, cookies.confine(setCookie, "/vnc/42", upstreamPath));
    }

    @Test
    void theContextPathIsPartOfTheMount()
    {
        assertEquals("app=1; Path=/sandgate/vnc/42/", cookies.confine("app=1; Path=/", "/sandgate/vnc/42", "/"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "vnc_session_id=EVIL; Path=/",
        "__Host-vnc_session_id=EVIL; Path=/; Secure",
        "VNC_SESSION_ID=EVIL; Domain=sbx.example.com",
        "=vnc_session_id=EVIL",
    })
    void hostMode_theGatewaysCookie_isDroppedToo(String setCookie)
    {
        assertNull(cookies.confineToHost(setCookie));
    }

    /** The sandbox owns its host's paths; a Domain would reach every other sandbox's host. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "app=1; Path=/                                  | app=1; Path=/",
        "app=1; Path=/lab; HttpOnly                     | app=1; Path=/lab; HttpOnly",
        "app=1; Domain=sbx.example.com; Path=/          | app=1; Path=/",
        "app=1; domain=.example.com                     | app=1",
        "app=1                                          | app=1",
        "__Host-app=1; Path=/; Secure; SameSite=Strict  | __Host-app=1; Path=/; Secure; SameSite=Strict",
    })
    void hostMode_otherCookies_keepTheirPath_butLoseTheirDomain(String setCookie, String sent)
    {
        assertEquals(sent, cookies.confineToHost(setCookie));
    }
}
