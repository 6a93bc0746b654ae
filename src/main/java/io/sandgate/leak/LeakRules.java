package io.sandgate.leak;

import java.util.List;

/**
 * The built-in rules: the provider keys an agent sandbox is most likely to hold or be tricked into
 * sending. Shapes follow gitleaks' default configuration, rewritten so that every match starts with
 * its keyword (the scanner anchors there) and every quantifier is bounded (the streaming scanner
 * carries at most {@link LeakRule#maxLength()} bytes across chunks).
 */
public final class LeakRules
{
    /**
     * Not preceded by a letter or digit, so that {@code task-}, {@code disk_test_} or
     * {@code xAKIA...} are not read as keys; a JSON or C escape such as {@code \n} right before the
     * key does not count as a letter.
     */
    private static final String WORD_START = "(?<!(?<!\\\\)[A-Za-z0-9])";

    private LeakRules()
    {
    }

    public static List<LeakRule> defaults()
    {
        return List.of(
            // Legacy keys are sk- and 48 letters/digits with T3BlbkFJ ("OpenAI" in base64) in the
            // middle; project, service-account and admin keys are longer and use - and _ too.
            LeakRule.token("openai-api-key", List.of("sk-"),
                // The look-ahead first measures the whole token, possessively: one pass decides a
                // run that is too short or too long, before the alternatives backtrack over it.
                WORD_START + "sk-(?=[A-Za-z0-9_-]{20,408}+(?![A-Za-z0-9_-]))(?:[A-Za-z0-9_-]{20,200}T3BlbkFJ[A-Za-z0-9_-]{20,200}"
                    + "|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}"
                    + "|[A-Za-z0-9]{48})",
                "[A-Za-z0-9_-]",
                3 + 200 + 8 + 200),
            LeakRule.token("anthropic-api-key", List.of("sk-ant-api03-"),
                "sk-ant-api03-[A-Za-z0-9_-]{93}AA", "[A-Za-z0-9_-]",
                13 + 93 + 2),
            LeakRule.token("anthropic-admin-api-key", List.of("sk-ant-admin01-"),
                "sk-ant-admin01-[A-Za-z0-9_-]{93}AA", "[A-Za-z0-9_-]",
                15 + 93 + 2),
            // Key ids are base32: A-Z and 2-7 only, so a run with lower case or 0, 1, 8, 9 is not one.
            LeakRule.token("aws-access-key-id", List.of("akia", "asia", "abia", "acca"),
                WORD_START + "(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}", "[A-Za-z0-9]",
                20),
            // GitHub documents up to 255 characters for its token formats.
            LeakRule.token("github-token", List.of("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
                "gh[pousr]_[A-Za-z0-9]{36,251}", "[A-Za-z0-9_]",
                255),
            LeakRule.token("github-fine-grained-pat", List.of("github_pat_"),
                "github_pat_[A-Za-z0-9_]{82,244}", "[A-Za-z0-9_]",
                255),
            LeakRule.token("google-api-key", List.of("aiza"),
                "AIza[A-Za-z0-9_-]{35}", "[A-Za-z0-9_-]",
                39),
            // Bot and user tokens carry a numeric team/user id first; legacy and app tokens do not.
            LeakRule.token("slack-token", List.of("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-"),
                "(?:xox[bp]-[0-9]{8,14}-[0-9A-Za-z-]{8,250}"
                    + "|xox[ars]-[0-9A-Za-z-]{10,250}"
                    + "|xapp-[0-9]-[A-Z0-9]{8,20}-[0-9]{8,20}-[A-Za-z0-9]{32,100})",
                "[A-Za-z0-9-]",
                5 + 14 + 1 + 250),
            // Only the part from the host on is redacted; the scheme in front tells nothing.
            LeakRule.token("slack-webhook-url", List.of("hooks.slack.com/"),
                "hooks\\.slack\\.com/(?:services/T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{24,32}"
                    + "|(?:workflows|triggers)/[A-Za-z0-9+/]{43,56})",
                "[A-Za-z0-9]",
                16 + 9 + 13 + 1 + 13 + 1 + 32),
            LeakRule.token("stripe-api-key", List.of("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
                WORD_START + "[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}", "[A-Za-z0-9]",
                8 + 247),
            // The whole PEM block up to its END line, so that redaction removes the key body too.
            // An RSA-4096 PKCS#8 key is about 3.2 KB; 8 KB leaves room for comments and headers.
            // The block ends at the first END line: a body never contains one, and searching past
            // it for another would make every repeated BEGIN line cost a full window.
            LeakRule.block("private-key", List.of("-----begin"),
                "-----BEGIN[ A-Z0-9_-]{0,64}PRIVATE KEY(?: BLOCK)?-----",
                "-----END",
                "-----END[ A-Z0-9_-]{0,64}PRIVATE KEY(?: BLOCK)?-----",
                16,
                (10 + 64 + 11 + 6 + 5) + 8192 + (8 + 64 + 11 + 6 + 5)));
    }
}
