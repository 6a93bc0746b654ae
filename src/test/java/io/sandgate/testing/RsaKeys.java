package io.sandgate.testing;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import org.eclipse.jetty.toolchain.test.MavenPaths;

/**
 * RSA 2048 key pairs for the tests' authorization servers. Each {@link #next(String)} hands out
 * the next of {@value #PAIRS} pairs in turn, so the doubles a test runs at once, and the keys one
 * double rotates through, never share a pair (a test signs with another issuer's key under a kid
 * both use, and must be refused); {@link #stranger()} is a pair no double ever publishes.
 *
 * <p>Generating a pair takes most of a second of CPU in a test JVM (they run the C1 compiler only,
 * which has none of the big-number intrinsics), and the suite starts dozens of doubles. So the
 * pairs are generated once per build ({@link PerBuild}) by a JVM of their own with the full
 * compiler, and every test JVM reads them. Outside Maven each JVM generates them itself.</p>
 */
public final class RsaKeys
{
    private static final int PAIRS = 16;
    private static List<RSAKey> pairs;
    private static int handedOut;

    private RsaKeys()
    {
    }

    /** The next pair, named {@code kid}, for RS256. */
    static synchronized RSAKey next(String kid)
    {
        RSAKey pair = pairs().get(handedOut++ % PAIRS);
        return new RSAKey.Builder(pair).keyID(kid).algorithm(JWSAlgorithm.RS256).build();
    }

    /** A pair that no double publishes, named {@code stranger}. */
    static synchronized RSAKey stranger()
    {
        return new RSAKey.Builder(pairs().get(PAIRS)).keyID("stranger").build();
    }

    private static List<RSAKey> pairs()
    {
        if (pairs == null)
            pairs = load();
        return pairs;
    }

    private static List<RSAKey> load()
    {
        if (System.getProperty("test.run", "").isEmpty())
            return generate(PAIRS + 1);
        try
        {
            Path directory = MavenPaths.targetTests().resolve("rsa-keys");
            return parse(PerBuild.once(directory, "pairs", () ->
            {
                Path made = directory.resolve("pairs.json");
                generateElsewhere(made);
                return Files.readString(made, StandardCharsets.UTF_8).trim();
            }));
        }
        catch (Exception x)
        {
            throw new IllegalStateException("cannot make the tests' RSA key pairs", x);
        }
    }

    /** Runs {@link #main(String[])} in a JVM with the full compiler. */
    private static void generateElsewhere(Path into) throws Exception
    {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classPath,
            RsaKeys.class.getName(), Integer.toString(PAIRS + 1), into.toString())
            .redirectErrorStream(true)
            .redirectOutput(into.resolveSibling("pairs.out").toFile())
            .start();
        if (!process.waitFor(2, TimeUnit.MINUTES))
        {
            process.destroyForcibly();
            throw new IllegalStateException("generating the RSA key pairs took longer than 2 minutes");
        }
        if (process.exitValue() != 0)
            throw new IllegalStateException("generating the RSA key pairs failed: " + Files.readString(into.resolveSibling("pairs.out")));
    }

    private static List<RSAKey> parse(String json) throws Exception
    {
        List<RSAKey> parsed = new ArrayList<>();
        for (JWK key : JWKSet.parse(json).getKeys())
            parsed.add(key.toRSAKey());
        if (parsed.size() != PAIRS + 1)
            throw new IllegalStateException("expected " + (PAIRS + 1) + " RSA key pairs, read " + parsed.size());
        return List.copyOf(parsed);
    }

    private static List<RSAKey> generate(int count)
    {
        List<RSAKey> made = new ArrayList<>();
        try
        {
            for (int i = 0; i < count; i++)
                made.add(new RSAKeyGenerator(2048).keyID("pair-" + i).generate());
        }
        catch (JOSEException x)
        {
            throw new IllegalStateException("cannot generate an RSA key pair", x);
        }
        return made;
    }

    /** {@code RsaKeys COUNT FILE}: writes COUNT pairs, private parts included, as a JWK set. */
    public static void main(String[] args) throws Exception
    {
        List<JWK> keys = new ArrayList<>(generate(Integer.parseInt(args[0])));
        Files.writeString(Path.of(args[1]), new JWKSet(keys).toString(false), StandardCharsets.UTF_8);
    }
}
