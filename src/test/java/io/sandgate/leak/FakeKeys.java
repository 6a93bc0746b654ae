package io.sandgate.leak;

import java.util.Random;

/**
 * Key-shaped test strings, assembled at run time: the sources never contain a whole key, so
 * secret scanners watching the repository have nothing to flag.
 */
final class FakeKeys
{
    static final String ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static final String URL_SAFE = ALNUM + "_-";
    static final String BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    static final String UPPER_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static final String DIGITS = "0123456789";
    static final String HEX = "0123456789abcdef";
    static final String BASE64 = ALNUM + "+/";

    private FakeKeys()
    {
    }

    /** {@code n} characters from {@code alphabet}, the same for the same seed. */
    static String chars(String alphabet, int n, long seed)
    {
        Random random = new Random(seed);
        StringBuilder s = new StringBuilder(n);
        for (int i = 0; i < n; i++)
            s.append(alphabet.charAt(random.nextInt(alphabet.length())));
        return s.toString();
    }

    static String openAiProject()
    {
        return "sk" + "-proj-" + chars(URL_SAFE, 74, 1) + "T3Blbk" + "FJ" + chars(URL_SAFE, 74, 2);
    }

    static String openAiLegacy()
    {
        return "sk" + "-" + chars(ALNUM, 20, 3) + "T3Blbk" + "FJ" + chars(ALNUM, 20, 4);
    }

    static String anthropic()
    {
        return "sk" + "-ant-" + "api03-" + chars(URL_SAFE, 93, 5) + "AA";
    }

    static String anthropicAdmin()
    {
        return "sk" + "-ant-" + "admin01-" + chars(URL_SAFE, 93, 6) + "AA";
    }

    static String aws()
    {
        return "AK" + "IA" + chars(BASE32, 16, 7);
    }

    static String github()
    {
        return "gh" + "p_" + chars(ALNUM, 36, 8);
    }

    static String githubFineGrained()
    {
        return "github" + "_pat_" + chars(ALNUM, 22, 9) + "_" + chars(ALNUM, 59, 10);
    }

    static String google()
    {
        return "AI" + "za" + chars(URL_SAFE, 35, 11);
    }

    static String slackBot()
    {
        return "xo" + "xb-" + chars(DIGITS, 12, 12) + "-" + chars(DIGITS, 13, 13) + "-" + chars(ALNUM, 24, 14);
    }

    static String slackWebhook()
    {
        return "hooks" + ".slack.com/services/T" + chars(UPPER_ALNUM, 10, 15) + "/B" + chars(UPPER_ALNUM, 10, 16)
            + "/" + chars(ALNUM, 24, 17);
    }

    static String stripe()
    {
        return "sk" + "_live_" + chars(ALNUM, 99, 18);
    }

    static String privateKey()
    {
        StringBuilder body = new StringBuilder();
        for (int line = 0; line < 25; line++)
            body.append(chars(BASE64, 64, 100 + line)).append('\n');
        return "-----BEGIN " + "RSA PRIVATE" + " KEY-----\n" + body + "-----END " + "RSA PRIVATE" + " KEY-----";
    }
}
