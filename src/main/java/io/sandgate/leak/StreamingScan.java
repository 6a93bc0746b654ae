package io.sandgate.leak;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.leak.LeakScanner.Chunk;
import io.sandgate.leak.LeakScanner.Mode;

/**
 * The state of one {@link LeakScanner.Stream}: the bytes held back, the candidates still open
 * across chunk boundaries and what was learnt about them, over a scanner's compiled rules.
 *
 * <p>A candidate is decided as soon as more input cannot change the outcome: a literal at its
 * first differing byte, a pattern once it fails or matches without having read to the end of
 * what has arrived ({@link Matcher#hitEnd()}). So in REDACT mode the output lags the input only
 * by a keyword's first bytes and by candidates that are really still open, not by a rule's
 * whole {@code maxLength}: ordinary words such as {@code task-} cost nothing, and a streamed
 * event is written on in the same step it arrived.</p>
 */
final class StreamingScan extends LeakScanner.Stream
{
    /** Patterns may look this many bytes behind a match (see {@link LeakRules}). */
    private static final int LOOK_BEHIND = 2;

    private static final byte[] REDACTED = Redactor.REDACTED.getBytes(StandardCharsets.US_ASCII);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private static final Comparator<Candidate> BY_START = Comparator.comparingLong(Candidate::start).thenComparingInt(Candidate::target);
    private static final Comparator<LeakHit> HIT_ORDER = Comparator.comparingLong(LeakHit::start).thenComparing(Comparator.comparingLong(LeakHit::end).reversed());

    private final LeakScanner scanner;
    private final List<LeakRule> rules;
    private final KeywordAutomaton automaton;
    private final Mode mode;
    private final Latin1View view = new Latin1View();
    private final Matcher[] matchers;
    private final Matcher[] closingMatchers;
    /** Per rule: where its last hit ended; its pattern is not tried again before that. */
    private final long[] lastHitEnd;
    /** Per block rule: the last search for its closing keyword (see {@link #nextClosing}). */
    private final ClosingSearch[] closingSearches;
    /** Per rule, during one evaluation: an earlier candidate of the rule is still open. */
    private final boolean[] ruleWaits;
    /** Per rule: a run of its boundary bytes, as far as measured (see {@link #runOutlastsWindow}). */
    private final BoundaryRun[] boundaryRuns;
    private List<Candidate> pending = new ArrayList<>();
    /** REDACT: hits not yet written out. */
    private final List<LeakHit> unreleased = new ArrayList<>();
    /** Stream offset of view.bytes[0]. */
    private long base;
    /** REDACT: stream offset up to which output has been produced. */
    private long released;
    private int state;
    private boolean finished;
    /** Bytes compared with literals or searched for closing keywords (patterns' reads are in view). */
    private long compared;

    StreamingScan(LeakScanner scanner, Mode mode)
    {
        this.scanner = scanner;
        this.mode = mode;
        rules = scanner.rules();
        automaton = scanner.automaton();
        matchers = new Matcher[rules.size()];
        closingMatchers = new Matcher[rules.size()];
        lastHitEnd = new long[rules.size()];
        closingSearches = new ClosingSearch[rules.size()];
        ruleWaits = new boolean[rules.size()];
        boundaryRuns = new BoundaryRun[rules.size()];
        state = automaton.start();
    }

    @Override
    public Mode mode()
    {
        return mode;
    }

    @Override
    public long offset()
    {
        return base + view.length;
    }

    @Override
    public int held()
    {
        return view.length;
    }

    @Override
    long examined()
    {
        return view.reads + compared;
    }

    @Override
    public Chunk feed(ByteBuffer chunk)
    {
        if (finished)
            throw new IllegalStateException("stream already finished");
        ByteBuffer in = chunk.slice();
        int from = append(in);
        List<LeakHit> hits = new ArrayList<>();
        state = automaton.run(state, view.bytes, from, view.length, (id, end) ->
        {
            for (int target : scanner.targets(id))
                pending.add(new Candidate(base + end - scanner.keywordLength(id), target));
        });
        evaluate(false, hits);
        ByteBuffer output = mode == Mode.REDACT ? release(false) : chunk.slice().asReadOnlyBuffer();
        return new Chunk(output, hits);
    }

