package io.sandgate.leak;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Aho-Corasick automaton over bytes, ASCII letters folded to lower case: one table lookup per
 * input byte finds every keyword at once, however many rules and held credentials there are. The
 * transition table is complete (failure links are resolved at build time) and indexed by byte
 * class rather than byte value, which keeps it small when many long keywords are loaded.
 */
final class KeywordAutomaton
{
    /** Marks a transition into a state where at least one keyword ends. */
    private static final int ACCEPTS = Integer.MIN_VALUE;

    private final int[] byteClass = new int[256];
    private final int classes;
    /** {@code next[state + class]}; states are pre-multiplied by {@code classes}. */
    private final int[] next;
    /** Keyword ids ending in each state (indexed by state / classes), null for none. */
    private final int[][] endings;
    /**
     * Per state (indexed by state / classes): how many of the last bytes it stands for, that is the
     * length of the longest suffix of the input that is a prefix of some keyword. A stream must
     * keep those bytes, as a keyword may still complete over them; it need keep no more.
     */
    private final int[] depth;

    KeywordAutomaton(List<byte[]> keywords)
    {
        int classCount = 1;
        for (byte[] keyword : keywords)
        {
            for (byte b : keyword)
            {
                int folded = fold(b & 0xFF);
                if (byteClass[folded] == 0)
                    byteClass[folded] = classCount++;
            }
        }
        for (int c = 'A'; c <= 'Z'; c++)
            byteClass[c] = byteClass[c + ('a' - 'A')];
        classes = classCount;

        int maxStates = 1;
        for (byte[] keyword : keywords)
            maxStates += keyword.length;
        int[][] children = new int[maxStates][];
        int[] depths = new int[maxStates];
        List<List<Integer>> out = new ArrayList<>();
        children[0] = new int[classes];
        out.add(new ArrayList<>());
        int states = 1;
        for (int id = 0; id < keywords.size(); id++)
        {
            int state = 0;
            for (byte b : keywords.get(id))
            {
                int c = byteClass[b & 0xFF];
                if (children[state][c] == 0)
                {
                    children[states] = new int[classes];
                    depths[states] = depths[state] + 1;
                    out.add(new ArrayList<>());
                    children[state][c] = states++;
                }
                state = children[state][c];
            }
            out.get(state).add(id);
        }

        // Breadth-first: a state's failure target is shallower, so it is complete when needed.
        int[] fail = new int[states];
        int[][] delta = new int[states][];
        delta[0] = children[0].clone();
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        for (int c = 0; c < classes; c++)
        {
            if (children[0][c] != 0)
                queue.add(children[0][c]);
        }
        while (!queue.isEmpty())
        {
            int state = queue.poll();
            out.get(state).addAll(out.get(fail[state]));
            delta[state] = new int[classes];
            for (int c = 0; c < classes; c++)
            {
                int child = children[state][c];
                if (child != 0)
                {
                    fail[child] = delta[fail[state]][c];
                    delta[state][c] = child;
                    queue.add(child);
                }
                else
                {
                    delta[state][c] = delta[fail[state]][c];
                }
            }
        }

        depth = Arrays.copyOf(depths, states);
        next = new int[states * classes];
        endings = new int[states][];
        for (int s = 0; s < states; s++)
        {
            List<Integer> ids = out.get(s);
            endings[s] = ids.isEmpty() ? null : ids.stream().mapToInt(Integer::intValue).sorted().distinct().toArray();
        }
        for (int s = 0; s < states; s++)
        {
            for (int c = 0; c < classes; c++)
            {
                int target = delta[s][c];
                next[s * classes + c] = target * classes | (endings[target] != null ? ACCEPTS : 0);
            }
        }
    }

    static int fold(int b)
    {
        return b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b;
    }

    /** The state before any input. */
    int start()
    {
        return 0;
    }

    /** How many of the last bytes run may still be the start of a keyword, in {@code state}. */
    int depth(int state)
    {
        return depth[state / classes];
    }

    /**
     * Runs {@code data[from, to)} from {@code state} and tells {@code sink} the index just past
     * each keyword's end. Returns the state to continue with on the next chunk.
     */
    int run(int state, byte[] data, int from, int to, Sink sink)
    {
        int s = state;
        int[] table = next;
        int[] classOf = byteClass;
        for (int i = from; i < to; i++)
        {
            int t = table[s + classOf[data[i] & 0xFF]];
            s = t & ~ACCEPTS;
            if (t < 0)
            {
                for (int id : endings[s / classes])
                    sink.keyword(id, i + 1);
            }
        }
        return s;
    }

    interface Sink
    {
        void keyword(int id, int end);
    }

    @Override
    public String toString()
    {
        return "KeywordAutomaton[states=" + endings.length + ", classes=" + classes + ", accepting=" + Arrays.stream(endings).filter(e -> e != null).count() + "]";
    }
}
