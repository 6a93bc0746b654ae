package io.sandgate.deploy;

import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression reads, for checking dashboards and alert rules against what
 * the gateway exports. Not a parser: it removes what can hold other names (strings, label matchers,
 * ranges, {@code by (...)} lists, dashboard variables) and keeps the identifiers that are not
 * functions or keywords, which is all PromQL has besides.
 */
final class PromQl
{
    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'");
    private static final Pattern MATCHERS = Pattern.compile("\\{[^}]*}");
    private static final Pattern RANGE = Pattern.compile("\\[[^]]*]");
    private static final Pattern LABEL_LIST = Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{?\\w+}?");
    private static final Pattern OFFSET = Pattern.compile("\\boffset\\s+-?\\w+");
    /** An identifier not glued to a number (1e-9) or a name before it, and what follows it. */
    private static final Pattern IDENTIFIER = Pattern.compile("(?<![\\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\()?");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "by", "without", "on", "ignoring",
        "group_left", "group_right", "offset", "inf", "nan");

    private PromQl()
    {
    }

    static Set<String> metricNames(String expr)
    {
        String text = STRING.matcher(expr).replaceAll(" ");
        text = MATCHERS.matcher(text).replaceAll(" ");
        text = RANGE.matcher(text).replaceAll(" ");
        text = LABEL_LIST.matcher(text).replaceAll(" ");
        text = VARIABLE.matcher(text).replaceAll(" ");
        text = OFFSET.matcher(text).replaceAll(" ");
        Set<String> names = new TreeSet<>();
        Matcher identifier = IDENTIFIER.matcher(text);
        while (identifier.find())
        {
            String name = identifier.group(1);
            boolean call = identifier.group(2) != null;
            if (!call && !KEYWORDS.contains(name.toLowerCase(java.util.Locale.ROOT)))
                names.add(name);
        }
        return names;
    }
}
