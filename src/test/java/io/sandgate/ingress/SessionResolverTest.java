package io.sandgate.ingress;

import java.time.Clock;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import io.sandgate.config.ConfigLoader;
import io.sandgate.config.CookieConfig.SecureMode;
import io.sandgate.config.IngressConfig;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.ingress.IngressDecision.Source;
import io.sandgate.testing.MutableClock;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.ingress.SessionFixtures.SECRET;
import static io.sandgate.ingress.SessionFixtures.T0;
import static io.sandgate.ingress.SessionFixtures.cookieHolding;
import static io.sandgate.ingress.SessionFixtures.idsOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SessionResolverTest {

    static final String OTHER_SECRET = "fedcba9876543210fedcba9876543210";
    static final String ORIGIN = "https://gw.example";
    static final String COOKIE = "vnc_session_id";
    static final long TTL_SECONDS = Duration.ofHours(12).toSeconds();  // default ingress.cookie.ttl

    /** A resolver built the way {@link Ingress} builds it, on a clock the test moves. */
    static final class Gateway {
        final MutableClock clock = new MutableClock(T0);
        final IngressConfig config;
        final Signer signer;
        final SessionCookie cookie;
        final Grants grants;
        final SessionResolver resolver;

        Gateway(Map<String, ?> settings) {
            this(SECRET, settings);
        }

        Gateway(String secret, Map<String, ?> settings) {
            Map<String, Object> values = new HashMap<>(settings);
            values.put("ingress.cookie.secret", secret);
            config = ConfigLoader.fromValues(values).ingress();
            signer = new Signer(config.cookie().secret().orElseThrow().bytes());
            IdSyntax ids = IdSyntax.of(config);
            cookie = new SessionCookie(signer, ids, config.cookie().ttl(), config.cookie().maxSandboxes(), clock);
            grants = new Grants(signer, clock);
            resolver = new SessionResolver(config, ids, cookie,
                new GrantRedemption(grants, Redemptions.inMemory(clock), id -> Optional.empty(), config.sessionMaxAge(), clock));
        }

        IngressDecision resolve(Req req) {
            return resolver.resolve(req.build(), false, config.cookie().secure());
        }

        IngressDecision resolve(Req req, boolean secure, SecureMode mode) {
            return resolver.resolve(req.build(), secure, mode);
        }

        Forward forward(Req req) {
            return assertInstanceOf(Forward.class, resolve(req));
        }

        Redirect redirect(Req req) {
            return assertInstanceOf(Redirect.class, resolve(req));
        }

        int status(Req req) {
            return assertThrows(GatewayException.class, () -> resolve(req),
                "expected a refusal, not a decision").status();
        }

        /** A genuine cookie value holding {@code newestFirst}, as the gateway would have set it. */
        String cookieFor(String... newestFirst) {
            return cookieHolding(cookie, newestFirst);
        }

        /** The ids a Set-Cookie header value carries, newest first, as this gateway decodes them. */
        List<String> idsIn(String setCookie) {
            assertNotNull(setCookie, "expected a Set-Cookie");
            SessionCookie.Decoded decoded = cookie.decode(List.of(SetCookie.parse(setCookie).value));
            assertFalse(decoded.forged(), setCookie);
            return idsOf(decoded);
        }
    }

    static Gateway open() {
        return new Gateway(Map.of());
    }

    static Gateway signed() {
        return new Gateway(Map.of("ingress.access", "signed"));
    }

    static Req req(String path) {
        return new Req(path);
    }

    /** Asserts that {@code f} goes to sandbox {@code id}, and that {@code source} named it. */
    static void assertRouted(Forward f, String id, Source source) {
        assertEquals(id, f.sandboxId());
        assertEquals(source, f.source());
    }

    static void assertRedirected(Redirect r, int status, String location) {
        assertEquals(status, r.status());
        assertEquals(location, r.location());
    }

    // ===========================================================================================
    // Resolution sources
    // ===========================================================================================

    @Nested
    class Sources {

        final Gateway gw = open();

        @Test
        void pathNamesTheSandbox() {
            Forward f = gw.forward(req("/vnc/37579/app/ui.js").query("x=1"));
            assertRouted(f, "37579", Source.PATH);
            assertEquals("/app/ui.js?x=1", f.upstreamPath());
        }

        @Test
        void sameOriginRefererUnderTheIdNamesTheSandbox() {
            Forward f = gw.forward(req("/vnc/app/ui.js").query("x=1").referer(ORIGIN + "/vnc/42/vnc.html?autoconnect=1"));
            assertRouted(f, "42", Source.REFERER);
            assertEquals("/app/ui.js?x=1", f.upstreamPath());
            assertNull(f.setCookie(), "a Referer is no reason to set the cookie");
        }

        @Test
        void refererToTheIdRootCounts() {
            assertRouted(gw.forward(req("/vnc/core/rfb.js").referer(ORIGIN + "/vnc/42/")), "42", Source.REFERER);
        }

        @Test
        void refererOriginIsComparedCaseInsensitively() {
            Forward f = gw.forward(req("/vnc/core/rfb.js").referer("HTTPS://GW.Example/vnc/42/"));
            assertEquals("42", f.sandboxId());
        }

        @Test
        void cookieNamesTheSandboxByItsFirstEntry() {
            Forward f = gw.forward(req("/vnc/websockify").cookie(gw.cookieFor("7", "8")));
            assertRouted(f, "7", Source.COOKIE);
            assertEquals("/websockify", f.upstreamPath());
            assertNull(f.setCookie());
        }

        @Test
        void headerNamesTheSandbox() {
            Forward f = gw.forward(req("/vnc/websockify").header("9"));
            assertRouted(f, "9", Source.HEADER);
            assertEquals("/websockify", f.upstreamPath());
            assertNull(f.setCookie(), "a header is no reason to set the cookie");
        }

        @Test
        void pathBeatsRefererCookieAndHeader() {
            assertRouted(gw.forward(req("/vnc/1/x").referer(ORIGIN + "/vnc/2/").cookie(gw.cookieFor("3")).header("4")), "1", Source.PATH);
        }

        @Test
        void refererBeatsCookieAndHeader() {
            assertRouted(gw.forward(req("/vnc/x").referer(ORIGIN + "/vnc/2/").cookie(gw.cookieFor("3")).header("4")), "2", Source.REFERER);
        }

        @Test
        void cookieBeatsHeader() {
            assertRouted(gw.forward(req("/vnc/x").cookie(gw.cookieFor("3")).header("4")), "3", Source.COOKIE);
        }

        @Test
        void refererBeatsAForgedCookie() {
            assertRouted(gw.forward(req("/vnc/x").referer(ORIGIN + "/vnc/2/").cookie("37579")), "2", Source.REFERER);
        }

        @ParameterizedTest
        @ValueSource(strings = {
            "https://evil.example/vnc/42/",           // other host
            "http://gw.example/vnc/42/",              // other scheme
            "https://gw.example:8443/vnc/42/",        // other port
            "https://gw.example.evil.example/vnc/42/",
            "https://user@gw.example/vnc/42/",        // userinfo makes it another authority string
            "/vnc/42/",                               // relative: no origin to compare
            "//gw.example/vnc/42/",
            "not a uri ^^ /vnc/42/",
        })
        void crossOriginOrUnparsableRefererIsIgnored(String referer) {
            Forward f = gw.forward(req("/vnc/x").referer(referer).cookie(gw.cookieFor("3")));
            assertRouted(f, "3", Source.COOKIE);

            assertEquals(404, gw.status(req("/vnc/x").referer(referer)));
        }

        @ParameterizedTest
        @ValueSource(strings = {
            ORIGIN + "/vnc/42",             // id without the trailing slash: never served
            ORIGIN + "/vnc/42?x=/",
            ORIGIN + "/vnc/",
            ORIGIN + "/vnc/app/ui.html",    // id-less page
            ORIGIN + "/vnc/%34%32/",        // escaped digits
            ORIGIN + "/vnc/\u0664\u0662/",  // Arabic-Indic digits
            ORIGIN + "/other/42/",
            ORIGIN + "/vnc42/",
        })
        void refererThatDoesNotNameAnIdIsIgnored(String referer) {
            Forward f = gw.forward(req("/vnc/x").referer(referer).cookie(gw.cookieFor("3")));
            assertRouted(f, "3", Source.COOKIE);

            assertRouted(gw.forward(req("/vnc/x").referer(referer).header("5")), "5", Source.HEADER);
        }

        @Test
        void refererIsIgnoredWhenTheRequestOriginIsUnknown() {
            Req r = req("/vnc/x").referer(ORIGIN + "/vnc/42/").cookie(gw.cookieFor("3"));
            r.origin = null;
            assertEquals("3", gw.forward(r).sandboxId());
        }

        @Test
        void nothingNamingASandboxIs404() {
            assertEquals(404, gw.status(req("/vnc/websockify")));
            assertEquals(404, gw.status(req("/vnc/")));
            assertEquals(404, gw.status(req("/vnc/app/ui.js").query("x=1")));
        }

        @ParameterizedTest
        @ValueSource(strings = {"/", "/other/42/", "/vncx", "/vnc42/", "/VNC/42/", ""})
        void pathsOutsideThePrefixAre404(String path) {
            assertEquals(404, gw.status(req(path).cookie(gw.cookieFor("3")).header("4")));
        }

        @ParameterizedTest
        @ValueSource(strings = {"..", ".", "\u0661\u0662\u0663", "abc", "12a", "%31", "1 2", "-1", "+1", "1.0"})
        void malformedHeaderIdIs400(String header) {
            assertEquals(400, gw.status(req("/vnc/websockify").header(header)));
        }

        @Test
        void overlongHeaderIdIs400() {
            assertEquals(400, gw.status(req("/vnc/websockify").header("1".repeat(65))));
            assertEquals("1".repeat(64), gw.forward(req("/vnc/websockify").header("1".repeat(64))).sandboxId());
        }
    }

    // ===========================================================================================
    // Redirects and upstream paths
    // ===========================================================================================

    @Nested
    class RedirectsAndPaths {

        final Gateway gw = open();

        @Test
        void idWithoutTrailingSlashIsRedirected308() {
            Redirect r = gw.redirect(req("/vnc/37579"));
            assertRedirected(r, 308, "/vnc/37579/");
            assertNull(r.setCookie());
        }

        @Test
        void idRedirectKeepsTheQuery() {
            Redirect r = gw.redirect(req("/vnc/37579").query("autoconnect=1&resize=remote"));
            assertRedirected(r, 308, "/vnc/37579/?autoconnect=1&resize=remote");
        }

        @Test
        void idRedirectWithEmptyQueryAddsNoQuestionMark() {
            assertEquals("/vnc/37579/", gw.redirect(req("/vnc/37579").query("")).location());
        }

        @Test
        void idRedirectWinsOverOtherSources() {
            Redirect r = gw.redirect(req("/vnc/37579").cookie(gw.cookieFor("1")).referer(ORIGIN + "/vnc/2/").header("3"));
            assertEquals("/vnc/37579/", r.location());
        }

        @Test
        void barePrefixIsRedirected308() {
            Redirect r = gw.redirect(req("/vnc"));
            assertRedirected(r, 308, "/vnc/");
            assertNull(r.setCookie());
            assertEquals("/vnc/?a=1", gw.redirect(req("/vnc").query("a=1")).location());
        }

        @Test
        void customPrefixIsHonoured() {
            Gateway custom = new Gateway(Map.of("ingress.prefix", "/desk/"));
            assertEquals("/desk/", custom.redirect(req("/desk")).location());
            assertEquals("/desk/5/", custom.redirect(req("/desk/5")).location());
            assertEquals("/ui.js", custom.forward(req("/desk/5/ui.js")).upstreamPath());
            assertEquals(404, custom.status(req("/vnc/5/ui.js")));
        }

        @ParameterizedTest(name = "{0} ? {1} -> {2}")
        @CsvSource(nullValues = "NULL", value = {
            "/vnc/37579/app/ui.js,     x=1,         /app/ui.js?x=1",
            "/vnc/37579/,              NULL,        /",
            "/vnc/37579/,              '',          /",
            "/vnc/37579/,              a=1&b=2,     /?a=1&b=2",
            "/vnc/37579/websockify,    NULL,        /websockify",
            "/vnc/37579/a/b/c.png,     v=1.2.3,     /a/b/c.png?v=1.2.3",
            "/vnc/37579/vnc.html,      NULL,        /vnc.html",
        })
        void pathIdIsStrippedFromTheUpstreamPath(String path, String query, String upstream) {
            Forward f = gw.forward(req(path).query(query));
            assertEquals("37579", f.sandboxId());
            assertEquals(upstream, f.upstreamPath());
        }

        @ParameterizedTest(name = "{0} ? {1} -> {2}")
        @CsvSource(nullValues = "NULL", value = {
            "/vnc/app/ui.js,           NULL,        /app/ui.js",
            "/vnc/app/ui.js,           x=1,         /app/ui.js?x=1",
            "/vnc/,                    NULL,        /",
            "/vnc/websockify,          NULL,        /websockify",
            "/vnc/core/util/int.js,    NULL,        /core/util/int.js",
            "/vnc/vnc.html,            ''   ,       /vnc.html",
        })
        void idLessPathKeepsItsSegmentsBelowThePrefix(String path, String query, String upstream) {
            Forward f = gw.forward(req(path).query(query).cookie(gw.cookieFor("37579")));
            assertRouted(f, "37579", Source.COOKIE);
            assertEquals(upstream, f.upstreamPath());
        }
    }

    // ===========================================================================================
    // Set-Cookie
    // ===========================================================================================

    @Nested
    class SettingTheCookie {

        final Gateway gw = open();

        @Test
        void pathHitSetsTheSessionCookieWithItsAttributes() {
            Forward f = gw.forward(req("/vnc/37579/"));
            SetCookie c = SetCookie.parse(f.setCookie());

            assertEquals(COOKIE, c.name);
            assertEquals("/vnc/", c.attributes.get("path"));
            assertEquals(Long.toString(TTL_SECONDS), c.attributes.get("max-age"));
            assertTrue(c.attributes.containsKey("httponly"), f.setCookie());
            assertEquals("Lax", c.attributes.get("samesite"));
            assertFalse(c.attributes.containsKey("secure"), "plain HTTP in auto mode: " + f.setCookie());
            // Nothing else: no Domain (host-only), no Expires next to Max-Age.
            assertEquals(Set.of("path", "max-age", "httponly", "samesite"), c.attributes.keySet(), f.setCookie());

            SessionCookie.Decoded decoded = gw.cookie.decode(List.of(c.value));
            assertFalse(decoded.forged());
            assertEquals(List.of(new SessionCookie.Entry("37579", T0.getEpochSecond() + TTL_SECONDS)), decoded.entries());
        }

        @Test
        void setCookieValueResolvesTheNextIdLessRequest() {
            String value = SetCookie.parse(gw.forward(req("/vnc/37579/vnc.html")).setCookie()).value;
            assertRouted(gw.forward(req("/vnc/websockify").cookie(value)), "37579", Source.COOKIE);
        }

        @Test
        void configuredNameTtlAndPrefixShowInTheCookie() {
            Gateway custom = new Gateway(Map.of("ingress.cookie.name", "desk_sess", "ingress.cookie.ttl", "30m",
                "ingress.prefix", "/desk/"));
            SetCookie c = SetCookie.parse(custom.forward(req("/desk/5/")).setCookie());
            assertEquals("desk_sess", c.name);
            assertEquals("/desk/", c.attributes.get("path"));
            assertEquals("1800", c.attributes.get("max-age"));
            assertEquals(List.of(new SessionCookie.Entry("5", T0.getEpochSecond() + 1800)),
                custom.cookie.decode(List.of(c.value)).entries());
        }

        @ParameterizedTest(name = "{0}, https={1} -> Secure={2}")
        @CsvSource({
            "AUTO,   true,  true",
            "AUTO,   false, false",
            "ALWAYS, true,  true",
            "ALWAYS, false, true",
            "NEVER,  true,  false",
            "NEVER,  false, false",
        })
        void secureAttributeFollowsTheMode(SecureMode mode, boolean https, boolean expectSecure) {
            Forward f = assertInstanceOf(Forward.class, gw.resolve(req("/vnc/37579/"), https, mode));
            SetCookie c = SetCookie.parse(f.setCookie());
            assertEquals(expectSecure, c.attributes.containsKey("secure"), f.setCookie());
            // The rest does not depend on the mode.
            assertEquals("/vnc/", c.attributes.get("path"));
            assertTrue(c.attributes.containsKey("httponly"));
            assertEquals("Lax", c.attributes.get("samesite"));
        }

        @Test
        void noSetCookieWhenTheIdIsAlreadyFirst() {
            Forward f = gw.forward(req("/vnc/37579/app/ui.js").cookie(gw.cookieFor("37579", "1")));
            assertRouted(f, "37579", Source.PATH);
            assertNull(f.setCookie());
        }

        @Test
        void setCookieWhenTheIdIsPresentButNotFirst() {
            Forward f = gw.forward(req("/vnc/37579/").cookie(gw.cookieFor("1", "37579")));
            assertEquals(List.of("37579", "1"), gw.idsIn(f.setCookie()));
        }

        @Test
        void newIdIsAddedInFrontOfTheExistingOnes() {
            Forward f = gw.forward(req("/vnc/3/").cookie(gw.cookieFor("2", "1")));
            assertEquals(List.of("3", "2", "1"), gw.idsIn(f.setCookie()));
        }

        @Test
        void twoTabsOnTwoSandboxesShareOneCookie() {
            String afterTab1 = SetCookie.parse(gw.forward(req("/vnc/100/")).setCookie()).value;
            String afterTab2 = SetCookie.parse(gw.forward(req("/vnc/200/").cookie(afterTab1)).setCookie()).value;

            // Each tab's id-less requests carry its own Referer.
            assertEquals("100", gw.forward(req("/vnc/app/ui.js").cookie(afterTab2).referer(ORIGIN + "/vnc/100/vnc.html")).sandboxId());
            assertEquals("200", gw.forward(req("/vnc/app/ui.js").cookie(afterTab2).referer(ORIGIN + "/vnc/200/vnc.html")).sandboxId());
            // Without a Referer, the most recent wins.
            assertEquals("200", gw.forward(req("/vnc/websockify").cookie(afterTab2)).sandboxId());
        }

        @Test
        void cookieIsBoundedByMaxSandboxes() {
            Gateway two = new Gateway(Map.of("ingress.cookie.max-sandboxes", "2"));
            Forward f = two.forward(req("/vnc/3/").cookie(two.cookieFor("2", "1")));
            assertEquals(List.of("3", "2"), two.idsIn(f.setCookie()));
        }

        @Test
        void pathHitReplacesAForgedCookie() {
            Forward f = gw.forward(req("/vnc/37579/").cookie("37579"));
            assertRouted(f, "37579", Source.PATH);
            assertEquals(List.of("37579"), gw.idsIn(f.setCookie()));
        }

        @Test
        void redirectsNeverSetTheCookie() {
            assertNull(gw.redirect(req("/vnc/37579")).setCookie());
            assertNull(gw.redirect(req("/vnc")).setCookie());
        }
    }

    // ===========================================================================================
    // Malformed ids
    // ===========================================================================================

    @Nested
    class MalformedIds {

        final Gateway gw = open();

        static Stream<String> malformedPaths() {
            return Stream.of(
                "/vnc/%2e%2e/",
                "/vnc/%2E%2E/etc/passwd",
                "/vnc/%2e%2e",
                "/vnc/../",
                "/vnc/..",
                "/vnc/../x",
                "/vnc/./x",
                "/vnc/\u0661\u0662\u0663/",                 // Arabic-Indic digits, raw
                "/vnc/\u0661\u0662\u0663",
                "/vnc/%D9%A1%D9%A2%D9%A3/",               // Arabic-Indic digits, escaped
                "/vnc/\uFF11\uFF12/",                     // full-width digits
                "/vnc/%33%37%35%37%39/",                  // escaped ASCII digits
                "/vnc/37579%2f/",                         // escaped slash
                "/vnc/37579%00/",
                "/vnc/" + "1".repeat(65) + "/",           // one digit too many
                "/vnc/" + "1".repeat(65),
                "/vnc/" + "9".repeat(200) + "/x",
                "/vnc/" + "1".repeat(10_000) + "/");
        }

        @ParameterizedTest
        @MethodSource("malformedPaths")
        void malformedPathIdIs400EvenWithAValidSession(String path) {
            assertEquals(400, gw.status(req(path)));
            // A valid cookie, Referer or header must not turn the request into a forward.
            assertEquals(400, gw.status(req(path).cookie(gw.cookieFor("3")).referer(ORIGIN + "/vnc/3/").header("3")));
        }

        @Test
        void idOfExactlyMaxLengthIsAccepted() {
            String id = "1".repeat(64);
            assertRouted(gw.forward(req("/vnc/" + id + "/")), id, Source.PATH);
        }

        @Test
        void configuredMaxLengthIsEnforced() {
            Gateway five = new Gateway(Map.of("ingress.id-max-length", "5"));
            assertEquals("12345", five.forward(req("/vnc/12345/")).sandboxId());
            assertEquals(400, five.status(req("/vnc/123456/")));
        }

        @Test
        void plainAssetNamesAreNotMistakenForMalformedIds() {
            for (String path : List.of("/vnc/app/ui.js", "/vnc/vnc_lite.html", "/vnc/favicon.ico", "/vnc/core~1/x", "/vnc/...x/y"))
                assertEquals(Source.COOKIE, gw.forward(req(path).cookie(gw.cookieFor("3"))).source(), path);
        }
    }

    // ===========================================================================================
    // Forged cookies
    // ===========================================================================================

    @Nested
    class ForgedCookies {

        final Gateway gw = open();

        /** Built by a gateway with the same secret and start time as each test's own. */
        static Stream<Arguments> forgedCookies() {
            Gateway twin = open();
            String genuine = twin.cookieFor("37579");
            String[] f = genuine.split("\\.");
            char c = f[2].charAt(0);
            String otherSig = twin.cookieFor("1").split("\\.")[2];
            return Stream.of(
                Arguments.of("plain id as value", "37579"),
                Arguments.of("wrong HMAC", f[0] + "." + f[1] + "." + (c == 'A' ? 'B' : 'A') + f[2].substring(1)),
                Arguments.of("stretched expiry", f[0] + "." + (Long.parseLong(f[1]) + 86_400) + "." + f[2]),
                Arguments.of("signature of id 1 transplanted to id 37579", f[0] + "." + f[1] + "." + otherSig),
                Arguments.of("signed with another secret", new Gateway(OTHER_SECRET, Map.of()).cookieFor("37579")),
                Arguments.of("garbage", "%%%"),
                Arguments.of("empty", ""));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("forgedCookies")
        void forgedCookieIs403AndNeverForwards(String kind, String value) {
            GatewayException x = assertThrows(GatewayException.class, () -> gw.resolve(req("/vnc/websockify").cookie(value)), kind);
            assertEquals(403, x.status(), kind);
            // Later steps do not rescue a forged cookie either.
            assertEquals(403, gw.status(req("/vnc/websockify").cookie(value).header("37579")), kind);
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("forgedCookies")
        void earlierStepsStillResolveNextToAForgedCookie(String kind, String value) {
            Forward byPath = gw.forward(req("/vnc/5/x").cookie(value));
            assertEquals("5", byPath.sandboxId());
            assertEquals(List.of("5"), gw.idsIn(byPath.setCookie()), "forged entries must not be carried over");

            assertRouted(gw.forward(req("/vnc/x").cookie(value).referer(ORIGIN + "/vnc/6/")), "6", Source.REFERER);
        }

        @Test
        void forgedEntryNextToAGenuineOneResolvesToTheGenuineOnly() {
            String genuine = gw.cookieFor("1");
            Forward f = gw.forward(req("/vnc/x").cookie(genuine).cookie("37579"));
            assertEquals("1", f.sandboxId());
            Forward g = gw.forward(req("/vnc/x").cookie("37579~" + genuine));
            assertEquals("1", g.sandboxId());
        }

        @Test
        void expiredFirstEntryIsSkippedForTheNextGenuineOne() {
            String old = gw.cookieFor("1");                // expires T0+12h
            gw.clock.advance(Duration.ofHours(6));
            String value = old + "~" + gw.cookieFor("2");  // 2 expires T0+18h
            gw.clock.set(T0.plusSeconds(TTL_SECONDS - 1));
            assertEquals("1", gw.forward(req("/vnc/x").cookie(value)).sandboxId());
            gw.clock.set(T0.plusSeconds(TTL_SECONDS));
            assertRouted(gw.forward(req("/vnc/x").cookie(value)), "2", Source.COOKIE);
        }

        @Test
        void expiredCookieNeverResolves() {
            String value = gw.cookieFor("37579");
            gw.clock.set(T0.plusSeconds(TTL_SECONDS - 1));
            assertEquals("37579", gw.forward(req("/vnc/x").cookie(value)).sandboxId());

            gw.clock.set(T0.plusSeconds(TTL_SECONDS));
            assertEquals(403, gw.status(req("/vnc/x").cookie(value)), "expired exactly at the expiry second");
        }

        @Test
        void expiredCookieIs403WhenNothingEarlierResolved() {
            String value = gw.cookieFor("37579");
            gw.clock.advance(Duration.ofSeconds(TTL_SECONDS + 60));

            assertEquals(403, gw.status(req("/vnc/websockify").cookie(value)));
            assertEquals(403, gw.status(req("/vnc/websockify").cookie(value).header("37579")));
        }

        @Test
        void expiredCookieDoesNotStopAPathOrRefererHit() {
            String value = gw.cookieFor("37579");
            gw.clock.advance(Duration.ofSeconds(TTL_SECONDS + 60));
            Forward f = gw.forward(req("/vnc/37579/").cookie(value));
            assertEquals(List.of("37579"), gw.idsIn(f.setCookie()), "an expired first entry is not 'already first'");
            assertEquals("8", gw.forward(req("/vnc/x").cookie(value).referer(ORIGIN + "/vnc/8/")).sandboxId());
        }
    }

    // ===========================================================================================
    // Signed access
    // ===========================================================================================

    @Nested
    class SignedAccess {

        final Gateway gw = signed();

        String grant(String id) {
            return gw.grants.issue(id, "alice", Duration.ofMinutes(5));
        }

        @Test
        void validGrantIsExchangedForTheCookieAndStrippedFromTheUrl() {
            Redirect r = gw.redirect(req("/vnc/37579/vnc.html").query("autoconnect=1&sandgate_grant=" + grant("37579") + "&resize=remote"));

            assertRedirected(r, 303, "/vnc/37579/vnc.html?autoconnect=1&resize=remote");
            assertEquals(List.of("37579"), gw.idsIn(r.setCookie()));
            SetCookie c = SetCookie.parse(r.setCookie());
            assertEquals(COOKIE, c.name);
            assertEquals("/vnc/", c.attributes.get("path"));
            assertTrue(c.attributes.containsKey("httponly"));
            assertEquals("Lax", c.attributes.get("samesite"));
            assertEquals(Long.toString(TTL_SECONDS), c.attributes.get("max-age"));
        }

        @Test
        void followingTheGrantRedirectWithTheCookieForwards() {
            Redirect r = gw.redirect(req("/vnc/37579/vnc.html").query("sandgate_grant=" + grant("37579")));
            assertEquals("/vnc/37579/vnc.html", r.location());
            String value = SetCookie.parse(r.setCookie()).value;

            Forward page = gw.forward(req(r.location()).cookie(value));
            assertRouted(page, "37579", Source.PATH);
            assertEquals("/vnc.html", page.upstreamPath());
            assertNull(page.setCookie());

            Forward asset = gw.forward(req("/vnc/app/ui.js").cookie(value).referer(ORIGIN + "/vnc/37579/vnc.html"));
            assertRouted(asset, "37579", Source.REFERER);

            Forward socket = gw.forward(req("/vnc/websockify").cookie(value));
            assertRouted(socket, "37579", Source.COOKIE);
        }

        @Test
        void grantOnTheIdWithoutSlashRedirectsStraightToTheSlashedUrl() {
            Redirect r = gw.redirect(req("/vnc/37579").query("sandgate_grant=" + grant("37579") + "&a=1"));
            assertRedirected(r, 303, "/vnc/37579/?a=1");
            assertEquals(List.of("37579"), gw.idsIn(r.setCookie()));
        }

        @Test
        void grantAsTheOnlyParamLeavesNoQuestionMark() {
            Redirect r = gw.redirect(req("/vnc/37579/").query("sandgate_grant=" + grant("37579")));
            assertEquals("/vnc/37579/", r.location());
        }

        @ParameterizedTest
        @CsvSource(delimiter = '|', value = {
            "sandgate_grant=G&a=1&b=2 | a=1&b=2",
            "a=1&sandgate_grant=G     | a=1",
            "a=1&sandgate_grant=G&b=  | a=1&b=",
            "x=sandgate_grant&sandgate_grant=G&sandgate_grant_x=3 | x=sandgate_grant&sandgate_grant_x=3",
        })
        void onlyTheGrantParamIsStripped(String query, String kept) {
            Redirect r = gw.redirect(req("/vnc/37579/").query(query.replace("G", grant("37579"))));
            assertEquals("/vnc/37579/?" + kept, r.location());
        }

        @Test
        void grantAddsToAnExistingCookie() {
            Redirect r = gw.redirect(req("/vnc/2/").query("sandgate_grant=" + grant("2")).cookie(gw.cookieFor("1")));
            assertEquals(List.of("2", "1"), gw.idsIn(r.setCookie()));
        }

        @Test
        void secureAttributeOnTheGrantCookieFollowsTheMode() {
            // A grant opens one session: each request brings its own.
            Redirect https = assertInstanceOf(Redirect.class, gw.resolve(req("/vnc/37579/").query("sandgate_grant=" + grant("37579")), true, SecureMode.AUTO));
            assertTrue(SetCookie.parse(https.setCookie()).attributes.containsKey("secure"));
            Redirect http = assertInstanceOf(Redirect.class, gw.resolve(req("/vnc/37579/").query("sandgate_grant=" + grant("37579")), false, SecureMode.AUTO));
            assertFalse(SetCookie.parse(http.setCookie()).attributes.containsKey("secure"));
        }

        @Test
        void grantForAnotherIdIs403() {
            assertEquals(403, gw.status(req("/vnc/37579/").query("sandgate_grant=" + grant("37578"))));
            assertEquals(403, gw.status(req("/vnc/37579/").query("sandgate_grant=" + grant("375790"))));
            // Even when the cookie already holds the path id, a wrong grant is refused, not ignored.
            assertEquals(403, gw.status(req("/vnc/37579/").query("sandgate_grant=" + grant("1")).cookie(gw.cookieFor("37579"))));
        }

        @Test
        void expiredGrantIs403() {
            String token = grant("37579");
            gw.clock.advance(Duration.ofMinutes(5).minusSeconds(1));
            assertInstanceOf(Redirect.class, gw.resolve(req("/vnc/37579/").query("sandgate_grant=" + token)));
            gw.clock.advance(Duration.ofSeconds(1));
            assertEquals(403, gw.status(req("/vnc/37579/").query("sandgate_grant=" + token)));
        }

        @Test
        void tamperedGrantIs403() {
            String[] f = grant("37579").split("\\.");
            char c = f[3].charAt(0);
            List<String> tampered = List.of(
                Signer.encode("37578") + "." + f[1] + "." + f[2] + "." + f[3],
                f[0] + "." + (Long.parseLong(f[1]) + 3600) + "." + f[2] + "." + f[3],
                f[0] + "." + f[1] + "." + Signer.encode("mallory") + "." + f[3],
                f[0] + "." + f[1] + "." + f[2] + "." + (c == 'A' ? 'B' : 'A') + f[3].substring(1),
                f[0] + "." + f[1] + "." + f[2],
                "",
                "garbage");
            for (String token : tampered)
                assertEquals(403, gw.status(req("/vnc/37579/").query("sandgate_grant=" + token)), token);
        }

        @Test
        void grantFromAnotherSecretIs403() {
            String token = new Gateway(OTHER_SECRET, Map.of("ingress.access", "signed")).grants.issue("37579", "alice", Duration.ofMinutes(5));
            assertEquals(403, gw.status(req("/vnc/37579/").query("sandgate_grant=" + token)));
        }

        @Test
        void sessionCookieEntryCannotBeUsedAsGrant() {
            String entry = gw.cookieFor("37579");
            assertEquals(403, gw.status(req("/vnc/37579/").query("sandgate_grant=" + entry)));
        }

        @Test
        void grantParamNameIsConfigurable() {
            Gateway custom = new Gateway(Map.of("ingress.access", "signed", "ingress.grant.param", "t"));
            String token = custom.grants.issue("5", "bob", Duration.ofMinutes(1));
            Redirect r = custom.redirect(req("/vnc/5/").query("t=" + token + "&sandgate_grant=x"));
            assertEquals("/vnc/5/?sandgate_grant=x", r.location());
        }

        @Test
        void pathWithoutCookieIs403() {
            assertEquals(403, gw.status(req("/vnc/37579/")));
            assertEquals(403, gw.status(req("/vnc/37579/app/ui.js").query("x=1")));
        }

        @Test
        void refererWithoutCookieIs403() {
            assertEquals(403, gw.status(req("/vnc/app/ui.js").referer(ORIGIN + "/vnc/37579/")));
        }

        @Test
        void headerWithoutCookieIs403() {
            assertEquals(403, gw.status(req("/vnc/websockify").header("37579")));
        }

        @Test
        void idsNotInTheCookieAre403EvenWithACookieForAnotherSandbox() {
            String other = gw.cookieFor("1");
            assertEquals(403, gw.status(req("/vnc/37579/").cookie(other)));
            assertEquals(403, gw.status(req("/vnc/app/ui.js").cookie(other).referer(ORIGIN + "/vnc/37579/")));
        }

        @Test
        void pathInTheCookieForwards() {
            Forward f = gw.forward(req("/vnc/37579/app/ui.js").cookie(gw.cookieFor("37579")));
            assertRouted(f, "37579", Source.PATH);
            assertEquals("/app/ui.js", f.upstreamPath());
            assertNull(f.setCookie());
        }

        @Test
        void pathInTheCookieButNotFirstForwardsAndMovesItFirst() {
            Forward f = gw.forward(req("/vnc/37579/").cookie(gw.cookieFor("1", "37579")));
            assertEquals("37579", f.sandboxId());
            assertEquals(List.of("37579", "1"), gw.idsIn(f.setCookie()));
        }

        @Test
        void refererInTheCookieForwards() {
            assertRouted(gw.forward(req("/vnc/app/ui.js").cookie(gw.cookieFor("1", "37579")).referer(ORIGIN + "/vnc/37579/")), "37579", Source.REFERER);
        }

        @Test
        void cookieAloneForwards() {
            assertRouted(gw.forward(req("/vnc/websockify").cookie(gw.cookieFor("37579"))), "37579", Source.COOKIE);
        }

        @Test
        void headerWithCookieForwards() {
            Forward f = gw.forward(req("/vnc/websockify").cookie(gw.cookieFor("37579")).header("37579"));
            assertEquals("37579", f.sandboxId());
        }

        @Test
        void headerIsNotConsultedWhenTheCookieResolves() {
            // Cookie beats header: a header naming another sandbox neither reaches it nor refuses the request.
            assertRouted(gw.forward(req("/vnc/websockify").cookie(gw.cookieFor("1")).header("2")), "1", Source.COOKIE);
        }

        @Test
        void forgedCookieDoesNotGrantAccess() {
            assertEquals(403, gw.status(req("/vnc/37579/").cookie("37579")));
            assertEquals(403, gw.status(req("/vnc/37579/").cookie(new Gateway(OTHER_SECRET, Map.of()).cookieFor("37579"))));
        }

        @Test
        void expiredCookieDoesNotGrantAccess() {
            String value = gw.cookieFor("37579");
            gw.clock.advance(Duration.ofSeconds(TTL_SECONDS));
            assertEquals(403, gw.status(req("/vnc/37579/").cookie(value)));
            assertEquals(403, gw.status(req("/vnc/x").cookie(value).referer(ORIGIN + "/vnc/37579/")));
        }

        @Test
        void grantParamIsIgnoredInOpenMode() {
            // Open mode does not read grants: a bogus one is no reason to refuse.
            Forward f = open().forward(req("/vnc/37579/").query("sandgate_grant=garbage"));
            assertEquals("37579", f.sandboxId());
        }
    }

    // ===========================================================================================
    // Helpers
    // ===========================================================================================

    /** A mutable request description. */
    static final class Req {
        String method = "GET";
        String path;
        String query;
        String origin = ORIGIN;
        String referer;
        final List<String> cookies = new ArrayList<>();
        String headerId;

        Req(String path) {
            this.path = path;
        }

        Req query(String q) {
            this.query = q;
            return this;
        }

        Req referer(String r) {
            this.referer = r;
            return this;
        }

        Req cookie(String value) {
            cookies.add(value);
            return this;
        }

        Req header(String id) {
            this.headerId = id;
            return this;
        }

        IngressRequest build() {
            return new IngressRequest(method, path, query, origin, referer, cookies, headerId);
        }
    }

    /** A parsed Set-Cookie header value; attribute names lower-cased. */
    static final class SetCookie {
        String name;
        String value;
        final Map<String, String> attributes = new LinkedHashMap<>();

        static SetCookie parse(String header) {
            assertNotNull(header, "expected a Set-Cookie");
            SetCookie c = new SetCookie();
            String[] parts = header.split(";");
            int eq = parts[0].indexOf('=');
            assertTrue(eq > 0, header);
            c.name = parts[0].substring(0, eq).trim();
            c.value = parts[0].substring(eq + 1).trim();
            for (int i = 1; i < parts.length; i++) {
                String part = parts[i].trim();
                int e = part.indexOf('=');
                String key = (e < 0 ? part : part.substring(0, e)).toLowerCase(Locale.ROOT);
                assertFalse(c.attributes.containsKey(key), "duplicate attribute " + key + " in " + header);
                c.attributes.put(key, e < 0 ? "" : part.substring(e + 1));
            }
            return c;
        }
    }
}
