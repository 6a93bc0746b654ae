package io.sandgate.egress;

import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class InspectionCaTest
{
    @Test
    void generatedCa_signsLeavesForTheNameOnly_shortLived() throws Exception
    {
        InspectionCa ca = InspectionCa.generate();
        assertTrue(ca.certificate().getBasicConstraints() >= 0, "a CA");
        X509Certificate leaf = ca.leaf("api.example.com", InspectionCa.ecKeyPair().getPublic(), Duration.ofHours(24));
        leaf.verify(ca.certificate().getPublicKey());
        leaf.checkValidity();
        assertEquals(-1, leaf.getBasicConstraints(), "a leaf is no CA");
        assertEquals(List.of(List.of(2, "api.example.com")), leaf.getSubjectAlternativeNames().stream().map(List::copyOf).toList());
        assertTrue(leaf.getNotAfter().getTime() - leaf.getNotBefore().getTime() <= Duration.ofHours(25).toMillis());
        assertEquals(List.of("1.3.6.1.5.5.7.3.1"), leaf.getExtendedKeyUsage(), "server authentication only");

        X509Certificate literal = ca.leaf("127.0.0.1", InspectionCa.ecKeyPair().getPublic(), Duration.ofHours(1));
        assertEquals(List.of(List.of(7, "127.0.0.1")), literal.getSubjectAlternativeNames().stream().map(List::copyOf).toList());
    }

    @Test
    void pemRoundTrip_keepsCertificateAndKey_andTheServedPemHasNoKey() throws Exception
    {
        InspectionCa ca = InspectionCa.generate();
        InspectionCa read = InspectionCa.fromPem(ca.secretPem());
        assertEquals(ca.certificate(), read.certificate());
        read.leaf("x.example", InspectionCa.ecKeyPair().getPublic(), Duration.ofHours(1)).verify(ca.certificate().getPublicKey());
        assertFalse(ca.certificatePem().contains("PRIVATE"));
        assertThrows(IllegalArgumentException.class, () -> InspectionCa.fromPem(ca.certificatePem()), "a key is required");
        assertThrows(IllegalArgumentException.class, () -> InspectionCa.fromPem("not pem"));
    }

    @Test
    void generatedCa_theFirstStoredWins() throws Exception
    {
        InspectionCa.SharedCa shared = InspectionCa.SharedCa.inProcess();
        InspectionCa first = InspectionCa.of(Optional.empty(), shared);
        InspectionCa second = InspectionCa.of(Optional.empty(), shared);
        assertEquals(first.certificate(), second.certificate());
        assertNotEquals(first.certificate(), InspectionCa.of(Optional.empty(), InspectionCa.SharedCa.inProcess()).certificate());
        InspectionCa given = InspectionCa.of(Optional.of(InspectionCa.generate().secretPem()), shared);
        assertNotEquals(first.certificate(), given.certificate(), "a configured CA is not the stored one");
    }
}
