package io.sandgate.leak;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.leak.FakeKeys.ALNUM;
import static io.sandgate.leak.FakeKeys.chars;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LeakScannerTest
{
    private static final LeakScanner SCANNER = LeakScanner.defaults();
    /** Multi-byte UTF-8 around the key: offsets must count bytes and splits may cut characters. */
    private static final String PREFIX = "{\"model\":\"gpt\",\"messages\":[{\"role\":\"user\",\"content\":\"Grüße — ключ: ";
    private static final String SUFFIX = " ✓ fin\"}]}";

    private static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * {@code key} as the content of a chat message: where it starts and ends, and the one hit a scan
     * reports. Keys are ASCII, so a key's length in characters is its length in bytes.
     */
    private record InMessage(byte[] body, int start, int end, List<LeakHit> hits)
    {
        static InMessage of(String ruleId, String key)
        {
            int start = utf8(PREFIX).length;
            int end = start + key.length();
            return new InMessage(utf8(PREFIX + key + SUFFIX), start, end, List.of(new LeakHit(ruleId, start, end)));
        }
    }

    /** Everything a stream reports and emits for {@code body} cut at {@code cuts}. */
    private record Run(List<LeakHit> hits, byte[] output)
    {
    }

    private static Run run(LeakScanner scanner, LeakScanner.Mode mode, byte[] body, int... cuts)
    {
        LeakScanner.Stream stream = scanner.stream(mode);
        List<LeakHit> hits = new ArrayList<>();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int from = 0;
        for (int cut : cuts)
        {
            collect(stream.feed(ByteBuffer.wrap(body, from, cut - from)), hits, out);
            from = cut;
        }
        collect(stream.feed(ByteBuffer.wrap(body, from, body.length - from)), hits, out);
        collect(stream.finish(), hits, out);
        return new Run(hits, out.toByteArray());
    }

    private static void collect(LeakScanner.Chunk chunk, List<LeakHit> hits, ByteArrayOutputStream out)
    {
        hits.addAll(chunk.hits());
        ByteBuffer output = chunk.output();
        byte[] bytes = new byte[output.remaining()];
        output.get(bytes);
        out.writeBytes(bytes);
    }

    // ---------------------------------------------------------------- whole bodies

    @Test
    void scanReportsByteOffsetsInOrder()
    {
        String first = FakeKeys.aws();
        String second = FakeKeys.openAiProject();
        byte[] body = utf8(PREFIX + first + " und " + second + SUFFIX);
        int at = utf8(PREFIX).length;
        int secondAt = at + first.length() + " und ".length();

        List<LeakHit> hits = SCANNER.scan(body);

        assertEquals(List.of(
            new LeakHit("aws-access-key-id", at, at + first.length()),
            new LeakHit("openai-api-key", secondAt, secondAt + second.length())), hits);
    }

    @Test
    void scanOfAByteBufferCountsFromItsPositionAndLeavesItThere()
    {
        String key = FakeKeys.google();
        ByteBuffer buffer = ByteBuffer.wrap(utf8("xxxx" + "k=" + key));
        buffer.position(4);

        assertEquals(List.of(new LeakHit("google-api-key", 2, 2 + key.length())), SCANNER.scan(buffer));
        assertEquals(4, buffer.position());
    }

    @Test
    void redactReplacesEachSecretAndKeepsTheRestByteForByte()
    {
        byte[] body = utf8(PREFIX + FakeKeys.stripe() + " / " + FakeKeys.slackBot() + SUFFIX);

        assertArrayEquals(utf8(PREFIX + "[REDACTED] / [REDACTED]" + SUFFIX), SCANNER.redact(body));
    }

    @Test
    void bodyWithoutSecretsIsUnchanged()
    {
        byte[] body = utf8("Ask a task-runner about Asia: sk-short, AKIA, ghp_, -----BEGIN CERTIFICATE----- and more " + PREFIX);

        assertEquals(List.of(), SCANNER.scan(body));
        assertArrayEquals(body, SCANNER.redact(body));
    }

    // ---------------------------------------------------------------- streams

    @Test
    void keySplitAcrossTwoChunksIsFoundAtEverySplitOffset()
    {
        InMessage message = InMessage.of("openai-api-key", FakeKeys.openAiProject());

        for (int split = 0; split <= message.body().length; split++)
            assertEquals(message.hits(), run(SCANNER, LeakScanner.Mode.REPORT, message.body(), split).hits(), "split at " + split);
    }

    @Test
    void keySplitAcrossThreeChunksIsFound()
    {
        InMessage message = InMessage.of("anthropic-api-key", FakeKeys.anthropic());

        for (int first = message.start() - 3; first <= message.end(); first++)
        {
            for (int second = first; second <= message.end() + 3; second += 3)
                assertEquals(message.hits(), run(SCANNER, LeakScanner.Mode.REPORT, message.body(), first, second).hits(),
                    "splits " + first + ", " + second);
        }
    }

    @Test
    void redactOutputEqualsTheInputWithTheKeyReplacedAtEverySplit()
    {
        byte[] body = utf8(PREFIX + FakeKeys.github() + SUFFIX);
        byte[] expected = utf8(PREFIX + Redactor.REDACTED + SUFFIX);

        for (int split = 0; split <= body.length; split++)
        {
            Run run = run(SCANNER, LeakScanner.Mode.REDACT, body, split);
            assertArrayEquals(expected, run.output(), "split at " + split);
            assertEquals(1, run.hits().size(), "split at " + split);
        }
    }

    @Test
    void everyRuleRedactsTheSameAtEverySplitAsOnTheWholeBody()
    {
        // Early decisions must not change results: each key, and near-misses, at every split.
        String body = PREFIX + FakeKeys.openAiLegacy() + " task-" + FakeKeys.aws() + "x " + FakeKeys.slackBot()
            + " -----BEGIN CERTIFICATE----- " + FakeKeys.githubFineGrained() + " sk_live_short " + FakeKeys.google() + SUFFIX;
        byte[] bytes = utf8(body);
        byte[] whole = SCANNER.redact(bytes);
        List<LeakHit> hits = SCANNER.scan(bytes);

        for (int split = 0; split <= bytes.length; split++)
        {
            Run run = run(SCANNER, LeakScanner.Mode.REDACT, bytes, split);
            assertArrayEquals(whole, run.output(), "split at " + split);
            assertEquals(hits, run.hits(), "split at " + split);
        }
    }

    @Test
    void privateKeyLongerThanAChunkIsRedactedWhole()
    {
        byte[] body = utf8(PREFIX + FakeKeys.privateKey() + SUFFIX);
        int[] cuts = new int[body.length / 100];
        for (int i = 0; i < cuts.length; i++)
            cuts[i] = (i + 1) * 100;

        Run run = run(SCANNER, LeakScanner.Mode.REDACT, body, cuts);

        assertEquals("private-key", run.hits().get(0).ruleId());
        assertArrayEquals(utf8(PREFIX + Redactor.REDACTED + SUFFIX), run.output());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void streamedEventsWithoutSecretsAreWrittenOnInTheStepTheyArrive(boolean withHeldCredential)
    {
        // Server-sent events: each is one chunk, and a client waits for its closing blank line.
        LeakScanner scanner = withHeldCredential ? SCANNER.withLiterals(List.of("gw-" + chars(ALNUM, 37, 93))) : SCANNER;
        String[] events = {
            "data: {\"delta\":\"a task-based plan, risk-free\"}\n\n",
            "data: {\"delta\":\"-----\"}\n\n",
            "data: {\"delta\":\"-----BEGIN CERTIFICATE-----\"}\n\n",
            "event: ping\ndata: sk- or AKIA or ghp_ alone\n\n",
            "data: {\"delta\":\"ask-me, disk-full, desk-top\"}\n\n"};
        LeakScanner.Stream stream = scanner.stream(LeakScanner.Mode.REDACT);
        for (int round = 0; round < 3; round++)
        {
            for (String event : events)
            {
                byte[] bytes = utf8(event);
                ByteBuffer output = stream.feed(ByteBuffer.wrap(bytes)).output();

                assertEquals(ByteBuffer.wrap(bytes), output, "round " + round + ": " + event);
            }
        }
    }

    @Test
    void aKeywordAtTheEndOfAChunkIsHeldOnlyUntilTheNextByteDecidesIt()
    {
        LeakScanner.Stream stream = SCANNER.stream(LeakScanner.Mode.REDACT);

        assertEquals(ByteBuffer.wrap(utf8("data: ")), stream.feed(ByteBuffer.wrap(utf8("data: sk-"))).output());
        assertEquals(ByteBuffer.wrap(utf8("sk- no\n\n")), stream.feed(ByteBuffer.wrap(utf8(" no\n\n"))).output());
    }

    @Test
    void byteByByteFeedingReportsEachHitOnce()
    {
        byte[] body = utf8(PREFIX + FakeKeys.slackWebhook() + " " + FakeKeys.aws() + SUFFIX);
        int[] cuts = new int[body.length - 1];
        for (int i = 0; i < cuts.length; i++)
            cuts[i] = i + 1;

        Run run = run(SCANNER, LeakScanner.Mode.REDACT, body, cuts);

        assertEquals(SCANNER.scan(body), run.hits());
        assertEquals(2, run.hits().size());
        assertArrayEquals(utf8(PREFIX + Redactor.REDACTED + " " + Redactor.REDACTED + SUFFIX), run.output());
    }

    @Test
    void reportModePassesTheChunkThroughUnchanged()
    {
        byte[] body = utf8(PREFIX + FakeKeys.aws() + SUFFIX);
        ByteBuffer chunk = ByteBuffer.wrap(body);

        LeakScanner.Stream stream = SCANNER.stream(LeakScanner.Mode.REPORT);
        LeakScanner.Chunk result = stream.feed(chunk);

        assertEquals(ByteBuffer.wrap(body), result.output());
        assertEquals(0, chunk.position());
        assertEquals(1, result.hits().size());
        assertEquals(0, stream.finish().output().remaining());
    }

    @Test
    void onlyReportAndRedactModesExist()
    {
        // A pass-through "block" mode would send a split key's first half before the second
        // arrived; blocking routes use REDACT, which holds those bytes back.
        assertEquals(List.of(LeakScanner.Mode.REPORT, LeakScanner.Mode.REDACT), List.of(LeakScanner.Mode.values()));
    }

    @Test
    void feedingAfterFinishFails()
    {
        LeakScanner.Stream stream = SCANNER.stream(LeakScanner.Mode.REPORT);
        stream.finish();

        assertThrows(IllegalStateException.class, () -> stream.feed(ByteBuffer.allocate(1)));
    }

    // ---------------------------------------------------------------- held credentials

    @Test
    void heldCredentialIsFoundAndRotatesOut()
    {
        String oldKey = "gw-" + chars(ALNUM, 40, 90);
        String newKey = "gw-" + chars(ALNUM, 40, 91);
        LeakScanner before = SCANNER.withLiterals(List.of(oldKey));
        LeakScanner after = before.withLiterals(List.of(newKey));
        byte[] body = utf8(PREFIX + oldKey + " " + newKey + SUFFIX);
        int at = utf8(PREFIX).length;

        assertEquals(List.of(new LeakHit(LeakScanner.CREDENTIAL_RULE, at, at + oldKey.length())), before.scan(body));
        int newAt = at + oldKey.length() + 1;
        assertEquals(List.of(new LeakHit(LeakScanner.CREDENTIAL_RULE, newAt, newAt + newKey.length())), after.scan(body));
        assertEquals(List.of(), SCANNER.scan(body));
    }

    @Test
    void heldCredentialIsFoundAcrossEverySplitAndMatchedCaseSensitively()
    {
        String key = "Sg_" + chars(ALNUM, 90, 92) + "é";
        LeakScanner scanner = SCANNER.withLiterals(List.of(key, "short"));
        byte[] body = utf8(PREFIX + key.toLowerCase() + " " + key + SUFFIX);
        byte[] expected = utf8(PREFIX + key.toLowerCase() + " " + Redactor.REDACTED + SUFFIX);

        assertEquals(1, scanner.literalCount());
        for (int split = 0; split <= body.length; split++)
        {
            Run run = run(scanner, LeakScanner.Mode.REDACT, body, split);
            assertEquals(1, run.hits().size(), "split at " + split);
            assertArrayEquals(expected, run.output(), "split at " + split);
        }
    }

    @Test
    void heldCredentialThatIsAlsoARuleMatchIsReportedByBothAndRedactedOnce()
    {
        String key = FakeKeys.openAiLegacy();
        LeakScanner scanner = SCANNER.withLiterals(List.of(key));
        byte[] body = utf8("a " + key + " b");

        List<LeakHit> hits = scanner.scan(body);

        assertEquals(2, hits.size());
        assertEquals(List.of("openai-api-key", LeakScanner.CREDENTIAL_RULE).stream().sorted().toList(),
            hits.stream().map(LeakHit::ruleId).sorted().toList());
        assertArrayEquals(utf8("a [REDACTED] b"), scanner.redact(body));
    }

    @Test
    void heldSecretsAreReportedUnderTheRuleTheyAreListedUnder()
    {
        String key = "gw-" + chars(ALNUM, 40, 93);
        String token = "sgt_" + chars(ALNUM, 30, 94);
        Map<String, List<String>> held = new LinkedHashMap<>();
        held.put(LeakScanner.CREDENTIAL_RULE, List.of(key));
        held.put(LeakScanner.AGENT_TOKEN_RULE, List.of(token, key));
        LeakScanner scanner = SCANNER.withLiterals(held);
        byte[] body = utf8("a " + token + " b " + key + " c");

        assertEquals(2, scanner.literalCount(), "a value listed twice is looked for once, under its first rule");
        assertEquals(List.of(new LeakHit(LeakScanner.AGENT_TOKEN_RULE, 2, 2 + token.length()),
            new LeakHit(LeakScanner.CREDENTIAL_RULE, 5 + token.length(), 5 + token.length() + key.length())), scanner.scan(body));
        assertArrayEquals(utf8("a [REDACTED] b [REDACTED] c"), scanner.redact(body));
        assertThrows(IllegalArgumentException.class, () -> SCANNER.withLiterals(Map.of("openai-api-key", List.of(key))),
            "a literal's rule id is none of the rules'");
    }

    // ---------------------------------------------------------------- memory

    @Test
    void memoryPerStreamIsBoundedByTheLongestMatchNotTheBody()
    {
        // Keyword-rich prose: every line starts candidates that are tried and dropped.
        byte[] line = utf8("Ask the task-runner in Asia about sk- keys, ghp_ tokens and -----BEGIN CERTIFICATE----- blocks. ");
        byte[] chunk = new byte[8192];
        for (int i = 0; i < chunk.length; i++)
            chunk[i] = line[i % line.length];
        String key = FakeKeys.anthropic();
        LeakScanner.Stream stream = SCANNER.stream(LeakScanner.Mode.REDACT);
        long emitted = 0;
        int maxHeld = 0;
        int chunks = 4096;
        for (int i = 0; i < chunks; i++)
        {
            emitted += stream.feed(ByteBuffer.wrap(chunk)).output().remaining();
            maxHeld = Math.max(maxHeld, stream.held());
        }
        LeakScanner.Chunk last = stream.feed(ByteBuffer.wrap(utf8(" " + key + " ")));
        LeakScanner.Chunk end = stream.finish();
        emitted += last.output().remaining() + end.output().remaining();

        assertTrue(maxHeld <= SCANNER.maxMatchLength() + chunk.length + 8, "held " + maxHeld);
        assertEquals(1, last.hits().size() + end.hits().size());
        assertEquals((long)chunks * chunk.length + 2 + Redactor.REDACTED.length(), emitted);
        assertEquals((long)chunks * chunk.length + key.length() + 2, stream.offset());
    }

    @Test
    void rulesWithDuplicateOrReservedIdsAreRefused()
    {
        LeakRule rule = LeakRules.defaults().get(0);
        LeakRule reserved = LeakRule.of(LeakScanner.CREDENTIAL_RULE, List.of("x"), "x", 1);
        LeakRule token = LeakRule.of(LeakScanner.AGENT_TOKEN_RULE, List.of("x"), "x", 1);

        assertThrows(IllegalArgumentException.class, () -> LeakScanner.of(List.of(rule, rule)));
        assertThrows(IllegalArgumentException.class, () -> LeakScanner.of(List.of(reserved)));
        assertThrows(IllegalArgumentException.class, () -> LeakScanner.of(List.of(token)));
        assertThrows(IllegalArgumentException.class, () -> LeakRule.of("r", List.of("abcdef"), "abcdef", 3));
    }
}
