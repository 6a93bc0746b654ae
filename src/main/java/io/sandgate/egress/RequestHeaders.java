package io.sandgate.egress;

import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;

/**
 * An agent's request headers as the egress decisions read them. Names are case-insensitive and a
 * header sent twice has two values: a check that read only the first would let a second
 * {@code Authorization} or {@code Content-Encoding} past it.
 */
public interface RequestHeaders
{
    /** Every value of the header, in the order sent; empty when it was not sent. */
    List<String> values(String name);

    /** The name of every header sent, once each whatever its case. */
    Set<String> names();

    /** The first value of the header, or null: for headers that select (a route, a session), never for checks. */
    default String first(String name)
    {
        List<String> values = values(name);
        return values.isEmpty() ? null : values.get(0);
    }

    static RequestHeaders of(HttpServletRequest request)
    {
        return new RequestHeaders()
        {
            @Override
            public List<String> values(String name)
            {
                return Collections.list(request.getHeaders(name));
            }

            @Override
            public Set<String> names()
            {
                Set<String> names = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
                names.addAll(Collections.list(request.getHeaderNames()));
                return names;
            }
        };
    }

    static RequestHeaders of(HttpFields fields)
    {
        return new RequestHeaders()
        {
            @Override
            public List<String> values(String name)
            {
                return fields.getValuesList(name);
            }

            @Override
            public Set<String> names()
            {
                Set<String> names = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
                for (HttpField field : fields)
                    names.add(field.getName());
                return names;
            }
        };
    }
}
