package io.sandgate.testing;

import java.util.List;
import java.util.Map;

/** A request a fixture recorded, as tests look at its headers. */
public interface RecordedHeaders
{
    /** Names lower-case, looked up without regard to case, as in HTTP. */
    Map<String, List<String>> headers();

    /** First value of the header, or {@code null}; the common case in assertions. */
    default String header(String name)
    {
        List<String> values = headers().get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }
}
