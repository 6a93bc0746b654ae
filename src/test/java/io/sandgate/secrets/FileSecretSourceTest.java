package io.sandgate.secrets;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;

import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class FileSecretSourceTest
{
    private static final String OPENAI_KEY = "sk-test-0123456789abcdef";

    @TempDir
    Path dir;

    private Path file;
    private MutableClock clock;

    @BeforeEach
    void setUp() throws IOException
    {
        file = dir.resolve("secrets.yaml");
        clock = new MutableClock(Instant.parse("2025-03-01T10:00:00Z"));
    }

    private void write(String yaml) throws IOException
    {
        Files.writeString(file, yaml);
        if (posix())
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    private static boolean posix()
    {
        return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    }

    private FileSecretSource source()
    {
        return new FileSecretSource(new FileSecretSettings(file), clock);
    }

    @Test
    void readsEachNameFromTheYamlMap() throws IOException
    {
        write("openai: " + OPENAI_KEY + "\ngithub/app: \"ghs_abc\"\n");
        FileSecretSource source = source();

        assertEquals(OPENAI_KEY, source.get("openai").reveal());
        assertEquals("ghs_abc", source.get("github/app").reveal());
        assertEquals("file", source.kind());
    }

    @Test
    void numberLikeValuesStayAsWritten() throws IOException
    {
        write("pin: 0123\nexp: 1e5\nflag: yes\n");
        FileSecretSource source = source();

        assertEquals("0123", source.get("pin").reveal());
        assertEquals("1e5", source.get("exp").reveal());
        assertEquals("yes", source.get("flag").reveal());
    }

    @Test
    void rotatedValueIsSeenAfterTheReloadInterval() throws IOException
    {
        write("openai: old-value\n");
        FileSecretSource source = source();
        assertEquals("old-value", source.get("openai").reveal());

        write("openai: rotated-value-longer\n");
        // Coarse file systems keep one mtime per second; move it so the change is visible anyway.
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));

        assertEquals("old-value", source.get("openai").reveal(), "not looked at again within the interval");
        clock.advance(Duration.ofSeconds(1));
        assertEquals("rotated-value-longer", source.get("openai").reveal());
    }

    @Test
    void brokenRewriteKeepsTheValuesReadLast() throws IOException
    {
        write("openai: good-value\n");
        FileSecretSource source = source();

        write("openai: [unclosed\n");
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
        clock.advance(Duration.ofSeconds(2));

        assertEquals("good-value", source.get("openai").reveal());
    }

    @Test
    void fileReadableByOthersIsRefusedWithChmodAdvice() throws IOException
    {
        assumeTrue(posix(), "POSIX permissions");
        write("openai: " + OPENAI_KEY + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));

        IllegalStateException x = assertThrows(IllegalStateException.class, this::source);

        String message = x.getMessage();
        assertTrue(message.contains(file.toString()), message);
        assertTrue(message.contains("0644"), message);
        assertTrue(message.contains("chmod 600"), message);
        assertFalse(message.contains(OPENAI_KEY), message);
    }

    @Test
    void fileWritableByGroupIsRefused() throws IOException
    {
        assumeTrue(posix(), "POSIX permissions");
        write("openai: x\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw--w----"));

        IllegalStateException x = assertThrows(IllegalStateException.class, this::source);
        assertTrue(x.getMessage().contains("0620"), x.getMessage());
    }

    @Test
    void ownerOnlyReadIsAccepted() throws IOException
    {
        assumeTrue(posix(), "POSIX permissions");
        write("openai: x\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--------"));

        assertEquals("x", source().get("openai").reveal());
    }

    @Test
    void missingFileIsAClearError()
    {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, this::source);
        assertTrue(x.getMessage().contains(file.toString()), x.getMessage());
        assertTrue(x.getMessage().contains("does not exist"), x.getMessage());
    }

    @Test
    void unknownNameIsUnknownAndNamesTheFile() throws IOException
    {
        write("openai: " + OPENAI_KEY + "\n");

        SecretUnavailableException x = assertThrows(SecretUnavailableException.class, () -> source().get("anthropic"));

        assertEquals(SecretUnavailableException.Reason.UNKNOWN, x.reason());
        assertTrue(x.getMessage().contains("'anthropic'"), x.getMessage());
        assertTrue(x.getMessage().contains(file.toString()), x.getMessage());
        assertFalse(x.getMessage().contains(OPENAI_KEY), x.getMessage());
    }

    @Test
    void yamlErrorsGiveLineAndColumnButNeverTheText() throws IOException
    {
        write("openai: " + OPENAI_KEY + "\nbroken: \"" + OPENAI_KEY + "-second\n");

        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, this::source);

        assertTrue(x.getMessage().contains("not valid YAML"), x.getMessage());
        assertTrue(x.getMessage().contains("line"), x.getMessage());
        assertFalse(x.getMessage().contains(OPENAI_KEY), x.getMessage());
    }

    @Test
    void nestedValuesAndEmptyValuesAreRefusedByName() throws IOException
    {
        write("openai:\n  key: " + OPENAI_KEY + "\n");
        IllegalArgumentException nested = assertThrows(IllegalArgumentException.class, this::source);
        assertTrue(nested.getMessage().contains("'openai'"), nested.getMessage());
        assertFalse(nested.getMessage().contains(OPENAI_KEY), nested.getMessage());

        write("openai:\n");
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class, this::source);
        assertTrue(empty.getMessage().contains("has no value"), empty.getMessage());
    }

    @Test
    void valueNeverShowsInToString() throws IOException
    {
        write("openai: " + OPENAI_KEY + "\n");
        assertEquals("****", source().get("openai").toString());
    }
}
