package io.sandgate.ingress;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.sandgate.core.Ascii;

/**
 * The session cookie's value: the sandboxes this browser has opened, most recent first, joined by
 * {@code ~}. Several entries let two tabs on two sandboxes share one browser; the first entry is the
 * sandbox an id-less request with no Referer goes to (noVNC 1.3's fixed WebSocket path).
 *
 * <p>Entries come in two shapes. In open access an entry is {@code base64url(id).expiry.signature}
 * and is signed afresh, with a new expiry, whenever its sandbox is opened again. In signed access an
 * entry is opened by redeeming a grant, {@code base64url(id).expiry.issuedMillis.generation.signature}:
 * its expiry is fixed at redemption and never extended, and when it was issued and for which pod
 * (a fingerprint of the route's generation, or nothing) let a revocation refuse it later (see
 * {@link Entry#standsFor(Route)}). A signed-access cookie accepts only the second shape.</p>
 */
final class SessionCookie
{
    static final String PURPOSE = "sandgate-session-v1";
    static final String GRANTED_PURPOSE = "sandgate-session-v2";
    private static final int MAX_PRESENTED = 32;
    private static final int VERIFIED_CACHE_SIZE = 65_536;
    /**
     * Bounds of the decoded values: a value of a few entries is 60-300 characters, and anyone can
     * mint genuine values in open access, so both the count and each value's length are capped
     * (16 MB at worst); longer values are decoded entry by entry, from the verified entries.
     */
    private static final int DECODED_CACHE_SIZE = 16_384;
    static final int DECODED_MAX_LENGTH = 512;
    private static final int FINGERPRINT_BYTES = 8;

    private final Signer signer;
    private final IdSyntax ids;
    private final Duration ttl;
    private final int maxEntries;
    private final Clock clock;
    /** Signed access: only granted entries count, and opening one again does not renew it. */
    private final boolean grantedOnly;
    /**
     * Entries whose signature has been checked, by their exact text. A browser presents the same
     * cookie on every request of a session, and the HMAC is most of the cost of routing one; a
     * forged or malformed entry is never cached, and expiry is still checked on every use.
     */
    private final Map<String, Entry> verified = new ConcurrentHashMap<>();
    /**
     * Whole cookie values decoded before, when they held only genuine, unexpired entries: the same
     * value comes with every request of a session, and splitting it anew each time is garbage on
     * the hot path. A value is used from here only while all its entries are unexpired.
     */
    private final Map<String, Decoded> decoded = new ConcurrentHashMap<>();
    /** {@link #fingerprint} of route generations seen, as the cookie entries hold them. */
    private static final Map<String, String> FINGERPRINTS = new ConcurrentHashMap<>();

    /** The cookie of open access: entries made on the spot, renewed whenever their sandbox is opened again. */
    SessionCookie(Signer signer, IdSyntax ids, Duration ttl, int maxEntries, Clock clock)
    {
        this(signer, ids, ttl, maxEntries, clock, false);
    }

    private SessionCookie(Signer signer, IdSyntax ids, Duration ttl, int maxEntries, Clock clock, boolean grantedOnly)
    {
        this.signer = signer;
        this.ids = ids;
        this.ttl = ttl;
        this.maxEntries = maxEntries;
        this.clock = clock;
        this.grantedOnly = grantedOnly;
    }

    /**
     * The cookie of signed access: it holds only entries that grants opened, each with the expiry
     * fixed at redemption.
     *
     * @param ttl how long the browser keeps the cookie after it was last set
     */
    static SessionCookie granted(Signer signer, IdSyntax ids, Duration ttl, int maxEntries, Clock clock)
    {
        return new SessionCookie(signer, ids, ttl, maxEntries, clock, true);
    }

    /**
     * One sandbox the bearer may reach, until {@code expires} (epoch seconds).
     *
     * @param issued when a grant opened it, epoch milliseconds; 0 for an entry of open access
     * @param generation {@link #fingerprint} of the route's generation when it was opened; empty when unknown
     */
    record Entry(String id, long expires, long issued, String generation)
    {
        /** An entry of open access. */
        Entry(String id, long expires)
        {
            this(id, expires, 0, "");
        }

        boolean granted()
        {
            return issued > 0;
        }

        /**
         * Whether this entry still opens the sandbox behind {@code route}: it was issued after the
         * route's revocation stamp, and for the pod that serves it now when both are known (a
         * replaced pod is a new generation).
         */
        boolean standsFor(Route route)
        {
            if (route.revokedBefore().isPresent() && issued <= route.revokedBefore().get().toEpochMilli())
                return false;
            return generation.isEmpty() || route.generation().isEmpty() || generation.equals(fingerprint(route.generation().get()));
        }
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

        /** Whether every entry is still unexpired at {@code now} (epoch seconds). */
        boolean unexpiredAt(long now)
        {
            for (Entry entry : entries)
            {
                if (entry.expires() <= now)
                    return false;
            }
            return true;
        }

