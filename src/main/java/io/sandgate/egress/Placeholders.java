package io.sandgate.egress;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.ListIterator;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;

import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Credential placeholders: {@code sandgate-credential:<credential>} written where a tool puts its
 * API key, in a header value or the query, stands for the real key of that credential, which the
 * gateway puts in its place at the hosts the credential is bound to ({@link Credentials#placeholders}).
 * The prefix is long and spelled out because any text that has it is taken for a placeholder: a
 * shorter {@code sandgate:} is how a URL names the gateway's own service ({@code http://sandgate:8080}),
 * and a word, a colon and a name look like no key to a leak scanner.
 *
 * <p>A placeholder is found wherever its prefix stands, in any case ({@code SANDGATE-CREDENTIAL:}), plain or
 * with escapes ({@code sandgate-credential%3Aopenai}: SDKs escape the colon of a query value), inside a word
 * too: what matters is that no copy of it is ever forwarded as text, so any such text either
 * names a credential the agent may use at that host or refuses the request. The name is compared
 * as configured, case included. The prefix followed by an escape that is still one once decoded
 * ({@code sandgate-credential%253A}) is refused too: a target that decodes twice would read a placeholder.
 * The shape holds no secret and no leak rule matches it, so the leak scanner reads the request as
 * the agent sent it and the key goes in afterwards, where nothing reads it for leaks.
 */
public final class Placeholders
{
    /** What every placeholder begins with, compared in any case. */
    static final String PREFIX = "sandgate-credential:";
    private static final String WORD = PREFIX.substring(0, PREFIX.length() - 1);

    /**
     * One placeholder where it stands.
     *
     * @param name the credential it names; empty when the prefix is followed by no name; null when
     *        it is escaped twice, and names nothing that can be read
     * @param start where it starts in the text as sent
     * @param end where it ends in the text as sent
     */
    public record Found(String name, int start, int end)
    {
    }

    /**
     * The keys a request's placeholders stand for.
     *
     * @param agent the agent whose internal token the request carried
     * @param keys credential name to the key put in its placeholders' place
     * @param held credential name to its keys valid now (current and overlapping), which the
     *        target must not hand back to the agent
     * @param tokenHeader the header that carried the agent's internal token, which stops at the
     *        gateway; empty when the request had no placeholder
     */
    public record Substitution(String agent, Map<String, String> keys, Map<String, Set<String>> held, Optional<String> tokenHeader)
    {
        /** A request without placeholders. */
        static final Substitution NONE = new Substitution("", Map.of(), Map.of(), Optional.empty());

        public Substitution
        {
            keys = Map.copyOf(keys);
            held = Map.copyOf(held);
        }

        boolean isEmpty()
        {
            return keys.isEmpty();
        }

        /** Whether the header ends here: the one that carried the token of a request with placeholders. */
        boolean consumes(String headerName)
        {
            return tokenHeader.filter(headerName::equalsIgnoreCase).isPresent();
        }

        /** A header value with each placeholder replaced by its key, as it is. */
        String intoHeader(String value)
        {
            return replace(value, UnaryOperator.identity());
        }

        /** A query with each placeholder replaced by its key, percent-encoded; null stays null. */
        String intoQuery(String query)
        {
            return query == null ? null : replace(query, key -> URLEncoder.encode(key, StandardCharsets.UTF_8));
        }

        /**
         * The request's headers as they go to the target: the token header dropped, placeholders
         * replaced. Applied to what the gateway sends, after a redacting route's redaction.
         */
        void applyTo(HttpFields.Mutable headers)
        {
            if (isEmpty())
                return;
            tokenHeader.ifPresent(headers::remove);
            for (ListIterator<HttpField> fields = headers.listIterator(); fields.hasNext(); )
            {
                HttpField field = fields.next();
                String value = field.getValue();
                String replaced = value == null ? null : intoHeader(value);
                if (replaced != null && !replaced.equals(value))
                    fields.set(new HttpField(field.getName(), replaced));
            }
        }

        private String replace(String text, UnaryOperator<String> encode)
        {
            List<Found> found = find(text);
            if (found.isEmpty())
                return text;
            StringBuilder out = new StringBuilder(text.length() + 64);
            int at = 0;
            for (Found placeholder : found)
            {
                String key = placeholder.name() == null ? null : keys.get(placeholder.name());
                // Resolved beforehand for every value the gateway sends; one that was not is never sent as text.
                if (key == null)
                    throw refused("a credential placeholder could not be resolved; nothing was sent");
                out.append(text, at, placeholder.start()).append(encode.apply(key));
                at = placeholder.end();
            }
            return out.append(text, at, text.length()).toString();
        }

        @Override
        public String toString()
        {
            return "Substitution[" + keys.keySet() + " for " + agent + "]";
        }
    }

    private Placeholders()
    {
    }

    /**
     * Every placeholder in {@code text}, found in its percent-decoded form (each {@code %XX} as the
     * byte it stands for) and located in the text as sent, escapes included.
     */
    static List<Found> find(String text)
    {
        if (text == null || text.indexOf('%') < 0 && !containsWord(text))
            return List.of();
        // The decoded text, one char per byte an escape stands for, and where each char starts in the text as sent.
        StringBuilder decoded = new StringBuilder(text.length());
        int[] from = new int[text.length() + 1];
        int i = 0;
        while (i < text.length())
        {
            from[decoded.length()] = i;
            char c = text.charAt(i);
            if (c == '%' && i + 2 < text.length() && hex(text.charAt(i + 1)) >= 0 && hex(text.charAt(i + 2)) >= 0)
            {
                decoded.append((char)(hex(text.charAt(i + 1)) * 16 + hex(text.charAt(i + 2))));
                i += 3;
            }
            else
            {
                decoded.append(c);
                i++;
            }
        }
        from[decoded.length()] = text.length();
        List<Found> found = new ArrayList<>();
        int at = 0;
        String view = decoded.toString();
        while ((at = indexOfWord(view, at)) >= 0)
        {
            int after = at + WORD.length();
            char next = after < view.length() ? view.charAt(after) : 0;
            if (next == '%')
            {
                found.add(new Found(null, from[at], from[after]));
                at = after;
                continue;
            }
            if (next != ':')
            {
                at = after;
                continue;
            }
            int end = after + 1;
            while (end < view.length() && nameChar(view.charAt(end)))
                end++;
            // A sentence's full stop ends the name rather than joining it.
            while (end > after + 1 && view.charAt(end - 1) == '.')
                end--;
            found.add(new Found(view.substring(after + 1, end), from[at], from[end]));
            at = end;
        }
        return found;
    }

    /** A refusal of a placeholder, 403, in words that quote nothing the agent sent. */
    static GatewayException refused(String message)
    {
        return new GatewayException(HttpStatus.FORBIDDEN_403, "placeholder_refused", message);
    }

    private static boolean containsWord(String text)
    {
        return indexOfWord(text, 0) >= 0;
    }

    private static int indexOfWord(String text, int from)
    {
        for (int i = from; i + WORD.length() <= text.length(); i++)
        {
            if (text.regionMatches(true, i, WORD, 0, WORD.length()))
                return i;
        }
        return -1;
    }

    private static boolean nameChar(char c)
    {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-';
    }

    private static int hex(char c)
    {
        return Character.digit(c, 16);
    }
}
