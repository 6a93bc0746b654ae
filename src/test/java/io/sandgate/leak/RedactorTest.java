package io.sandgate.leak;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.leak.FakeKeys.ALNUM;
import static io.sandgate.leak.FakeKeys.chars;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RedactorTest
{
    private final Redactor redactor = Redactor.defaults();

    @ParameterizedTest
    @ValueSource(strings = {"Authorization", "proxy-authorization", "COOKIE", "Set-Cookie", "x-api-key", "X-Goog-Api-Key", "Api-Key"})
    void credentialHeadersAreRedactedWhole(String name)
    {
        assertEquals(Redactor.REDACTED, redactor.headerValue(name, "Bearer anything-at-all"));
    }

    @Test
    void otherHeadersKeepTheirValueWithLeakedKeysRedacted()
    {
        String key = FakeKeys.anthropic();

        assertEquals("curl/8.5", redactor.headerValue("User-Agent", "curl/8.5"));
        assertEquals("note [REDACTED] end", redactor.headerValue("X-Debug", "note " + key + " end"));
        assertNull(redactor.headerValue("Authorization", null));
    }

    @Test
    void secretsEscapedInAUrl_areRedactedThere_andOtherEscapesKept()
    {
        String escaped = FakeKeys.anthropic().replace("-", "%2D");

        assertEquals("/v1/%5BREDACTED%5D/x", redactor.url("/v1/" + escaped + "/x"));
        assertEquals("q=%5BREDACTED%5D&n=%41", redactor.query("q=" + escaped + "&n=%41"));
        assertEquals("/a%20b/%zz", redactor.url("/a%20b/%zz"));
    }

    @Test
    void tokenParametersAreRedactedAndTheRestKept()
    {
        assertEquals("model=gpt&key=[REDACTED]&n=2", redactor.query("model=gpt&key=abc123&n=2"));
        assertEquals("API_KEY=[REDACTED]&Access_Token=[REDACTED]&sig=[REDACTED]", redactor.query("API_KEY=a&Access_Token=b&sig=c"));
        assertEquals("api%5Fkey=[REDACTED]", redactor.query("api%5Fkey=zzz"));
        assertEquals("a=1&&flag&client_secret=[REDACTED]&grant=[REDACTED]", redactor.query("a=1&&flag&client_secret=s&grant=g"));
        assertEquals("", redactor.query(""));
        assertNull(redactor.query(null));
    }

    @Test
    void aParameterNamedInConfiguration_isRedactedToo_andTheDefaultsStill()
    {
        Redactor grants = redactor.withParameter("My_Grant");

        assertEquals("my_grant=[REDACTED]&key=[REDACTED]&n=1", grants.query("my_grant=g&key=k&n=1"));
        assertEquals("my_grant=g", redactor.query("my_grant=g"), "the original is unchanged");
    }

    @Test
    void leakedKeysInOtherParametersAreRedacted()
    {
        String key = FakeKeys.google();

        assertEquals("q=maps&u=[REDACTED]", redactor.query("q=maps&u=" + key));
    }

    @Test
    void textRedactsEveryRuleMatchAndKeepsUnicode()
    {
        String text = "Grüße: " + FakeKeys.aws() + " und " + FakeKeys.privateKey() + " ✓";

        assertEquals("Grüße: [REDACTED] und [REDACTED] ✓", redactor.text(text));
    }

    @Test
    void textWithoutSecretsIsReturnedAsIs()
    {
        String text = "nothing to see in Asia — ask a task-runner";

        assertSame(text, redactor.text(text));
    }

    @Test
    void heldCredentialsAreRedactedAfterTheScannerIsReplaced()
    {
        String held = "gw-" + chars(ALNUM, 32, 93);
        Redactor rotated = redactor.withScanner(redactor.scanner().withLiterals(List.of(held)));

        assertEquals("upstream said " + held, redactor.text("upstream said " + held));
        assertEquals("upstream said [REDACTED]", rotated.text("upstream said " + held));
        assertEquals("t=[REDACTED]", rotated.query("t=" + held));
    }
}
