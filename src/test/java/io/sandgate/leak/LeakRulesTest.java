package io.sandgate.leak;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static io.sandgate.leak.FakeKeys.ALNUM;
import static io.sandgate.leak.FakeKeys.BASE32;
import static io.sandgate.leak.FakeKeys.BASE64;
import static io.sandgate.leak.FakeKeys.DIGITS;
import static io.sandgate.leak.FakeKeys.HEX;
import static io.sandgate.leak.FakeKeys.UPPER_ALNUM;
import static io.sandgate.leak.FakeKeys.URL_SAFE;
import static io.sandgate.leak.FakeKeys.chars;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LeakRulesTest
{
    private static final LeakScanner SCANNER = LeakScanner.defaults();

    /** Per rule: strings that are entirely one secret of that rule. */
    private static final Map<String, List<String>> POSITIVE = Map.ofEntries(
        Map.entry("openai-api-key", List.of(
            FakeKeys.openAiProject(),
            FakeKeys.openAiLegacy(),
            "sk" + "-svcacct-" + chars(URL_SAFE, 60, 20),
            "sk" + "-" + chars(ALNUM, 48, 21))),
        Map.entry("anthropic-api-key", List.of(FakeKeys.anthropic())),
        Map.entry("anthropic-admin-api-key", List.of(FakeKeys.anthropicAdmin())),
        Map.entry("aws-access-key-id", List.of(
            FakeKeys.aws(),
            "AS" + "IA" + chars(BASE32, 16, 22),
            "AB" + "IA" + chars(BASE32, 16, 23),
            "AC" + "CA" + chars(BASE32, 16, 24))),
        Map.entry("github-token", List.of(
            FakeKeys.github(),
            "gh" + "o_" + chars(ALNUM, 36, 25),
            "gh" + "u_" + chars(ALNUM, 36, 26),
            "gh" + "s_" + chars(ALNUM, 36, 27),
            "gh" + "r_" + chars(ALNUM, 76, 28))),
        Map.entry("github-fine-grained-pat", List.of(FakeKeys.githubFineGrained())),
        Map.entry("google-api-key", List.of(FakeKeys.google())),
        Map.entry("slack-token", List.of(
            FakeKeys.slackBot(),
            "xo" + "xp-" + chars(DIGITS, 11, 29) + "-" + chars(DIGITS, 11, 30) + "-" + chars(DIGITS, 12, 31) + "-" + chars(HEX, 32, 32),
            "xo" + "xa-" + "2-" + chars(ALNUM, 30, 33),
            "xo" + "xr-" + chars(ALNUM, 40, 34),
            "xo" + "xs-" + chars(DIGITS, 10, 35) + "-" + chars(DIGITS, 10, 36) + "-" + chars(HEX, 64, 37),
            "xa" + "pp-1-" + chars(UPPER_ALNUM, 11, 38) + "-" + chars(DIGITS, 13, 39) + "-" + chars(HEX, 64, 40))),
        Map.entry("slack-webhook-url", List.of(
            FakeKeys.slackWebhook(),
            "hooks" + ".slack.com/workflows/" + chars(ALNUM, 48, 41))),
        Map.entry("stripe-api-key", List.of(
            FakeKeys.stripe(),
            "sk" + "_test_" + chars(ALNUM, 24, 42),
            "rk" + "_live_" + chars(ALNUM, 99, 43),
            "rk" + "_prod_" + chars(ALNUM, 30, 44))),
        Map.entry("private-key", List.of(
            FakeKeys.privateKey(),
            "-----BEGIN " + "PRIVATE" + " KEY-----\\n" + chars(BASE64, 64, 45) + "\\n-----END " + "PRIVATE" + " KEY-----",
            "-----BEGIN " + "OPENSSH PRIVATE" + " KEY-----\n" + chars(BASE64, 300, 46) + "\n-----END " + "OPENSSH PRIVATE" + " KEY-----")));

    /** Per rule: look-alikes that no rule may match. */
    private static final Map<String, List<String>> NEGATIVE = Map.ofEntries(
        Map.entry("openai-api-key", List.of(
            "sk" + "-" + chars(ALNUM, 10, 50),
            "sk" + "-" + chars(ALNUM, 60, 51),
            "task" + "-" + chars(ALNUM, 48, 52),
            "sk" + "-proj-" + chars(ALNUM, 12, 53),
            "SK" + "-" + chars(ALNUM, 48, 54))),
        Map.entry("anthropic-api-key", List.of(
            "sk" + "-ant-api03-" + chars(URL_SAFE, 50, 55),
            "sk" + "-ant-api03-" + chars(URL_SAFE, 93, 56) + "AB")),
        Map.entry("anthropic-admin-api-key", List.of(
            "sk" + "-ant-admin01-" + chars(URL_SAFE, 40, 57) + "AA",
            "sk" + "-ant-admin02-" + chars(URL_SAFE, 93, 58) + "AA")),
        Map.entry("aws-access-key-id", List.of(
            "AK" + "IA" + chars("abcdefghijklmnopqrstuvwxyz", 16, 59),
            "x" + "AK" + "IA" + chars(BASE32, 16, 60),
            "AK" + "IA" + chars(BASE32, 15, 61),
            "AK" + "IA" + chars(BASE32, 17, 62),
            "AK" + "IA" + "0189" + chars(BASE32, 12, 63),
            "Asia and Akiak are places")),
        Map.entry("github-token", List.of(
            "gh" + "p_" + chars(ALNUM, 30, 64),
            "gh" + "x_" + chars(ALNUM, 36, 65),
            "GH" + "P_" + chars(ALNUM, 36, 66))),
        Map.entry("github-fine-grained-pat", List.of(
            "github" + "_pat_" + chars(ALNUM, 40, 67))),
        Map.entry("google-api-key", List.of(
            "AI" + "za" + chars(URL_SAFE, 30, 68),
            "AI" + "za" + chars(ALNUM, 40, 69),
            "ai" + "za" + chars(ALNUM, 35, 70))),
        Map.entry("slack-token", List.of(
            "xo" + "xb-12-" + chars(ALNUM, 5, 71),
            "xo" + "xq-" + chars(DIGITS, 12, 72) + "-" + chars(ALNUM, 24, 73),
            "xa" + "pp-1-" + chars(UPPER_ALNUM, 11, 74) + "-12-ab")),
        Map.entry("slack-webhook-url", List.of(
            "https://hooks" + ".slack.com/services/T123/B456/abc",
            "https://hooks" + ".slack.com/")),
        Map.entry("stripe-api-key", List.of(
            "disk" + "_test_" + "performance_results_2024",
            "mask" + "_live_" + chars(ALNUM, 30, 75),
            "sk" + "_live_" + "short",
            "pk" + "_live_" + chars(ALNUM, 99, 76))),
        Map.entry("private-key", List.of(
            "-----BEGIN " + "PUBLIC KEY-----\n" + chars(BASE64, 200, 77) + "\n-----END " + "PUBLIC KEY-----",
            "-----BEGIN " + "CERTIFICATE-----\n" + chars(BASE64, 200, 78) + "\n-----END " + "CERTIFICATE-----",
            "-----BEGIN " + "RSA PRIVATE" + " KEY-----\n" + chars(BASE64, 200, 79) + "\n(truncated)")));

    static Stream<Arguments> positives()
    {
        return POSITIVE.entrySet().stream().flatMap(e -> e.getValue().stream().map(v -> Arguments.of(e.getKey(), v)));
    }

    static Stream<Arguments> negatives()
    {
        return NEGATIVE.entrySet().stream().flatMap(e -> e.getValue().stream().map(v -> Arguments.of(e.getKey(), v)));
    }

    private static List<LeakHit> scan(String text)
    {
        return SCANNER.scan(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void everyRuleHasPositiveAndNegativeExamples()
    {
        Set<String> ids = LeakRules.defaults().stream().map(LeakRule::id).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(ids, new TreeSet<>(POSITIVE.keySet()));
        assertEquals(ids, new TreeSet<>(NEGATIVE.keySet()));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("positives")
    void positiveMatchesExactlyTheSecret(String rule, String secret)
    {
        String prefix = "{\"messages\":[{\"role\":\"user\",\"content\":\"here it is: ";
        String text = prefix + secret + "\"}]}";

        List<LeakHit> hits = scan(text);

        assertEquals(List.of(new LeakHit(rule, prefix.length(), prefix.length() + secret.length())), hits);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("positives")
    void positiveIsFoundAfterAnEscapedNewlineAndAtTheEdges(String rule, String secret)
    {
        assertEquals(List.of(new LeakHit(rule, 0, secret.length())), scan(secret));
        assertEquals(List.of(new LeakHit(rule, 6, 6 + secret.length())), scan("line\\n" + secret + "\\n"));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("positives")
    void everyMatchStartsWithAKeywordAndFitsMaxLength(String ruleId, String secret)
    {
        LeakRule rule = LeakRules.defaults().stream().filter(r -> r.id().equals(ruleId)).findFirst().orElseThrow();
        String lower = secret.toLowerCase(Locale.ROOT);
        assertTrue(rule.keywords().stream().anyMatch(lower::startsWith), secret);
        assertTrue(secret.length() <= rule.maxLength(), secret.length() + " > " + rule.maxLength());
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("negatives")
    void lookAlikeMatchesNoRule(String rule, String text)
    {
        assertEquals(List.of(), scan("value: " + text + " end"));
    }

    @Test
    void keywordsAreFoundWhateverTheirCaseButPatternsStayCaseSensitive()
    {
        String key = FakeKeys.github();

        assertEquals(1, scan("Token " + key).size());
        assertEquals(0, scan("Token " + key.toUpperCase(Locale.ROOT).replace("GHP_", "GHp_")).size());
    }
}
