package io.sandgate.egress;

import java.security.KeyPair;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What an inspected tunnel to a host the leaf cache does not hold costs the gateway: signing the
 * host's leaf, and the TLS context around it ({@code newHost}); and the context alone, made as
 * {@link TlsInspection} makes it ({@code contextOneRound}) against the JDK's default key protection
 * of 10 000 rounds each way ({@code contextJdkDefault}), in the same run.
 *
 * <p>Run: {@code java -cp ... org.openjdk.jmh.Main LeafContextBenchmark}. Not a test: the suite never
 * runs it.</p>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class LeafContextBenchmark
{
    private InspectionCa ca;
    private KeyPair leafKeys;
    private Certificate[] chain;
    private int hosts;

    @Setup
    public void setUp()
    {
        ca = InspectionCa.generate();
        leafKeys = InspectionCa.ecKeyPair();
        chain = new Certificate[] {ca.leaf("api.example.com", leafKeys.getPublic(), Duration.ofHours(24)), ca.certificate()};
    }

    @Benchmark
    public SSLContext newHost()
    {
        X509Certificate leaf = ca.leaf("host-" + hosts++ + ".example.com", leafKeys.getPublic(), Duration.ofHours(24));
        return TlsInspection.context(leafKeys.getPrivate(), new Certificate[] {leaf, ca.certificate()});
    }

    @Benchmark
    public SSLContext contextOneRound()
    {
        return TlsInspection.context(leafKeys.getPrivate(), chain);
    }

    @Benchmark
    public SSLContext contextJdkDefault() throws Exception
    {
        char[] password = new char[0];
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry("leaf", leafKeys.getPrivate(), password, chain);
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, password);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), null, null);
        return context;
    }
}
