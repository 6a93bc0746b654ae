package io.sandgate.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code docs/BENCHMARKS.md}, written one section at a time: each benchmark owns the section under
 * its "## " heading and leaves the others as they are.
 */
public final class BenchmarksDocument
{
    private BenchmarksDocument()
    {
    }

    /** Writes {@code section} over the one under {@code heading} in {@code out}, or appends it; creates the file if needed. */
    public static void writeSection(Path out, String heading, String section) throws IOException
    {
        String document = Files.exists(out) ? Files.readString(out) : "# Benchmarks\n";
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, replaceSection(document, heading, section));
    }

    /** Replaces the section under {@code heading} (up to the next "## "), or appends it. */
    private static String replaceSection(String document, String heading, String section)
    {
        int start = document.indexOf(heading);
        if (start < 0)
            return document.stripTrailing() + "\n\n" + section;
        int end = document.indexOf("\n## ", start + heading.length());
        String rest = end < 0 ? "" : "\n" + document.substring(end + 1);
        return document.substring(0, start) + section + rest;
    }
}
