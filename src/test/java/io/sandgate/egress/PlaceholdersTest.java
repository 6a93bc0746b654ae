package io.sandgate.egress;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.sandgate.testing.PercentEscapes;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpFields;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PlaceholdersTest
{
    private static final Placeholders.Substitution OPENAI = new Placeholders.Substitution("alpha", Map.of("openai", "k+y/1"),
        Map.of("openai", Set.of("k+y/1")), Optional.of("x-api-key"));

    @Test
    void find_locatesEachPlaceholderWhereItStandsAsSent()
    {
        assertEquals(List.of(), Placeholders.find("Bearer sk-nothing-here"));
        assertEquals(List.of(), Placeholders.find(null));
        assertEquals(List.of(new Placeholders.Found("openai", 7, 33)), Placeholders.find("Bearer sandgate-credential:openai"));
        assertEquals(List.of(new Placeholders.Found("openai", 2, 30)), Placeholders.find("k=sandgate-credential%3Aopenai&z=1"));
        assertEquals(List.of(new Placeholders.Found("openai", 0, 26)), Placeholders.find("SandGate-Credential:openai."), "a full stop ends the name");
        assertEquals(List.of(new Placeholders.Found("a.b-c_1", 1, 28), new Placeholders.Found("x", 29, 50)),
            Placeholders.find("xsandgate-credential:a.b-c_1 sandgate-credential:x"));
        assertEquals(List.of(new Placeholders.Found("", 0, 20)), Placeholders.find("sandgate-credential:"));
        assertEquals(List.of(new Placeholders.Found(null, 0, 19)), Placeholders.find("sandgate-credential%253Aopenai"), "escaped twice: no name");
        assertEquals(List.of(), Placeholders.find("sandgate-credentials (sandgate-credential)"), "the word alone is no placeholder");
        assertEquals(List.of(), Placeholders.find("http://sandgate:8080/x?u=sandgate:secret"), "the gateway's own name is no placeholder");
    }

    @Test
    void find_readsEveryEscape()
    {
        String escaped = PercentEscapes.everyByte("sandgate-credential:openai");
        assertEquals(List.of(new Placeholders.Found("openai", 2, 2 + escaped.length())), Placeholders.find("q=" + escaped));
    }

    @Test
    void substitution_replacesInHeadersAsIs_andInTheQueryEncoded()
    {
        assertEquals("Bearer k+y/1", OPENAI.intoHeader("Bearer sandgate-credential:openai"));
        assertEquals("a=1&key=k%2By%2F1&b=%20", OPENAI.intoQuery("a=1&key=SANDGATE-CREDENTIAL%3aopenai&b=%20"));
        assertNull(OPENAI.intoQuery(null));
        GatewayException unresolved = assertThrows(GatewayException.class, () -> OPENAI.intoHeader("sandgate-credential:github"));
        assertEquals(403, unresolved.status());
    }

    @Test
    void applyTo_dropsTheTokenHeader_andReplacesEveryValue()
    {
        HttpFields.Mutable headers = HttpFields.build().add("X-Api-Key", "token").add("Authorization", "Bearer sandgate-credential:openai")
            .add("X-Other", "plain").add("X-Other", "sandgate-credential:openai");
        OPENAI.applyTo(headers);
        assertNull(headers.get("x-api-key"));
        assertEquals("Bearer k+y/1", headers.get("Authorization"));
        assertEquals(List.of("plain", "k+y/1"), headers.getValuesList("X-Other"));
    }
}
