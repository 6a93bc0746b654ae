package io.sandgate.leak;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Finds secrets in bodies, whole or streamed. Immutable and thread-safe: build it once (and again
 * with {@link #withLiterals(Collection)} when held keys rotate); each {@link Stream} belongs to one
 * exchange and one thread.
 *
 * <p>Bodies are bytes read as ISO-8859-1, so a UTF-8 sequence can never be split or rejected and
 * every offset is a byte offset. One pass of a keyword automaton finds where a rule's keyword
 * starts; only there is the rule's pattern tried, anchored, over at most its
 * {@link LeakRule#maxLength()} bytes. Bodies without keywords cost one table lookup per byte.</p>
 */
public final class LeakScanner
{
    /** Rule id of hits on a credential the gateway itself holds. */
    public static final String CREDENTIAL_RULE = "sandgate-credential";
    /** Rule id of hits on an agent's internal token, which the gateway holds as well. */
    public static final String AGENT_TOKEN_RULE = "sandgate-agent-token";

    /**
     * Held credentials shorter than this are not looked for: they would match ordinary text and
     * redact it, and real provider keys are far longer.
     */
    public static final int MIN_LITERAL_LENGTH = 8;

    /** A held credential is found by its first bytes, then compared in full. */
    private static final int LITERAL_KEYWORD_LENGTH = 32;

    private final List<LeakRule> rules;
    private final List<byte[]> literals;
    /** Per literal: the rule id its hits are reported as. */
    private final List<String> literalRules;
    private final KeywordAutomaton automaton;
    /** Per keyword id: the targets it starts; a target below rules.size() is a rule, else a literal. */
    private final int[][] targetsByKeyword;
    private final int[] keywordLength;
    private final int[] targetLength;
    /** Per rule: its closing keyword's bytes, null for a rule without a closing line. */
    private final byte[][] closingKeywords;
    /** Per rule: which bytes never follow its match ({@link LeakRule#boundary()}), null if unknown. */
    private final boolean[][] boundaryBytes;
    /** Per rule: its shortest keyword's length, where a run of boundary bytes is measured from. */
    private final int[] shortestKeyword;
    private final int longestMatch;

    private LeakScanner(List<LeakRule> rules, List<byte[]> literals, List<String> literalRules)
    {
        this.rules = List.copyOf(rules);
        this.literals = List.copyOf(literals);
        this.literalRules = List.copyOf(literalRules);
        List<byte[]> keywords = new ArrayList<>();
        List<List<Integer>> targets = new ArrayList<>();
        int target = 0;
        for (LeakRule rule : this.rules)
        {
            for (String keyword : rule.keywords())
                addKeyword(keywords, targets, keyword.getBytes(StandardCharsets.ISO_8859_1), target);
            target++;
        }
        for (byte[] literal : this.literals)
        {
            addKeyword(keywords, targets, Arrays.copyOf(literal, Math.min(literal.length, LITERAL_KEYWORD_LENGTH)), target);
            target++;
        }
        automaton = new KeywordAutomaton(keywords);
        targetsByKeyword = targets.stream().map(t -> t.stream().mapToInt(Integer::intValue).toArray()).toArray(int[][]::new);
        keywordLength = keywords.stream().mapToInt(k -> k.length).toArray();
        targetLength = new int[target];
        int longest = 0;
        for (int i = 0; i < target; i++)
        {
            targetLength[i] = i < this.rules.size() ? this.rules.get(i).maxLength() : this.literals.get(i - this.rules.size()).length;
            longest = Math.max(longest, targetLength[i]);
        }
        longestMatch = longest;
        closingKeywords = this.rules.stream()
            .map(rule -> rule.closing().map(LeakRule.Closing::keywordBytes).orElse(null))
            .toArray(byte[][]::new);
        boundaryBytes = this.rules.stream().map(LeakRule::boundaryBytes).toArray(boolean[][]::new);
        shortestKeyword = this.rules.stream()
            .mapToInt(rule -> rule.keywords().stream().mapToInt(String::length).min().orElseThrow())
            .toArray();
    }

    private static void addKeyword(List<byte[]> keywords, List<List<Integer>> targets, byte[] keyword, int target)
    {
        byte[] folded = keyword.clone();
        for (int i = 0; i < folded.length; i++)
            folded[i] = (byte)KeywordAutomaton.fold(folded[i] & 0xFF);
        for (int i = 0; i < keywords.size(); i++)
        {
            if (Arrays.equals(keywords.get(i), folded))
            {
                targets.get(i).add(target);
                return;
            }
        }
        keywords.add(folded);
        targets.add(new ArrayList<>(List.of(target)));
    }

    /** A scanner with the built-in {@link LeakRules#defaults() rules} and no held credentials. */
    public static LeakScanner defaults()
    {
        return of(LeakRules.defaults());
    }

    public static LeakScanner of(List<LeakRule> rules)
    {
        Objects.requireNonNull(rules, "rules");
        Set<String> ids = new LinkedHashSet<>();
        for (LeakRule rule : rules)
        {
            if (rule.id().equals(CREDENTIAL_RULE) || rule.id().equals(AGENT_TOKEN_RULE) || !ids.add(rule.id()))
                throw new IllegalArgumentException("rule id: " + rule.id() + " (expected: unique, not " + CREDENTIAL_RULE + " or " + AGENT_TOKEN_RULE + ")");
        }
        return new LeakScanner(rules, List.of(), List.of());
    }

    /**
     * The same rules, looking for exactly these held credentials instead of the previous literals
     * (reported as {@link #CREDENTIAL_RULE}).
     *
     * @see #withLiterals(Map)
     */
    public LeakScanner withLiterals(Collection<String> values)
    {
        return withLiterals(Map.of(CREDENTIAL_RULE, values));
    }

    /**
     * The same rules, looking for exactly these held secrets instead of the previous literals, each
     * reported as the rule id it is listed under ({@link #CREDENTIAL_RULE}, {@link #AGENT_TOKEN_RULE}).
     * Values are matched as their UTF-8 bytes, case sensitively; blank values and values shorter
     * than {@link #MIN_LITERAL_LENGTH} are skipped; a value listed under two ids is reported as the
     * first, in the map's order.
     */
    public LeakScanner withLiterals(Map<String, ? extends Collection<String>> valuesByRule)
    {
        List<byte[]> bytes = new ArrayList<>();
        List<String> ruleIds = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (Map.Entry<String, ? extends Collection<String>> entry : new LinkedHashMap<>(valuesByRule).entrySet())
        {
            String ruleId = entry.getKey();
            if (ruleId == null || ruleId.isBlank() || rules.stream().anyMatch(rule -> rule.id().equals(ruleId)))
                throw new IllegalArgumentException("literal rule id: " + ruleId + " (expected: none of the rules' ids)");
            for (String value : entry.getValue())
            {
                if (value != null && value.strip().length() >= MIN_LITERAL_LENGTH && seen.add(value))
                {
                    bytes.add(value.getBytes(StandardCharsets.UTF_8));
                    ruleIds.add(ruleId);
                }
            }
        }
        return new LeakScanner(rules, bytes, ruleIds);
    }

    public List<LeakRule> rules()
    {
        return rules;
    }

    /** How many held secrets (credentials and tokens) are looked for. */
    public int literalCount()
    {
        return literals.size();
    }

    /** The longest match of any rule or held credential: what a stream may have to carry. */
    public int maxMatchLength()
    {
        return longestMatch;
    }

    /** All hits in {@code body}, ordered by start. */
    public List<LeakHit> scan(byte[] body)
    {
        return scan(ByteBuffer.wrap(body));
    }

    /** All hits in the buffer's remaining bytes, offsets from its position, which is not moved. */
    public List<LeakHit> scan(ByteBuffer body)
    {
        Stream stream = stream(Mode.REPORT);
        List<LeakHit> hits = new ArrayList<>(stream.feed(body).hits());
        hits.addAll(stream.finish().hits());
        return hits;
    }

    /** {@code body} with every hit replaced by {@link Redactor#REDACTED}. */
    public byte[] redact(byte[] body)
    {
        Stream stream = stream(Mode.REDACT);
        ByteBuffer first = stream.feed(ByteBuffer.wrap(body)).output();
        ByteBuffer last = stream.finish().output();
        byte[] out = new byte[first.remaining() + last.remaining()];
        first.get(out, 0, first.remaining());
        last.get(out, out.length - last.remaining(), last.remaining());
        return out;
    }

    public Stream stream(Mode mode)
    {
        return new StreamingScan(this, Objects.requireNonNull(mode, "mode"));
    }

    /**
     * A stream that reads a body both as sent and percent-decoded ({@link PercentDecoded}), as a
     * target decoding a form or a cookie would read it, and passes on the bytes as sent. It holds
     * back what a {@link Mode#REDACT} stream holds back, but cannot cut a match spelt in escapes out
     * of the bytes as sent: from its first hit on it releases nothing, and the caller refuses the
     * exchange.
     */
    public Stream decodedStream()
    {
        return new PercentDecodedStream(stream(Mode.REDACT), stream(Mode.REDACT));
    }

    // What a stream reads of the compiled rules. A target below rules().size() is a rule, else a
    // held credential; the arrays are shared, never written after construction.

    KeywordAutomaton automaton()
    {
        return automaton;
    }

    /** The targets whose keyword is keyword {@code id} of the automaton. */
    int[] targets(int id)
    {
        return targetsByKeyword[id];
    }

    int keywordLength(int id)
    {
        return keywordLength[id];
    }

    /** The bytes of the held secret that {@code target} stands for. */
    byte[] literal(int target)
    {
        return literals.get(target - rules.size());
    }

    /** The rule id the held secret that {@code target} stands for is reported as. */
    String literalRule(int target)
    {
        return literalRules.get(target - rules.size());
    }

    byte[] closingKeyword(int rule)
    {
        return closingKeywords[rule];
    }

    boolean[] boundaryBytes(int rule)
    {
        return boundaryBytes[rule];
    }

    int shortestKeyword(int rule)
    {
        return shortestKeyword[rule];
    }

    /** What a stream does about what it finds. */
    public enum Mode
    {
        /**
         * Report hits; the exchange goes on. Output is the input, unchanged, so a caller that
         * must stop a secret before any of it leaves (a blocking route) uses {@link #REDACT}
         * and refuses the exchange on the first hit: only REDACT holds back a key's first bytes.
         */
        REPORT,
        /**
         * Replace each hit by {@link Redactor#REDACTED}. Output lags the input by the bytes that
         * could still turn out to start a secret, and is complete after {@link Stream#finish()}.
         */
        REDACT
    }

    /**
     * What one step of a stream produced.
     *
     * @param output the bytes to write on, in order, for this step (read-only)
     * @param hits hits first known in this step, ordered by start, each reported exactly once
     */
    public record Chunk(ByteBuffer output, List<LeakHit> hits)
    {
        public Chunk
        {
            Objects.requireNonNull(output, "output");
            hits = List.copyOf(hits);
        }
    }

    /**
     * Scans one body fed in chunks. A match may straddle any number of chunk boundaries: the
     * stream keeps the bytes a pending match could still need, which is bounded by
     * {@link #maxMatchLength()} plus the chunk being fed, however long the body is. In REDACT
     * mode the output lags the input only by bytes that could still start a secret.
     */
    public abstract static sealed class Stream permits StreamingScan, PercentDecodedStream
    {
        Stream()
        {
        }

        public abstract Mode mode();

        /** Bytes fed so far. */
        public abstract long offset();

        /** Bytes currently held back (memory use is about this plus the largest chunk). */
        public abstract int held();

        /**
         * Bytes examined beyond the automaton's one lookup per byte: characters read by patterns
         * (re-reads on backtracking count again), bytes compared with held credentials and bytes
         * searched for a block's closing line. Tests bound it to catch super-linear inputs.
         */
        abstract long examined();

        /**
         * Scans the chunk's remaining bytes; its position is not moved. In REDACT mode the output
         * holds what can be written now, else it is the chunk itself.
         */
        public abstract Chunk feed(ByteBuffer chunk);

        /** Decides what is still pending at the end of the body. Feeding afterwards fails. */
        public abstract Chunk finish();
    }
}