        boolean contains(String id)
        {
            return entry(id) != null;
        }

        boolean isFirst(String id)
        {
            return !entries.isEmpty() && entries.get(0).id().equals(id);
        }

        /** The entry for {@code id}, or null. */
        Entry entry(String id)
        {
            for (Entry entry : entries)
            {
                if (entry.id().equals(id))
                    return entry;
            }
            return null;
        }
    }

    Decoded decode(List<String> values)
    {
        if (values.isEmpty())
            return Decoded.NONE;
        // Whole seconds from the millis: the system clock's instant adds a call and an object per request.
        long now = Math.floorDiv(clock.millis(), 1000);
        Decoded known = values.size() == 1 ? decoded.get(values.get(0)) : null;
        if (known != null && known.unexpiredAt(now))
            return known;
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
        Decoded result = new Decoded(List.copyOf(entries), forged, expired);
        if (values.size() == 1 && !forged && !expired && !entries.isEmpty() && values.get(0).length() <= DECODED_MAX_LENGTH)
        {
            if (decoded.size() >= DECODED_CACHE_SIZE)
                decoded.clear();
            decoded.put(values.get(0), result);
        }
        return result;
    }

    /**
     * The cookie value with {@code id} first. In open access its entry is made afresh; in signed
     * access the entry a grant opened moves to the front as it is, its expiry untouched.
     *
     * @throws IllegalArgumentException in signed access, when the cookie holds no entry for {@code id}
     */
    String withFirst(Decoded current, String id)
    {
        if (!grantedOnly)
            return withFirst(current, new Entry(id, clock.instant().plus(ttl).getEpochSecond()));
        Entry entry = current.entry(id);
        if (entry == null)
            throw new IllegalArgumentException("no entry for sandbox " + id + " (expected: one a grant opened)");
        return withFirst(current, entry);
    }

    /** The cookie value with {@code first} in front and the oldest entries dropped past the limit. */
    String withFirst(Decoded current, Entry first)
    {
        List<Entry> entries = new ArrayList<>();
        entries.add(first);
        for (Entry entry : current.entries())
        {
            if (entries.size() >= maxEntries)
                break;
            if (!entry.id().equals(first.id()))
                entries.add(entry);
        }
        StringBuilder value = new StringBuilder();
        for (Entry entry : entries)
        {
            if (value.length() > 0)
                value.append('~');
            value.append(encode(entry));
        }
        return value.toString();
    }

    private String encode(Entry entry)
    {
        String expires = Long.toString(entry.expires());
        if (!entry.granted())
            return Signer.encode(entry.id()) + "." + expires + "." + signer.sign(PURPOSE, entry.id(), expires);
        String issued = Long.toString(entry.issued());
        return Signer.encode(entry.id()) + "." + expires + "." + issued + "." + entry.generation() + "."
            + signer.sign(GRANTED_PURPOSE, entry.id(), expires, issued, entry.generation());
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
        Entry entry = verify(part.split("\\.", -1));
        if (entry == null)
            return null;
        if (verified.size() >= VERIFIED_CACHE_SIZE)
            verified.clear(); // crude but bounded: the sessions in use are back within a request each
        verified.put(part, entry);
        return entry;
    }

    private Entry verify(String[] fields)
    {
        if (fields.length != 3 && fields.length != 5)
            return null;
        String id = Signer.decode(fields[0]);
        if (!ids.isId(id) || !Ascii.DIGITS.matches(fields[1], 1, 12))
            return null;
        if (fields.length == 3 && !grantedOnly && signer.verify(fields[2], PURPOSE, id, fields[1]))
            return new Entry(id, Long.parseLong(fields[1]));
        if (fields.length != 5 || !Ascii.DIGITS.matches(fields[2], 1, 15) || !Ascii.BASE64URL.matches(fields[3], 0, 22))
            return null;
        if (!signer.verify(fields[4], GRANTED_PURPOSE, id, fields[1], fields[2], fields[3]))
            return null;
        return new Entry(id, Long.parseLong(fields[1]), Long.parseLong(fields[2]), fields[3]);
    }

    /**
     * A short, fixed-length stand-in for a route generation (pod uids are 36 characters, others may
     * be longer). Digested once per generation: every request to a pod watcher's route asks.
     */
    static String fingerprint(String generation)
    {
        String known = FINGERPRINTS.get(generation);
        if (known != null)
            return known;
        if (FINGERPRINTS.size() >= VERIFIED_CACHE_SIZE)
            FINGERPRINTS.clear();
        String fingerprint = digest(generation);
        FINGERPRINTS.put(generation, fingerprint);
        return fingerprint;
    }

    private static String digest(String generation)
    {
        try
        {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(generation.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, FINGERPRINT_BYTES));
        }
        catch (NoSuchAlgorithmException x)
        {
            throw new IllegalStateException("SHA-256 unavailable", x);
        }
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