    @Override
    public Chunk finish()
    {
        if (finished)
            throw new IllegalStateException("stream already finished");
        finished = true;
        List<LeakHit> hits = new ArrayList<>();
        evaluate(true, hits);
        ByteBuffer output = mode == Mode.REDACT ? release(true) : EMPTY;
        base += view.length;
        view.length = 0;
        return new Chunk(output, hits);
    }

    /** Drops bytes no one can need any more, then appends the chunk; returns where it starts. */
    private int append(ByteBuffer in)
    {
        long keep = base + view.length - automaton.depth(state) - LOOK_BEHIND;
        for (Candidate c : pending)
            keep = Math.min(keep, c.start() - LOOK_BEHIND);
        if (mode == Mode.REDACT)
            keep = Math.min(keep, released);
        int drop = (int)Math.max(0, keep - base);
        if (drop > 0)
        {
            System.arraycopy(view.bytes, drop, view.bytes, 0, view.length - drop);
            view.length -= drop;
            base += drop;
        }
        int needed = view.length + in.remaining();
        if (needed > view.bytes.length)
            view.bytes = Arrays.copyOf(view.bytes, Math.max(needed, view.bytes.length * 2));
        int from = view.length;
        in.get(view.bytes, from, in.remaining());
        view.length = needed;
        return from;
    }

    /** Decides every candidate that can be decided now (all of them at the end). */
    private void evaluate(boolean atEnd, List<LeakHit> hits)
    {
        if (pending.isEmpty())
            return;
        pending.sort(BY_START);
        Arrays.fill(ruleWaits, false);
        List<Candidate> waiting = new ArrayList<>();
        Candidate previous = null;
        for (Candidate c : pending)
        {
            if (c.equals(previous))
                continue;
            previous = c;
            int target = c.target();
            boolean isRule = target < rules.size();
            // A rule's candidates are decided in order of start, as a whole-body scan meets
            // them, so that lastHitEnd hides exactly the candidates inside an earlier hit.
            boolean decided = isRule && ruleWaits[target] ? false : decide(c, atEnd, hits);
            if (!decided)
            {
                waiting.add(c);
                if (isRule)
                    ruleWaits[target] = true;
            }
        }
        pending = waiting;
        hits.sort(HIT_ORDER);
    }

    /** Tries one candidate; false if more input could still change the outcome. */
    private boolean decide(Candidate c, boolean atEnd, List<LeakHit> hits)
    {
        int at = (int)(c.start() - base);
        int target = c.target();
        if (target >= rules.size())
            return decideLiteral(c, target, atEnd, hits);
        // As a whole-body regex scan would: no new match inside this rule's last one.
        if (c.start() < lastHitEnd[target])
            return true;
        LeakRule rule = rules.get(target);
        if (runOutlastsWindow(c, target, rule))
            return true;
        long windowEnd = c.start() + rule.maxLength();
        // The pattern may read one byte past the window, for its look-ahead.
        boolean windowComplete = atEnd || windowEnd < offset();
        Matcher m = matcher(matchers, target, rule.pattern());
        m.region(at, (int)Math.min(view.length, windowEnd - base));
        boolean found = m.lookingAt() && m.end() > m.start();
        // Having read to the end of what arrived, the pattern might fail or match longer on more.
        if (m.hitEnd() && !windowComplete)
            return false;
        if (!found)
            return true;
        if (rule.closing().isEmpty())
        {
            report(new LeakHit(rule.id(), c.start(), base + m.end()), target, hits);
            return true;
        }
        return decideBlock(c, target, rule, base + m.end(), windowEnd, atEnd, hits);
    }

    /**
     * Whether the bytes from the end of the candidate's keyword up to and including the one
     * just past its window are all boundary bytes: then no match can end in the window, as a
     * match is never followed by one. The run is measured once and remembered: candidates of a
     * rule come in order of start, so one keyword repeated over a megabyte is read about once
     * here instead of one window per keyword by the pattern.
     */
    private boolean runOutlastsWindow(Candidate c, int target, LeakRule rule)
    {
        boolean[] boundary = scanner.boundaryBytes(target);
        if (boundary == null)
            return false;
        long last = c.start() + rule.maxLength();
        // The byte past the window decides too; until it arrives the pattern decides.
        if (last >= offset())
            return false;
        long from = c.start() + scanner.shortestKeyword(target);
        BoundaryRun run = boundaryRuns[target];
        if (run == null)
        {
            run = new BoundaryRun();
            boundaryRuns[target] = run;
        }
        if (from < run.from || from > run.to)
        {
            run.from = from;
            run.to = from;
            run.ended = false;
        }
        while (!run.ended && run.to <= last)
        {
            compared++;
            if (boundary[view.bytes[(int)(run.to - base)] & 0xFF])
                run.to++;
            else
                run.ended = true;
        }
        return run.to > last;
    }

