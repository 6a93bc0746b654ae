package io.sandgate.net;

import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The registrable-domain approximation the start-up warning about shared sites goes by. */
class SitesTest
{
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "gw.example.com,            example.com",
        "7.sbx.example.com,         example.com",
        "Example.COM.,              example.com",
        "example.com,               example.com",
        "gw.example.co.uk,          example.co.uk",   // a two-label public suffix
        "7.sbx.example.com.au,      example.com.au",
        "gw.example.localhost,      example.localhost",
        "7.localhost,               7.localhost",
        "localhost,                 localhost",
        "127.0.0.1,                 127.0.0.1",
        "[::1],                     [::1]",
    })
    void theRegistrableDomain_isTheLastTwoLabels_orThreeUnderATwoLabelSuffix(String host, String site)
    {
        assertEquals(site, Sites.registrableDomain(host));
    }

    @ParameterizedTest(name = "{0} with {1}")
    @CsvSource(value = {
        "{id}.sbx.example.localhost;      http://gw.example.localhost:8080;     example.localhost",   // the README's old example
        "{port}-{id}.sbx.example.com;     https://other.example, https://gw.example.com; example.com",
        "{id}.sbx.example-sandboxes.com;  https://gw.example.com;               ",
        "{id}.localhost;                  http://localhost:8080;                ",                    // each sandbox a site of its own
        "{id}.sbx.example.co.uk;          https://gw.other.co.uk;               ",
        "{id}.sbx.example.com;            http://127.0.0.1:8080;                ",
    }, delimiter = ';')
    void aPatternSharesASite_withAPublicOriginOfTheSameRegistrableDomain(String pattern, String origins, String shared)
    {
        assertEquals(shared, Sites.sharedSite(pattern, List.of(origins.split(",\\s*"))));
    }
}
