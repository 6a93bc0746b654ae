package io.sandgate.config;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.sandgate.core.Secret;
import io.sandgate.net.Cidr;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ConfigLoaderTest
{
    private static final String COOKIE_SECRET = "cookie-Secret-0123456789abcdef";
    private static final String REDIS_PASSWORD = "redis-Pa55word-xyzzy";
    private static final String ADMIN_TOKEN = "admin-Token-plugh-42";
    private static final List<String> SECRETS = List.of(COOKIE_SECRET, REDIS_PASSWORD, ADMIN_TOKEN);

    @TempDir
    Path dir;

    private int files;

    // ---------------------------------------------------------------- helpers

    /** Writes a YAML file into the temp dir and returns its absolute path. */
    private String yaml(String content) throws IOException
    {
        Path file = dir.resolve("sandgate-" + (files++) + ".yaml");
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file.toString();
    }

    /**
     * Loads from the three maps. When none of them names a config file, an empty YAML file is named
     * so that a {@code conf/sandgate.yaml} in the working directory cannot leak into the test.
     */
    private SandgateConfig load(Map<String, String> systemProperties, Map<String, String> environment,
                                Map<String, String> contextParams) throws IOException
    {
        Map<String, String> sys = new HashMap<>(systemProperties);
        if (!sys.containsKey("sandgate.config") && !environment.containsKey("SANDGATE_CONFIG")
            && !contextParams.containsKey("sandgate.config"))
            sys.put("sandgate.config", yaml(""));
        return ConfigLoader.load(contextParams, sys, environment);
    }

    private SandgateConfig sys(Map<String, String> systemProperties) throws IOException
    {
        return load(systemProperties, Map.of(), Map.of());
    }

    private SandgateConfig loadYaml(String content) throws IOException
    {
        return loadFile(yaml(content));
    }

    /** Loads with only {@code sandgate.config} set, to the given file. */
    private static SandgateConfig loadFile(String file)
    {
        return ConfigLoader.load(Map.of(), Map.of("sandgate.config", file), Map.of());
    }

    private static ConfigException fails(Executable executable)
    {
        ConfigException x = assertThrows(ConfigException.class, executable);
        assertFalse(x.problems().isEmpty(), "a ConfigException must carry at least one problem");
        return x;
    }

    /** The single problem reported. */
    private static String problem(Executable executable)
    {
        List<String> problems = fails(executable).problems();
        assertEquals(1, problems.size(), () -> "expected exactly one problem, got " + problems);
        return problems.get(0);
    }

    private static void assertMentions(String message, String... parts)
    {
        for (String part : parts)
            assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }

    private static void assertNoSecret(String text)
    {
        for (String secret : SECRETS)
            assertFalse(text.contains(secret), () -> "secret leaked into: " + text);
    }

    private static void assertNoSecret(ConfigException x)
    {
        assertNoSecret(x.getMessage());
        assertNoSecret(x.toString());
        x.problems().forEach(ConfigLoaderTest::assertNoSecret);
    }

    private static void assertDefaults(SandgateConfig config)
    {
        assertEquals("0.0.0.0", config.server().host());
        assertEquals(8080, config.server().port());
        assertEquals(200, config.server().maxThreads());
        assertEquals(Duration.ofSeconds(10), config.server().stopTimeout());
        // Above a load balancer's idle timeout (AWS ALB: 60 s), unlike Jetty's 30 s.
        assertEquals(Duration.ofSeconds(75), config.server().idleTimeout());

        assertEquals(StoreConfig.Type.MEMORY, config.store().type());
        assertEquals("redis://127.0.0.1:6379", config.store().redis().address());
        assertEquals(List.of(), config.store().redis().clusterNodes());
        assertEquals(Optional.empty(), config.store().redis().password());
        assertEquals(Duration.ofSeconds(1), config.store().redis().timeout());
        assertEquals(Duration.ofMillis(500), config.store().redis().pollInterval());
        assertEquals(Duration.ofSeconds(2), config.store().redis().negativeCacheTtl());
        assertEquals(Duration.ofSeconds(30), config.store().redis().sessionPollInterval());

        IngressConfig ingress = config.ingress();
        assertEquals("/vnc/", ingress.prefix());
        assertEquals("\\d+", ingress.idPattern().pattern());
        assertTrue(ingress.idPattern().matcher("12345").matches());
        assertFalse(ingress.idPattern().matcher("12a").matches());
        assertEquals(64, ingress.idMaxLength());
        assertEquals("vnc_sandboxes", ingress.routesKey());
        assertEquals(Map.of(), ingress.staticRoutes());
        assertEquals("X-Sandbox-Id", ingress.header());
        assertEquals("vnc_session_id", ingress.cookie().name());
        assertEquals(Optional.empty(), ingress.cookie().secret());
        assertEquals(Duration.ofHours(12), ingress.cookie().ttl());
        assertEquals(CookieConfig.SecureMode.AUTO, ingress.cookie().secure());
        assertEquals(8, ingress.cookie().maxSandboxes());
        assertEquals(IngressConfig.Access.OPEN, ingress.access());
        assertEquals("sandgate_grant", ingress.grantParam());
        assertEquals(List.of(), ingress.trustedProxies());
        assertEquals(Duration.ofSeconds(3600), ingress.idleTimeout());
        assertEquals(Duration.ofSeconds(5), ingress.connectTimeout());
        assertEquals(Duration.ofSeconds(60), ingress.destinationIdleTimeout());
        assertEquals(256, ingress.maxConnectionsPerSandbox());
        assertEquals(100_000, ingress.routeCacheSize());

        assertEquals(Optional.empty(), config.adminToken());
        assertTrue(config.accessLog());
    }

    // ---------------------------------------------------------------- defaults

    @Nested
    class Defaults
    {
        @Test
        void nothingSetAtAll()
        {
            // The default file conf/sandgate.yaml is optional; this case only means something when it is absent.
            assumeFalse(Files.exists(Path.of(ConfigKeys.CONFIG.defaultValue())),
                ConfigKeys.CONFIG.defaultValue() + " exists in the working directory");
            SandgateConfig config = ConfigLoader.load(Map.of(), Map.of(), Map.of());
            assertDefaults(config);
            assertEquals("none", config.source());
        }

        @Test
        void defaultFileIsReadWhenPresent()
        {
            // The complement of nothingSetAtAll: with nothing set, the shipped default file is used, and it must be valid.
            assumeTrue(Files.exists(Path.of(ConfigKeys.CONFIG.defaultValue())),
                ConfigKeys.CONFIG.defaultValue() + " does not exist in the working directory");
            SandgateConfig config = ConfigLoader.load(Map.of(), Map.of(), Map.of());
            assertEquals(ConfigKeys.CONFIG.defaultValue(), config.source());
        }

        @Test
        void emptyYamlFile() throws IOException
        {
            String path = yaml("");
            SandgateConfig config = ConfigLoader.load(Map.of(), Map.of("sandgate.config", path), Map.of());
            assertDefaults(config);
            assertEquals(path, config.source());
        }

        @Test
        void fromEmptyValues()
        {
            SandgateConfig config = ConfigLoader.fromValues(Map.of());
            assertDefaults(config);
            assertEquals("none", config.source());
        }

        @Test
        void unrelatedPropertiesVariablesAndParamsAreIgnored() throws IOException
        {
            SandgateConfig config = load(
                Map.of("java.home", "/opt/jdk", "sandgatex.server.port", "1", "server.port", "2"),
                Map.of("PATH", "/usr/bin", "SANDGATEX_FOO", "1", "SERVER_PORT", "3"),
                Map.of("org.eclipse.jetty.servlet.Default.dirAllowed", "false", "server.port", "4"));
            assertDefaults(config);
        }
    }

    // ---------------------------------------------------------------- YAML

    @Test
    void yamlNestedKeysSetValues() throws IOException
    {
        SandgateConfig config = loadYaml("""
            server:
              host: 127.0.0.1
              port: 9090
              stop-timeout: 2s
            store:
              type: redis
              redis:
                address: rediss://redis.example:6380
                cluster-nodes:
                  - redis://a.example:7000
                  - redis://b.example:7000
                username: gate
                password: %s
                database: 3
            ingress:
              prefix: /desk/
              id-pattern: "[a-z]{3}-\\\\d+"
              id-max-length: 32
              routes-key: desks
              header: X-Desk
              cookie:
                name: desk_session
                secret: %s
                ttl: 30m
                secure: always
                max-sandboxes: 3
              access: signed
              grant:
                param: g
              trusted-proxies:
                - 10.0.0.0/8
                - "fd00::/8"
              idle-timeout: 1h
              connect-timeout: 500ms
              max-connections-per-sandbox: 16
              route-cache-size: 1000
            admin:
              token: %s
            log:
              access: false
            """.formatted(REDIS_PASSWORD, COOKIE_SECRET, ADMIN_TOKEN));

        assertEquals("127.0.0.1", config.server().host());
        assertEquals(9090, config.server().port());
        assertEquals(Duration.ofSeconds(2), config.server().stopTimeout());

        assertEquals(StoreConfig.Type.REDIS, config.store().type());
        StoreConfig.Redis redis = config.store().redis();
        assertEquals("rediss://redis.example:6380", redis.address());
        assertEquals(List.of("redis://a.example:7000", "redis://b.example:7000"), redis.clusterNodes());
        assertEquals(Optional.of("gate"), redis.username());
        assertEquals(REDIS_PASSWORD, redis.password().orElseThrow().reveal());
        assertEquals(3, redis.database());

        IngressConfig ingress = config.ingress();
        assertEquals("/desk/", ingress.prefix());
        assertTrue(ingress.idPattern().matcher("abc-12").matches());
        assertFalse(ingress.idPattern().matcher("12").matches());
        assertEquals(32, ingress.idMaxLength());
        assertEquals("desks", ingress.routesKey());
        assertEquals("X-Desk", ingress.header());
        assertEquals("desk_session", ingress.cookie().name());
        assertEquals(COOKIE_SECRET, ingress.cookie().secret().orElseThrow().reveal());
        assertEquals(Duration.ofMinutes(30), ingress.cookie().ttl());
        assertEquals(CookieConfig.SecureMode.ALWAYS, ingress.cookie().secure());
        assertEquals(3, ingress.cookie().maxSandboxes());
        assertEquals(IngressConfig.Access.SIGNED, ingress.access());
        assertEquals("g", ingress.grantParam());
        assertEquals(List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("fd00::/8")), ingress.trustedProxies());
        assertEquals(Duration.ofHours(1), ingress.idleTimeout());
        assertEquals(Duration.ofMillis(500), ingress.connectTimeout());
        assertEquals(16, ingress.maxConnectionsPerSandbox());
        assertEquals(1000, ingress.routeCacheSize());

        assertEquals(ADMIN_TOKEN, config.adminToken().orElseThrow().reveal());
        assertFalse(config.accessLog());
    }

    @Test
    void yamlStaticRoutesAsMap() throws IOException
    {
        SandgateConfig config = loadYaml("""
            ingress:
              static-routes:
                1: 10.1.2.3:5900
                "42": sandbox-42.sandboxes.svc:5901
                abc: "[fd00::1]:5900"
            """);
        assertEquals(Map.of("1", "10.1.2.3:5900", "42", "sandbox-42.sandboxes.svc:5901", "abc", "[fd00::1]:5900"),
            config.ingress().staticRoutes());
    }

    @Test
    void yamlStaticRoutesMapIsNotMistakenForNestedKeys() throws IOException
    {
        // A route id that looks like a key segment must not be descended into.
        SandgateConfig config = loadYaml("""
            ingress:
              static-routes:
                prefix: 10.0.0.1:5900
            """);
        assertEquals(Map.of("prefix", "10.0.0.1:5900"), config.ingress().staticRoutes());
        assertEquals("/vnc/", config.ingress().prefix());
    }

    @Test
    void yamlFlatDottedKeys() throws IOException
    {
        SandgateConfig config = loadYaml("""
            server.port: 9191
            ingress.cookie.name: flat_cookie
            """);
        assertEquals(9191, config.server().port());
        assertEquals("flat_cookie", config.ingress().cookie().name());
    }

    @Test
    void yamlNullValueKeepsDefault() throws IOException
    {
        SandgateConfig config = loadYaml("""
            server:
              port:
            """);
        assertEquals(8080, config.server().port());
    }

    @Test
    void clientIpv6Prefix_isASlash64_unlessSet() throws IOException
    {
        assertEquals(64, load(Map.of(), Map.of(), Map.of()).server().clientIpv6Prefix());
        assertEquals(128, load(Map.of("sandgate.server.client-ipv6-prefix", "128"), Map.of(), Map.of()).server().clientIpv6Prefix());
    }

    @Test
    void internalClientIpv6Prefix_countsEachAddress_unlessSet() throws IOException
    {
        assertEquals(128, load(Map.of(), Map.of(), Map.of()).server().internalClientIpv6Prefix());
        assertEquals(64, load(Map.of("sandgate.server.internal-client-ipv6-prefix", "64"), Map.of(), Map.of()).server().internalClientIpv6Prefix());
        ConfigException wrong = assertThrows(ConfigException.class,
            () -> load(Map.of("sandgate.server.internal-client-ipv6-prefix", "129"), Map.of(), Map.of()));
        assertTrue(wrong.getMessage().contains("server.internal-client-ipv6-prefix"), wrong.getMessage());
    }

    @Test
    void configPathFromEnvironmentAndContextParam() throws IOException
    {
        assertEquals(7001, load(Map.of(), Map.of("SANDGATE_CONFIG", yaml("server.port: 7001")), Map.of()).server().port());
        assertEquals(7002, load(Map.of(), Map.of(), Map.of("sandgate.config", yaml("server.port: 7002"))).server().port());
    }

    @Test
    void configPathPrecedence() throws IOException
    {
        String a = yaml("server.port: 7001");
        String b = yaml("server.port: 7002");
        String c = yaml("server.port: 7003");
        assertEquals(7001, load(Map.of("sandgate.config", a), Map.of("SANDGATE_CONFIG", b), Map.of()).server().port());
        assertEquals(7002, load(Map.of(), Map.of("SANDGATE_CONFIG", b), Map.of("sandgate.config", c)).server().port());
        assertEquals(7001, load(Map.of("sandgate.config", a), Map.of(), Map.of("sandgate.config", c)).server().port());
    }

    // ---------------------------------------------------------------- other sources

    @Test
    void environmentVariablesUseUpperSnakeNames() throws IOException
    {
        SandgateConfig config = load(Map.of(), Map.of(
            "SANDGATE_INGRESS_COOKIE_MAX_SANDBOXES", "5",
            "SANDGATE_INGRESS_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.0.0/16,",
            "SANDGATE_INGRESS_STATIC_ROUTES", "1=a.example:5900, b=b.example:5901",
            "SANDGATE_STORE_TYPE", "REDIS",
            "SANDGATE_LOG_ACCESS", "no"), Map.of());
        assertEquals(5, config.ingress().cookie().maxSandboxes());
        assertEquals(List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("192.168.0.0/16")), config.ingress().trustedProxies());
        assertEquals(Map.of("1", "a.example:5900", "b", "b.example:5901"), config.ingress().staticRoutes());
        assertEquals(StoreConfig.Type.REDIS, config.store().type());
        assertFalse(config.accessLog());
    }

    @Test
    void contextParamsAndSystemPropertiesUseDottedNames() throws IOException
    {
        SandgateConfig config = load(Map.of("sandgate.ingress.cookie.secure", "never"), Map.of(),
            Map.of("sandgate.ingress.route-cache-size", "5000"));
        assertEquals(CookieConfig.SecureMode.NEVER, config.ingress().cookie().secure());
        assertEquals(5000, config.ingress().routeCacheSize());
    }

    @Test
    void loadEmbeddedReadsTheProcessSystemProperties() throws IOException
    {
        assumeTrue(System.getenv().keySet().stream().noneMatch(k -> k.startsWith("SANDGATE_")),
            "the test process has SANDGATE_* variables of its own");
        assumeTrue(System.getProperties().stringPropertyNames().stream().noneMatch(k -> k.startsWith("sandgate.")));
        String path = yaml("ingress.routes-key: embedded_routes");
        System.setProperty("sandgate.config", path);
        System.setProperty("sandgate.server.port", "7070");
        try
        {
            SandgateConfig config = ConfigLoader.loadEmbedded();
            assertEquals(7070, config.server().port());
            assertEquals("embedded_routes", config.ingress().routesKey());
            assertEquals(path, config.source());
        }
        finally
        {
            System.clearProperty("sandgate.config");
            System.clearProperty("sandgate.server.port");
        }
    }

    // ---------------------------------------------------------------- precedence

    @Nested
    class Precedence
    {
        @Test
        void systemPropertyBeatsEnvironment() throws IOException
        {
            assertEquals(1001, load(Map.of("sandgate.server.port", "1001"), Map.of("SANDGATE_SERVER_PORT", "1002"), Map.of())
                .server().port());
        }

        @Test
        void environmentBeatsContextParam() throws IOException
        {
            assertEquals(1002, load(Map.of(), Map.of("SANDGATE_SERVER_PORT", "1002"), Map.of("sandgate.server.port", "1003"))
                .server().port());
        }

        @Test
        void contextParamBeatsYaml() throws IOException
        {
            assertEquals(1003, load(Map.of("sandgate.config", yaml("server:\n  port: 1004\n")), Map.of(),
                Map.of("sandgate.server.port", "1003")).server().port());
        }

        @Test
        void yamlBeatsDefault() throws IOException
        {
            assertEquals(1004, loadYaml("server:\n  port: 1004\n").server().port());
        }

        @Test
        void allFourSources() throws IOException
        {
            String file = yaml("server:\n  port: 1004\n");
            assertEquals(1001, load(Map.of("sandgate.config", file, "sandgate.server.port", "1001"),
                Map.of("SANDGATE_SERVER_PORT", "1002"), Map.of("sandgate.server.port", "1003")).server().port());
            assertEquals(1002, load(Map.of("sandgate.config", file),
                Map.of("SANDGATE_SERVER_PORT", "1002"), Map.of("sandgate.server.port", "1003")).server().port());
        }

        @Test
        void aLowerSourceStillSetsWhatAHigherOneLeavesAlone() throws IOException
        {
            SandgateConfig config = load(Map.of("sandgate.config", yaml("server:\n  host: 127.0.0.2\n"), "sandgate.server.port", "1001"),
                Map.of("SANDGATE_INGRESS_ROUTES_KEY", "env_routes"), Map.of("sandgate.ingress.header", "X-Ctx"));
            assertEquals(1001, config.server().port());
            assertEquals("env_routes", config.ingress().routesKey());
            assertEquals("X-Ctx", config.ingress().header());
            assertEquals("127.0.0.2", config.server().host());
        }

        @Test
        void aHigherSourceOverridesABadLowerValue() throws IOException
        {
            // The bad YAML value is replaced before it is parsed, so it is no problem.
            assertEquals(1001, load(Map.of("sandgate.config", yaml("server.port: abc"), "sandgate.server.port", "1001"),
                Map.of(), Map.of()).server().port());
        }
    }

    // ---------------------------------------------------------------- errors

    @Nested
    class Errors
    {
        @Test
        void unknownYamlKeyWithSuggestion() throws IOException
        {
            String file = yaml("""
                ingress:
                  cookie:
                    nmae: x
                """);
            String p = problem(() -> loadFile(file));
            assertMentions(p, "ingress.cookie.nmae", "unknown setting", file, "did you mean ingress.cookie.name?");
        }

        @Test
        void unknownYamlKeyFarFromAnyKnownOneHasNoSuggestion()
        {
            String p = problem(() -> loadYaml("completely:\n  unrelated: 1\n"));
            assertMentions(p, "completely.unrelated", "unknown setting");
            assertFalse(p.contains("did you mean"), p);
        }

        @Test
        void unknownEnvironmentVariable()
        {
            String p = problem(() -> load(Map.of(), Map.of("SANDGATE_FOO", "1"), Map.of()));
            assertMentions(p, "SANDGATE_FOO", "unknown setting", "expected");
        }

        /** A single bad system property: one problem, naming the setting and what was expected. */
        @ParameterizedTest(name = "{0}")
        @MethodSource("badSystemProperties")
        void badSystemProperty(String scenario, String property, String value, List<String> mentions)
        {
            String p = problem(() -> sys(Map.of(property, value)));
            assertMentions(p, mentions.toArray(String[]::new));
        }

        static Stream<Arguments> badSystemProperties()
        {
            return Stream.of(
                Arguments.of("unknownSystemProperty", "sandgate.foo", "1",
                    List.of("foo", "sandgate.foo", "system property", "unknown setting")),
                Arguments.of("unknownSystemPropertyNearMiss", "sandgate.server.prot", "1",
                    List.of("server.prot", "did you mean server.port?")),
                Arguments.of("badDuration", "sandgate.ingress.idle-timeout", "soon",
                    List.of("ingress.idle-timeout", "'soon'", "expected: a duration such as 500ms, 30s, 5m, 1h or PT1H")),
                Arguments.of("zeroDurationWhereAPositiveOneIsNeeded", "sandgate.ingress.cookie.ttl", "0s",
                    List.of("ingress.cookie.ttl", "> 0")),
                Arguments.of("zeroServerIdleTimeout", "sandgate.server.idle-timeout", "0s",
                    List.of("server.idle-timeout", "> 0")),
                Arguments.of("badEnumListsAllValues", "sandgate.ingress.cookie.secure", "sometimes",
                    List.of("ingress.cookie.secure", "sometimes", "one of auto, always, never")),
                Arguments.of("badBoolean", "sandgate.log.access", "maybe", List.of("log.access", "maybe", "true or false")),
                Arguments.of("badRegex", "sandgate.ingress.id-pattern", "[a-",
                    List.of("ingress.id-pattern", "'[a-'", "expected: a regular expression")),
                Arguments.of("badCidrInTrustedProxies", "sandgate.ingress.trusted-proxies", "10.0.0.0/8,proxy.example.com",
                    List.of("ingress.trusted-proxies", "proxy.example.com", "IP literal")),
                Arguments.of("ipv6PrefixTooShort", "sandgate.server.client-ipv6-prefix", "8",
                    List.of("server.client-ipv6-prefix", "'8'")),
                Arguments.of("ipv6PrefixPastTheAddress", "sandgate.server.client-ipv6-prefix", "129",
                    List.of("server.client-ipv6-prefix", "'129'")),
                Arguments.of("sentinelNodesNeedAMaster", "sandgate.store.redis.sentinel-nodes", "redis://s1:26379",
                    List.of("store.redis.sentinel-master", "expected")),
                Arguments.of("staticRoutesStringWithoutEquals", "sandgate.ingress.static-routes", "1:host:5900",
                    List.of("ingress.static-routes", "k1=v1,k2=v2")));
        }

        @Test
        void unknownContextParam()
        {
            String p = problem(() -> load(Map.of(), Map.of(), Map.of("sandgate.foo", "1")));
            assertMentions(p, "foo", "sandgate.foo", "context-param", "unknown setting");
        }

        @Test
        void unknownKeyInFromValues()
        {
            String p = problem(() -> ConfigLoader.fromValues(Map.of("ingress.prefx", "/x/")));
            assertMentions(p, "ingress.prefx", "unknown setting", "did you mean ingress.prefix?");
        }

        @ParameterizedTest
        @ValueSource(strings = {"abc", "70000", "65536", "-1", "80.5", ""})
        void badPort(String port)
        {
            String p = problem(() -> sys(Map.of("sandgate.server.port", port)));
            assertMentions(p, "server.port", "'" + port + "'", "system property sandgate.server.port",
                "expected: an integer from 0 to 65535");
        }

        @ParameterizedTest
        @ValueSource(strings = {"0", "65535", " 443 "})
        void portBoundsAccepted(String port) throws IOException
        {
            assertEquals(Integer.parseInt(port.trim()), sys(Map.of("sandgate.server.port", port)).server().port());
        }

        @Test
        void badPortFromYamlNamesTheFile() throws IOException
        {
            String file = yaml("server:\n  port: 70000\n");
            String p = problem(() -> loadFile(file));
            assertMentions(p, "server.port", "70000", "YAML " + file, "an integer from 0 to 65535");
        }

        @Test
        void badPortFromEnvironmentNamesTheVariable()
        {
            String p = problem(() -> load(Map.of(), Map.of("SANDGATE_SERVER_PORT", "abc"), Map.of()));
            assertMentions(p, "server.port", "'abc'", "environment variable SANDGATE_SERVER_PORT", "an integer");
        }

        @Test
        void badEnum()
        {
            String p = problem(() -> loadYaml("store:\n  type: mongo\n"));
            assertMentions(p, "store.type", "mongo", "expected: one of memory, redis");
        }

        @ParameterizedTest
        @ValueSource(strings = {"vnc", "/vnc", "vnc/", "/", "//", "/a b/"})
        void prefixWithoutSlashes(String prefix)
        {
            String p = problem(() -> sys(Map.of("sandgate.ingress.prefix", prefix)));
            assertMentions(p, "ingress.prefix", prefix, "starts and ends with '/'");
        }

        @Test
        void nestedPrefixAccepted() throws IOException
        {
            assertEquals("/a/b/", sys(Map.of("sandgate.ingress.prefix", "/a/b/")).ingress().prefix());
        }

        @Test
        void cookieSecretShorterThan16Bytes()
        {
            String secret = "short-Secret-15";
            assertEquals(15, secret.length());
            ConfigException x = fails(() -> sys(Map.of("sandgate.ingress.cookie.secret", secret)));
            assertEquals(1, x.problems().size(), x.problems()::toString);
            assertMentions(x.problems().get(0), "ingress.cookie.secret", "at least 16 bytes");
            assertFalse(x.getMessage().contains(secret), x.getMessage());
        }

        @Test
        void cookieSecretLengthCountsBytesNotCharacters() throws IOException
        {
            String sixteen = "0123456789abcdef";
            assertEquals(sixteen, sys(Map.of("sandgate.ingress.cookie.secret", sixteen)).ingress().cookie().secret().orElseThrow().reveal());
            // 9 characters, 18 bytes in UTF-8.
            String accented = "ééééééééé";
            assertEquals(accented, sys(Map.of("sandgate.ingress.cookie.secret", accented)).ingress().cookie().secret().orElseThrow().reveal());
        }

        @Test
        void explicitConfigFileMissingFromSystemProperty()
        {
            String missing = dir.resolve("nope.yaml").toString();
            String p = problem(() -> ConfigLoader.load(Map.of(), Map.of("sandgate.config", missing), Map.of()));
            assertMentions(p, "config", missing, "does not exist", "expected");
        }

        @Test
        void explicitConfigFileMissingFromEnvironment()
        {
            String missing = dir.resolve("nope-env.yaml").toString();
            String p = problem(() -> ConfigLoader.load(Map.of(), Map.of(), Map.of("SANDGATE_CONFIG", missing)));
            assertMentions(p, "config", missing, "does not exist");
        }

        @Test
        void explicitConfigFileMissingFromContextParam()
        {
            String missing = dir.resolve("nope-ctx.yaml").toString();
            String p = problem(() -> ConfigLoader.load(Map.of("sandgate.config", missing), Map.of(), Map.of()));
            assertMentions(p, "config", missing, "does not exist");
        }

        /** A config file that cannot be read as a map of settings: one problem, naming the file. */
        @ParameterizedTest(name = "{0}")
        @MethodSource("unreadableYaml")
        void unreadableYamlFile(String scenario, String content, List<String> mentions) throws IOException
        {
            String file = yaml(content);
            String p = problem(() -> loadFile(file));
            assertMentions(p, file);
            assertMentions(p, mentions.toArray(String[]::new));
        }

        static Stream<Arguments> unreadableYaml()
        {
            return Stream.of(
                Arguments.of("yamlThatIsNotAMap", "- server\n- ingress\n", List.of("not a map", "expected")),
                Arguments.of("yamlScalarIsNotAMap", "just a string\n", List.of("not a map")),
                Arguments.of("malformedYaml", "server:\n  port: [1, 2\ningress: {\n", List.of("cannot be read")));
        }

        @Test
        void severalProblemsReportedTogether() throws IOException
        {
            String file = yaml("""
                ingress:
                  id-pattern: "[a-"
                  cookie:
                    nmae: x
                """);
            Map<String, String> sys = new LinkedHashMap<>();
            sys.put("sandgate.config", file);
            sys.put("sandgate.server.port", "abc");
            sys.put("sandgate.foo", "1");
            ConfigException x = fails(() -> ConfigLoader.load(Map.of("sandgate.store.type", "mongo"), sys,
                Map.of("SANDGATE_BAR", "1", "SANDGATE_INGRESS_IDLE_TIMEOUT", "soon")));
            List<String> problems = x.problems();
            assertEquals(7, problems.size(), () -> String.join("\n", problems));
            String all = String.join("\n", problems);
            assertMentions(all, "ingress.id-pattern", "ingress.cookie.nmae", "server.port", "sandgate.foo",
                "store.type", "SANDGATE_BAR", "ingress.idle-timeout");
            for (String p : problems)
                assertTrue(x.getMessage().contains(p), () -> "message lacks problem " + p + ":\n" + x.getMessage());
        }
    }

    // ---------------------------------------------------------------- secrets

    @Nested
    class Secrets
    {
        private Map<String, String> allSecrets()
        {
            return Map.of("sandgate.ingress.cookie.secret", COOKIE_SECRET,
                "sandgate.store.redis.password", REDIS_PASSWORD,
                "sandgate.admin.token", ADMIN_TOKEN);
        }

        @Test
        void toStringOfTheConfigRecordsHidesSecrets() throws IOException
        {
            Map<String, String> sys = new HashMap<>(allSecrets());
            sys.put("sandgate.server.port", "9393");
            SandgateConfig config = sys(sys);
            // The secrets really are loaded ...
            assertEquals(COOKIE_SECRET, config.ingress().cookie().secret().orElseThrow().reveal());
            assertEquals(REDIS_PASSWORD, config.store().redis().password().orElseThrow().reveal());
            assertEquals(ADMIN_TOKEN, config.adminToken().orElseThrow().reveal());
            // ... and toString shows the rest of the config but not them.
            String shown = config.toString();
            assertMentions(shown, "9393", "vnc_session_id", "****");
            assertNoSecret(shown);
            assertNoSecret(config.ingress().toString());
            assertNoSecret(config.ingress().cookie().toString());
            assertNoSecret(config.store().toString());
            assertNoSecret(config.store().redis().toString());
            assertNoSecret(config.adminToken().toString());
        }

        @Test
        void secretsFromYamlHiddenInToString() throws IOException
        {
            SandgateConfig config = loadYaml("""
                ingress.cookie.secret: %s
                store.redis.password: %s
                admin.token: %s
                """.formatted(COOKIE_SECRET, REDIS_PASSWORD, ADMIN_TOKEN));
            assertEquals(ADMIN_TOKEN, config.adminToken().orElseThrow().reveal());
            assertNoSecret(config.toString());
        }

        @Test
        void validSecretsAbsentFromMessagesAboutOtherProblems()
        {
            Map<String, String> sys = new HashMap<>(allSecrets());
            sys.put("sandgate.server.port", "abc");
            sys.put("sandgate.ingress.prefix", "nope");
            ConfigException x = fails(() -> sys(sys));
            assertNoSecret(x);
        }

        @Test
        void cookieSecretTooShortNotShown()
        {
            String shortSecret = "tiny-Secret-015";
            ConfigException x = fails(() -> sys(Map.of("sandgate.ingress.cookie.secret", shortSecret)));
            assertFalse(x.getMessage().contains(shortSecret), x.getMessage());
            x.problems().forEach(p -> assertFalse(p.contains(shortSecret), p));
        }

        @Test
        void unparsableSecretsNotShown() throws IOException
        {
            // Secrets given as YAML structures fail to parse; the message must not echo them.
            String file = yaml("""
                ingress:
                  cookie:
                    secret:
                      value: %s
                store:
                  redis:
                    password: [%s]
                admin:
                  token: {x: %s}
                """.formatted(COOKIE_SECRET, REDIS_PASSWORD, ADMIN_TOKEN));
            ConfigException x = fails(() -> loadFile(file));
            assertEquals(3, x.problems().size(), x.problems()::toString);
            assertMentions(String.join("\n", x.problems()), "ingress.cookie.secret", "store.redis.password", "admin.token");
            assertNoSecret(x);
        }

        @Test
        void emptySecretsRejectedWithoutBeingShown()
        {
            ConfigException x = fails(() -> load(Map.of(), Map.of("SANDGATE_ADMIN_TOKEN", "",
                "SANDGATE_STORE_REDIS_PASSWORD", "", "SANDGATE_INGRESS_COOKIE_SECRET", ""), Map.of()));
            assertEquals(3, x.problems().size(), x.problems()::toString);
            String all = String.join("\n", x.problems());
            assertMentions(all, "admin.token", "store.redis.password", "ingress.cookie.secret");
            assertFalse(all.contains("''"), all);
        }

        @Test
        void secretsUnderMisspelledKeysNotShown() throws IOException
        {
            ConfigException x = fails(() -> load(
                Map.of("sandgate.admin.tokne", ADMIN_TOKEN),
                Map.of("SANDGATE_STORE_REDIS_PASSWROD", REDIS_PASSWORD),
                Map.of("sandgate.ingress.cookie.secert", COOKIE_SECRET)));
            assertEquals(3, x.problems().size(), x.problems()::toString);
            assertMentions(String.join("\n", x.problems()), "admin.tokne", "SANDGATE_STORE_REDIS_PASSWROD", "ingress.cookie.secert");
            assertNoSecret(x);
        }

        @Test
        void secretsUnderMisspelledYamlKeysNotShown() throws IOException
        {
            String file = yaml("admin:\n  tokn: %s\n".formatted(ADMIN_TOKEN));
            ConfigException x = fails(() -> loadFile(file));
            assertMentions(x.problems().get(0), "admin.tokn", "did you mean admin.token?");
            assertNoSecret(x);
        }

        @Test
        void secretOnAMalformedYamlLineNotShown() throws IOException
        {
            String file = yaml("admin:\n  token: %s: oops\n".formatted(ADMIN_TOKEN));
            ConfigException x = fails(() -> loadFile(file));
            assertMentions(x.problems().get(0), file, "cannot be read");
            assertNoSecret(x);
        }
    }

    // ---------------------------------------------------------------- durations

    @ParameterizedTest
    @CsvSource({
        "500ms, PT0.5S",
        "30s, PT30S",
        "5m, PT5M",
        "1h, PT1H",
        "1d, PT24H",
        "PT1H, PT1H",
        "P1D, PT24H",
        "PT0.25S, PT0.25S",
        "'  90s ', PT1M30S",
        "'5 m', PT5M"})
    void durationsParse(String text, String expected)
    {
        SandgateConfig config = ConfigLoader.fromValues(Map.of("ingress.idle-timeout", text));
        assertEquals(Duration.parse(expected), config.ingress().idleTimeout());
    }

    @ParameterizedTest
    @ValueSource(strings = {"-5s", "-PT1H", "PT-1H", "soon", "5x", "1.5h", "5 minutes", "1H", "h", "", "ms"})
    void durationsRejected(String text)
    {
        String p = problem(() -> ConfigLoader.fromValues(Map.of("ingress.idle-timeout", text)));
        assertMentions(p, "ingress.idle-timeout", "a duration such as");
    }

    @Test
    void durationFromYamlNumberIsRejected()
    {
        // A bare number has no unit; it must not silently mean seconds or milliseconds.
        String p = problem(() -> loadYaml("ingress:\n  idle-timeout: 30\n"));
        assertMentions(p, "ingress.idle-timeout", "'30'", "a duration");
    }

    // ---------------------------------------------------------------- fromValues

    @Test
    void fromValuesTakesRawAndTypedValues()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("server.port", 9494);
        values.put("store.type", "redis");
        values.put("log.access", false);
        values.put("ingress.trusted-proxies", List.of("127.0.0.1", "::1"));
        values.put("ingress.static-routes", Map.of("7", "127.0.0.1:5907"));
        values.put("admin.token", ADMIN_TOKEN);
        SandgateConfig config = ConfigLoader.fromValues(values);
        assertEquals(9494, config.server().port());
        assertEquals(StoreConfig.Type.REDIS, config.store().type());
        assertFalse(config.accessLog());
        assertEquals(List.of(Cidr.parse("127.0.0.1/32"), Cidr.parse("::1/128")), config.ingress().trustedProxies());
        assertEquals(Map.of("7", "127.0.0.1:5907"), config.ingress().staticRoutes());
        assertEquals(ADMIN_TOKEN, config.adminToken().orElseThrow().reveal());
        assertEquals("none", config.source());
        // Everything not given keeps its default.
        assertEquals("/vnc/", config.ingress().prefix());
        assertNotNull(config.ingress().idPattern());
    }

    @Test
    void fromValuesValidatesLikeLoad()
    {
        ConfigException x = fails(() -> ConfigLoader.fromValues(Map.of("server.port", "abc", "store.type", "mongo")));
        assertEquals(2, x.problems().size(), x.problems()::toString);
        String all = x.problems().stream().collect(Collectors.joining("\n"));
        assertMentions(all, "server.port", "store.type", "one of memory, redis");
    }

    @Test
    void tracing_isOffByDefault_andOnWithACollector()
    {
        TracingConfig off = ConfigLoader.fromValues(Map.of()).tracing();
        assertFalse(off.enabled());
        assertEquals(1.0, off.sampleRatio());
        assertEquals("sandgate", off.serviceName());

        TracingConfig on = ConfigLoader.fromValues(Map.of("tracing.otlp.endpoint", "http://collector:4318", "tracing.sample-ratio", "25%",
            "tracing.service-name", "gateway-eu")).tracing();
        assertTrue(on.enabled());
        assertEquals(URI.create("http://collector:4318"), on.endpoint().orElseThrow());
        assertEquals(0.25, on.sampleRatio());
        assertEquals("gateway-eu", on.serviceName());
    }

    @Test
    void tracing_endpointMustBeAnHttpUrl_andItsValueIsNotEchoed()
    {
        String problem = problem(() -> ConfigLoader.fromValues(Map.of("tracing.otlp.endpoint", "collector:4318")));
        assertMentions(problem, "tracing.otlp.endpoint", "expected: http://host:4318");
        assertFalse(problem.contains("collector"), problem);
        assertMentions(problem(() -> ConfigLoader.fromValues(Map.of("tracing.sample-ratio", "2"))), "tracing.sample-ratio", "a ratio from 0 to 1");
    }
}
