package io.sandgate.mcp.federation;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;

/**
 * The event ids a federation's client gets for a member's answer streamed as it comes: the
 * member's prefix, then the request the stream answers (its id and progress token, base64url of
 * JSON), a dot, then the member's own event id. A client whose stream the member cut short resumes
 * it on the GET stream with such an id; the member replays the rest there, and only that request's
 * response and progress pass: a member cannot use a replay to answer any other request of the
 * client's (a forged {@code tools/list} answer) or report another call's progress.
 */
public final class ResumeIds
{
    /** The most characters of the request part read back: a client's header, not to be parsed at any length. */
    private static final int MAX_REQUEST_PART = 1024;
    private static final ObjectMapper JSON = new ObjectMapper();

    private ResumeIds()
    {
    }

    /** A resumption: the request answered and the member's own event id to resume after. */
    public record Resumed(MemberMessages.Answering answering, String memberEventId)
    {
    }

    /**
     * What the ids of the events answering {@code answering} begin with, after the member's prefix:
     * made once for an answer, each event's id is this and the member's own ({@code part + id}).
     */
    public static String requestPart(MemberMessages.Answering answering)
    {
        ArrayNode request = JSON.createArrayNode();
        request.add(answering.clientId() != null ? answering.clientId() : answering.id());
        request.add(answering.clientProgressToken() != null ? answering.clientProgressToken() : answering.progressToken());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(request.toString().getBytes(StandardCharsets.UTF_8)) + ".";
    }

    /** What an event id made with {@link #requestPart}, its prefix taken off, names; empty when it is not one. */
    public static Optional<Resumed> parse(String id)
    {
        int dot = id.indexOf('.');
        if (dot <= 0 || dot > MAX_REQUEST_PART)
            return Optional.empty();
        try
        {
            JsonNode request = JSON.readTree(Base64.getUrlDecoder().decode(id.substring(0, dot)));
            if (!(request instanceof ArrayNode pair) || pair.size() != 2 || !(pair.get(0).isTextual() || pair.get(0).isIntegralNumber()))
                return Optional.empty();
            JsonNode token = pair.get(1).isNull() ? null : pair.get(1);
            return Optional.of(new Resumed(new MemberMessages.Answering(pair.get(0), token), id.substring(dot + 1)));
        }
        catch (IllegalArgumentException | IOException x)
        {
            return Optional.empty();
        }
    }
}
