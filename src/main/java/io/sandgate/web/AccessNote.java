package io.sandgate.web;

import java.util.Locale;

/**
 * What a face did with a request, told to the access log and the request counters: the face sets
 * it, the operations layer reads it, and neither guesses from the other's paths.
 *
 * @param face which face served the request
 * @param subject what the request was about (a sandbox id, an MCP server, an egress route), or null
 * @param via how the face found the subject (an ingress route source), or null
 * @param upstreamNanos from the request sent on to its answer's head having come back, or -1 when
 *        unknown: what the upstream (a sandbox) took, apart from the gateway's own time
 */
public record AccessNote(Face face, String subject, String via, long upstreamNanos)
{
    public AccessNote(Face face, String subject, String via)
    {
        this(face, subject, via, -1);
    }

    /** This note with the upstream's time. */
    public AccessNote upstream(long nanos)
    {
        return new AccessNote(face, subject, via, nanos);
    }

    /** The note of the request, set by the face that serves it. */
    public static final RequestAttribute<AccessNote> ATTRIBUTE = RequestAttribute.of("access-note", AccessNote.class);

    public enum Face
    {
        INGRESS, MCP, EGRESS, OPS;

        private final String label = name().toLowerCase(Locale.ROOT);

        /** The label used in metrics and logs. */
        public String label()
        {
            return label;
        }
    }

    /** Notes that a face took the request, before it knows more; log lines written meanwhile carry the face. */
    public static void face(jakarta.servlet.ServletRequest request, Face face)
    {
        ATTRIBUTE.set(request, new AccessNote(face, null, null));
        LogContext.put(LogContext.Field.FACE, face.label());
    }

    /** The note of a request no face took: health, metrics, admin or nothing at all. */
    public static AccessNote of(jakarta.servlet.ServletRequest request)
    {
        AccessNote note = ATTRIBUTE.get(request);
        return note == null ? new AccessNote(Face.OPS, null, null) : note;
    }
}
