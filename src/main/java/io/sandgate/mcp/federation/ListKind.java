package io.sandgate.mcp.federation;

/** The lists a federation merges, with the field of the result that holds the items and the fields that name one. */
public enum ListKind
{
    TOOLS("tools/list", "tools", "name", null),
    PROMPTS("prompts/list", "prompts", "name", null),
    RESOURCES("resources/list", "resources", "uri", "name"),
    TEMPLATES("resources/templates/list", "resourceTemplates", "uriTemplate", "name");

    private final String method;
    private final String items;
    private final String key;
    private final String label;

    /**
     * @param key what a request routes by (a name or a URI): unique per member, prefixed
     * @param label a name shown beside the key, prefixed with it so that the client tells members apart
     */
    ListKind(String method, String items, String key, String label)
    {
        this.method = method;
        this.items = items;
        this.key = key;
        this.label = label;
    }

    /** The kind a list method asks for; null for another method. */
    public static ListKind of(String method)
    {
        for (ListKind kind : values())
        {
            if (kind.method.equals(method))
                return kind;
        }
        return null;
    }

    public String method()
    {
        return method;
    }

    public String items()
    {
        return items;
    }

    public String key()
    {
        return key;
    }

    /** Null when the key is the only name. */
    public String label()
    {
        return label;
    }
}
