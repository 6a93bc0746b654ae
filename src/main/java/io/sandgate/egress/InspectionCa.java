package io.sandgate.egress;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

import io.sandgate.net.IpLiteral;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The certificate authority of inspected CONNECT tunnels: it signs the short-lived leaf each
 * tunnel's TLS is terminated with. It comes from the secret sources as PEM (certificate and private
 * key in one value), or is generated; a generated one is written as PEM so that every replica can
 * adopt the one that was stored first ({@link SharedCa}).
 */
public final class InspectionCa
{
    /** How long a generated CA is valid: sandboxes trust it for that long unless it is replaced. */
    static final Duration GENERATED_VALIDITY = Duration.ofDays(365);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final X509Certificate certificate;
    private final PrivateKey key;
    private final String pem;

    private InspectionCa(X509Certificate certificate, PrivateKey key, String pem)
    {
        this.certificate = certificate;
        this.key = key;
        this.pem = pem;
    }

    /**
     * Reads a CA from PEM text holding its certificate and its private key (PKCS#8, or the
     * traditional EC or RSA form), in either order.
     *
     * @throws IllegalArgumentException when either is missing or the certificate is no CA's
     */
    public static InspectionCa fromPem(String text)
    {
        X509Certificate certificate = null;
        PrivateKey key = null;
        try (PEMParser parser = new PEMParser(new StringReader(text)))
        {
            JcaPEMKeyConverter keys = new JcaPEMKeyConverter();
            for (Object item = parser.readObject(); item != null; item = parser.readObject())
            {
                if (item instanceof X509CertificateHolder holder && certificate == null)
                    certificate = new JcaX509CertificateConverter().getCertificate(holder);
                else if (item instanceof PEMKeyPair pair)
                    key = keys.getKeyPair(pair).getPrivate();
                else if (item instanceof PrivateKeyInfo info)
                    key = keys.getPrivateKey(info);
            }
        }
        catch (IOException | GeneralSecurityException x)
        {
            // The message of a parser names no part of the key.
            throw new IllegalArgumentException("egress.inspect.ca: not a PEM certificate and key (" + x.getClass().getSimpleName() + ")");
        }
        if (certificate == null || key == null)
            throw new IllegalArgumentException("egress.inspect.ca: expected a PEM certificate and its private key in one value, found "
                + (certificate == null ? "no certificate" : "no private key"));
        if (certificate.getBasicConstraints() < 0)
            throw new IllegalArgumentException("egress.inspect.ca: the certificate is not a CA's (basicConstraints CA:TRUE missing)");
        return new InspectionCa(certificate, key, text);
    }

    /** A new CA, with an EC P-256 key, valid for {@link #GENERATED_VALIDITY}. */
    public static InspectionCa generate()
    {
        KeyPair pair = ecKeyPair();
        X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "Sandgate")
            .addRDN(BCStyle.CN, "Sandgate egress inspection CA " + Long.toHexString(RANDOM.nextLong() & Long.MAX_VALUE)).build();
        Instant now = Instant.now();
        try
        {
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, serial(), Date.from(now.minus(Duration.ofHours(1))),
                Date.from(now.plus(GENERATED_VALIDITY)), name, pair.getPublic())
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                .addExtension(Extension.subjectKeyIdentifier, false, extensions.createSubjectKeyIdentifier(pair.getPublic()));
            X509Certificate certificate = new JcaX509CertificateConverter().getCertificate(builder.build(signer(pair.getPrivate())));
            // PKCS#8 ("PRIVATE KEY"), which every PEM reader takes whatever the key's algorithm.
            return new InspectionCa(certificate, pair.getPrivate(), pem(certificate, new JcaPKCS8Generator(pair.getPrivate(), null)));
        }
        catch (GeneralSecurityException | IOException | OperatorCreationException x)
        {
            throw new IllegalStateException("cannot generate the egress inspection CA", x);
        }
    }

    /**
     * A leaf for the host, signed by this CA, for the key given: a DNS name, or an IP address for a
     * literal, as the only subject alternative name, for TLS servers only.
     */
    X509Certificate leaf(String host, PublicKey leafKey, Duration validity)
    {
        Instant now = Instant.now();
        try
        {
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
            java.util.Optional<InetAddress> literal = IpLiteral.parse(host);
            GeneralName san = literal.isPresent()
                ? new GeneralName(GeneralName.iPAddress, literal.get().getHostAddress())
                : new GeneralName(GeneralName.dNSName, host);
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(certificate, serial(), Date.from(now.minus(Duration.ofMinutes(5))),
                Date.from(now.plus(validity)), new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, host).build(), leafKey)
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment))
                .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
                .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(san))
                .addExtension(Extension.subjectKeyIdentifier, false, extensions.createSubjectKeyIdentifier(leafKey))
                .addExtension(Extension.authorityKeyIdentifier, false, extensions.createAuthorityKeyIdentifier(certificate));
            return new JcaX509CertificateConverter().getCertificate(builder.build(signer(key)));
        }
        catch (GeneralSecurityException | IOException | OperatorCreationException x)
        {
            throw new IllegalStateException("cannot sign a leaf certificate", x);
        }
    }

    /** An EC P-256 key pair: fast to make and to sign with, accepted by every TLS client. */
    static KeyPair ecKeyPair()
    {
        try
        {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return generator.generateKeyPair();
        }
        catch (GeneralSecurityException x)
        {
            throw new IllegalStateException("no EC P-256 key generation in this JVM", x);
        }
    }

    private static ContentSigner signer(PrivateKey key) throws OperatorCreationException
    {
        String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
        return new JcaContentSignerBuilder(algorithm).build(key);
    }

    private static BigInteger serial()
    {
        return new BigInteger(64, RANDOM).setBit(63);
    }

    private static String pem(Object... items)
    {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(text))
        {
            for (Object item : items)
                writer.writeObject(item);
        }
        catch (IOException x)
        {
            throw new UncheckedIOException(x);
        }
        return text.toString();
    }

    /** The CA's certificate, as sandboxes are given it to trust. */
    public X509Certificate certificate()
    {
        return certificate;
    }

    /** The certificate alone, in PEM: what {@code GET /egress/ca.pem} serves. */
    public String certificatePem()
    {
        return pem(certificate);
    }

    /** Certificate and key, in PEM: what a generated CA is stored as. Never logged or served. */
    String secretPem()
    {
        return pem;
    }

    /**
     * Where a generated CA is kept so that every replica signs with the same one: the first stored
     * wins, the others adopt it. The store's implementation writes it once (Redis: {@code SET NX}).
     */
    public interface SharedCa
    {
        /**
         * Stores the PEM unless one is stored already.
         *
         * @return the PEM in force: this one, or the one stored before
         */
        String adopt(String pem);

        /** Within this process only: one replica, or a gateway whose store is memory. */
        static SharedCa inProcess()
        {
            java.util.concurrent.atomic.AtomicReference<String> held = new java.util.concurrent.atomic.AtomicReference<>();
            return pem -> held.compareAndSet(null, pem) ? pem : held.get();
        }
    }

    /**
     * The CA the gateway signs with: the named secret's, or the shared generated one.
     *
     * @param secret the secret's PEM, when {@code egress.inspect.ca} names one
     */
    public static InspectionCa of(java.util.Optional<String> secret, SharedCa shared)
    {
        if (secret.isPresent())
            return fromPem(secret.get());
        InspectionCa fresh = generate();
        String inForce = shared.adopt(fresh.secretPem());
        return inForce.equals(fresh.secretPem()) ? fresh : fromPem(inForce);
    }
}