    /** A block whose opening line ends at {@code openingEnd}: finds and checks its closing line. */
    private boolean decideBlock(Candidate c, int target, LeakRule rule, long openingEnd, long windowEnd,
                                boolean atEnd, List<LeakHit> hits)
    {
        LeakRule.Closing closing = rule.closing().orElseThrow();
        byte[] keyword = scanner.closingKeyword(target);
        long at = nextClosing(target, keyword, openingEnd + closing.minGap());
        // None yet: decided once every place a closing line could start in the window has arrived.
        if (at < 0)
            return atEnd || offset() >= windowEnd;
        if (at + keyword.length > windowEnd)
            return true;
        boolean windowComplete = atEnd || windowEnd < offset();
        Matcher m = matcher(closingMatchers, target, closing.pattern());
        m.region((int)(at - base), (int)Math.min(view.length, windowEnd - base));
        boolean found = m.lookingAt();
        if (m.hitEnd() && !windowComplete)
            return false;
        if (found)
            report(new LeakHit(rule.id(), c.start(), base + m.end()), target, hits);
        return true;
    }

    /**
     * Stream offset of the first occurrence of a block's closing keyword at or after
     * {@code from}, or -1 if none has arrived yet. The last search is remembered: candidates
     * of one rule come in order of start, so each byte is searched about once, however many
     * opening lines share one closing line.
     */
    private long nextClosing(int target, byte[] keyword, long from)
    {
        ClosingSearch memo = closingSearches[target];
        if (memo == null)
        {
            memo = new ClosingSearch();
            closingSearches[target] = memo;
        }
        long searchFrom = from;
        if (memo.from <= from && from <= memo.to)
        {
            // No occurrence starts in [memo.from, memo.to).
            if (memo.found)
                return memo.to;
            searchFrom = memo.to;
        }
        else if (from < memo.from && memo.from <= memo.to)
        {
            // Slightly further back than last time (a shorter opening line): search the gap only.
            long hit = search(keyword, from, Math.min(memo.from, offset()));
            if (hit >= 0)
            {
                memo.set(from, hit, true);
                return hit;
            }
            memo.from = from;
            if (memo.found)
                return memo.to;
            searchFrom = memo.to;
        }
        else
        {
            memo.from = from;
        }
        long hit = search(keyword, searchFrom, offset());
        if (hit >= 0)
        {
            memo.set(memo.from, hit, true);
            return hit;
        }
        memo.set(memo.from, Math.max(searchFrom, offset() - keyword.length + 1), false);
        return -1;
    }

    /** First start in [from, to) of {@code keyword} wholly inside the arrived bytes, or -1. */
    private long search(byte[] keyword, long from, long to)
    {
        int last = (int)(Math.min(to, offset() - keyword.length + 1) - base);
        byte first = keyword[0];
        for (int i = (int)(from - base); i < last; i++)
        {
            compared++;
            if (view.bytes[i] == first && Arrays.equals(view.bytes, i, i + keyword.length, keyword, 0, keyword.length))
                return base + i;
        }
        return -1;
    }

    private boolean decideLiteral(Candidate c, int target, boolean atEnd, List<LeakHit> hits)
    {
        byte[] literal = scanner.literal(target);
        int at = (int)(c.start() - base);
        int available = Math.min(literal.length, view.length - at);
        compared += available;
        // A differing byte decides at once; an equal prefix waits for the rest.
        if (!Arrays.equals(view.bytes, at, at + available, literal, 0, available))
            return true;
        if (available < literal.length)
            return atEnd;
        report(new LeakHit(scanner.literalRule(target), c.start(), c.start() + literal.length), -1, hits);
        return true;
    }

