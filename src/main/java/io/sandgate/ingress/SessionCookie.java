package io.sandgate.ingress;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The session cookie's value: the sandboxes this browser has opened, most recent first, each entry
 * {@code base64url(id).expiry.signature}, joined by {@code ~}. Several entries let two tabs on two
 * sandboxes share one browser; the first entry is the sandbox an id-less request with no Referer
 * goes to (noVNC 1.3's fixed WebSocket path).
 */
final class SessionCookie
{
    static final String PURPOSE = "sandgate-session-v1";
    private static final int MAX_PRESENTED = 32;
    private static final int VERIFIED_CACHE_SIZE = 65_536;

    private final Signer signer;
    private final IdSyntax ids;
    private final Duration ttl;
    private final int maxEntries;
    private final Clock clock;
    /**
     * Entries whose signature has been checked, by their exact text. A browser presents the same
     * cookie on every request of a session, and the HMAC is most of the cost of routing one; a
     * forged or malformed entry is never cached, and expiry is still checked on every use.
     */
    private final Map<String, Entry> verified = new ConcurrentHashMap<>();

    SessionCookie(Signer signer, IdSyntax ids, Duration ttl, int maxEntries, Clock clock)
    {
        this.signer = signer;
        this.ids = ids;
        this.ttl = ttl;
        this.maxEntries = maxEntries;
        this.clock = clock;
    }

    /** One sandbox the bearer may reach, until {@code expires} (epoch seconds). */
    record Entry(String id, long expires)
    {
    }

    /**
     * What a request's cookies say.
     *
     * @param entries valid, unexpired entries, most recent first
     * @param forged whether some value was malformed or carried a wrong signature
     * @param expired whether some genuine entry had expired
     */
    record Decoded(List<Entry> entries, boolean forged, boolean expired)
    {
        static final Decoded NONE = new Decoded(List.of(), false, false);

        boolean contains(String id)
        {
            for (Entry entry : entries)
            {
                if (entry.id().equals(id))
                    return true;
            }
            return false;
        }

        boolean isFirst(String id)
        {
            return !entries.isEmpty() && entries.get(0).id().equals(id);
        }
    }

    Decoded decode(List<String> values)
    {
        if (values.isEmpty())
            return Decoded.NONE;
        long now = clock.instant().getEpochSecond();
        List<Entry> entries = new ArrayList<>();
        boolean forged = false;
        boolean expired = false;
        for (String value : values)
        {
            String[] parts = value.split("~", MAX_PRESENTED + 1);
            if (parts.length > MAX_PRESENTED)
            {
                forged = true;
                continue;
            }
            for (String part : parts)
            {
                Entry entry = decodeEntry(part);
                if (entry == null)
                    forged = true;
                else if (entry.expires() <= now)
                    expired = true;
                else if (!contains(entries, entry.id()))
                    entries.add(entry);
            }
        }
        return new Decoded(List.copyOf(entries), forged, expired);
    }

    /** The cookie value with {@code id} first, fresh, and the oldest entries dropped past the limit. */
    String withFirst(Decoded current, String id)
    {
        List<Entry> entries = new ArrayList<>();
        entries.add(new Entry(id, clock.instant().plus(ttl).getEpochSecond()));
        for (Entry entry : current.entries())
        {
            if (entries.size() >= maxEntries)
                break;
            if (!entry.id().equals(id))
                entries.add(entry);
        }
        StringBuilder value = new StringBuilder();
        for (Entry entry : entries)
        {
            if (value.length() > 0)
                value.append('~');
            String expires = Long.toString(entry.expires());
            value.append(Signer.encode(entry.id())).append('.').append(expires).append('.')
                .append(signer.sign(PURPOSE, entry.id(), expires));
        }
        return value.toString();
    }

    Duration ttl()
    {
        return ttl;
    }

    private Entry decodeEntry(String part)
    {
        Entry known = verified.get(part);
        if (known != null)
            return known;
        String[] fields = part.split("\\.", -1);
        if (fields.length != 3)
            return null;
        String id = Signer.decode(fields[0]);
        if (!ids.isId(id) || !isEpochSeconds(fields[1]))
            return null;
        if (!signer.verify(fields[2], PURPOSE, id, fields[1]))
            return null;
        Entry entry = new Entry(id, Long.parseLong(fields[1]));
        if (verified.size() >= VERIFIED_CACHE_SIZE)
            verified.clear(); // crude but bounded: the sessions in use are back within a request each
        verified.put(part, entry);
        return entry;
    }

    private static boolean isEpochSeconds(String text)
    {
        if (text.isEmpty() || text.length() > 12)
            return false;
        for (int i = 0; i < text.length(); i++)
        {
            if (text.charAt(i) < '0' || text.charAt(i) > '9')
                return false;
        }
        return true;
    }

    private static boolean contains(List<Entry> entries, String id)
    {
        for (Entry entry : entries)
        {
            if (entry.id().equals(id))
                return true;
        }
        return false;
    }
}
