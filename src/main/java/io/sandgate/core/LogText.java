package io.sandgate.core;

/** Text from outside (a client's path, an upstream's error message) as a log line may hold it. */
public final class LogText
{
    private LogText()
    {
    }

    /**
     * {@code text} with its control and line-separator characters replaced by {@code ?}, so that it
     * cannot start log lines of its own, cut to {@code maxChars}.
     */
    public static String printable(String text, int maxChars)
    {
        StringBuilder out = new StringBuilder(Math.min(text.length(), maxChars));
        for (int i = 0; i < text.length() && i < maxChars; i++)
        {
            char c = text.charAt(i);
            out.append(Character.isISOControl(c) || c == '\u2028' || c == '\u2029' ? '?' : c);
        }
        return out.toString();
    }
}