    private Matcher matcher(Matcher[] cache, int target, Pattern pattern)
    {
        Matcher m = cache[target];
        if (m == null)
        {
            m = pattern.matcher(view);
            m.useTransparentBounds(true).useAnchoringBounds(false);
            cache[target] = m;
        }
        return m;
    }

    private void report(LeakHit hit, int rule, List<LeakHit> hits)
    {
        if (rule >= 0)
            lastHitEnd[rule] = hit.end();
        hits.add(hit);
        if (mode == Mode.REDACT)
            unreleased.add(hit);
    }

    /**
     * REDACT: the bytes that no secret found later can overlap, with found ones replaced. A
     * later match starts at a pending candidate or in a keyword not yet complete, which can
     * only be the automaton's current depth of bytes at the end.
     */
    private ByteBuffer release(boolean atEnd)
    {
        long end = base + view.length;
        long safe = end;
        if (!atEnd)
        {
            safe = end - automaton.depth(state);
            for (Candidate c : pending)
                safe = Math.min(safe, c.start());
        }
        unreleased.sort(HIT_ORDER);
        long cursor = released;
        Output out = new Output((int)Math.max(0, safe - cursor) + REDACTED.length * unreleased.size());
        int done = 0;
        for (LeakHit hit : unreleased)
        {
            if (hit.start() >= safe)
                break;
            if (hit.start() >= cursor)
            {
                out.write(view.bytes, (int)(cursor - base), (int)(hit.start() - cursor));
                out.write(REDACTED, 0, REDACTED.length);
            }
            // A hit overlapping the previous one extends the redacted range; one marker covers both.
            cursor = Math.max(cursor, hit.end());
            done++;
        }
        unreleased.subList(0, done).clear();
        if (cursor < safe)
        {
            out.write(view.bytes, (int)(cursor - base), (int)(safe - cursor));
            cursor = safe;
        }
        released = cursor;
        return out.toBuffer();
    }

    /** A candidate: target (rule or literal) whose keyword starts at {@code start}. */
    private record Candidate(long start, int target)
    {
    }

    /**
     * What a stream last learnt about where a block's closing keyword occurs: none starts in
     * [from, to); one starts at {@code to} if {@code found}, else the search stopped there.
     */
    private static final class ClosingSearch
    {
        long from = Long.MAX_VALUE;
        long to = Long.MIN_VALUE;
        boolean found;

        void set(long from, long to, boolean found)
        {
            this.from = from;
            this.to = to;
            this.found = found;
        }
    }

    /**
     * Bytes [from, to) of the stream are all boundary bytes of a rule; if {@code ended}, the byte
     * at {@code to} is not one.
     */
    private static final class BoundaryRun
    {
        long from = Long.MAX_VALUE;
        long to = Long.MIN_VALUE;
        boolean ended;
    }

    /** A growable byte array for one step's output. */
    private static final class Output
    {
        private byte[] bytes;
        private int length;

        Output(int capacity)
        {
            bytes = new byte[Math.max(16, capacity)];
        }

        void write(byte[] source, int offset, int count)
        {
            if (length + count > bytes.length)
                bytes = Arrays.copyOf(bytes, Math.max(length + count, bytes.length * 2));
            System.arraycopy(source, offset, bytes, length, count);
            length += count;
        }

        ByteBuffer toBuffer()
        {
            return ByteBuffer.wrap(bytes, 0, length).slice().asReadOnlyBuffer();
        }
    }

    /**
     * The held bytes as characters, ISO-8859-1, without copying. Patterns only see it through
     * regions set right before each match, so the array and length may change between matches.
     */
    private static final class Latin1View implements CharSequence
    {
        byte[] bytes = new byte[8192];
        int length;
        /** Characters patterns have read: the work done beyond the automaton, for tests. */
        long reads;

        @Override
        public int length()
        {
            return length;
        }

        @Override
        public char charAt(int index)
        {
            reads++;
            return (char)(bytes[index] & 0xFF);
        }

        @Override
        public CharSequence subSequence(int start, int end)
        {
            return new String(bytes, start, end - start, StandardCharsets.ISO_8859_1);
        }

        @Override
        public String toString()
        {
            return new String(bytes, 0, length, StandardCharsets.ISO_8859_1);
        }
    }
}
