package io.sandgate.mcp.identity;

import java.security.Key;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.crypto.factories.DefaultJWSVerifierFactory;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;

/**
 * Ed25519 (EdDSA) for nimbus-jose-jwt's JWT processor, which checks Ed25519 signatures with Tink but
 * selects keys as JCA keys, and JCA has no form for an Ed25519 JWK: its key selector drops them.
 * Here an Ed25519 JWK travels through the selector wrapped as a key of its own, and the verifier
 * factory unwraps it for nimbus's Ed25519 verifier. Every other algorithm goes nimbus's own way.
 */
final class EdwardsKeys
{
    private static final Set<JWSAlgorithm> EDWARDS = Set.of(JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519);

    private EdwardsKeys()
    {
    }

    /** An Ed25519 public JWK as a key the processor can carry. */
    private record OkpKey(OctetKeyPair jwk) implements PublicKey
    {
        @Override
        public String getAlgorithm()
        {
            return "Ed25519";
        }

        @Override
        public String getFormat()
        {
            return null;
        }

        @Override
        public byte[] getEncoded()
        {
            return null;
        }
    }

    /** Selects keys as nimbus does, Ed25519 ones included. */
    static final class Selector extends JWSVerificationKeySelector<SecurityContext>
    {
        Selector(Set<JWSAlgorithm> algorithms, JWKSource<SecurityContext> keys)
        {
            super(algorithms, keys);
        }

        @Override
        public List<Key> selectJWSKeys(JWSHeader header, SecurityContext context) throws KeySourceException
        {
            if (!EDWARDS.contains(header.getAlgorithm()) || !isAllowed(header.getAlgorithm()))
                return super.selectJWSKeys(header, context);
            List<Key> keys = new ArrayList<>();
            for (JWK jwk : getJWKSource().get(new JWKSelector(createJWKMatcher(header)), context))
            {
                if (jwk instanceof OctetKeyPair okp && "Ed25519".equals(okp.getCurve().getName()))
                    keys.add(new OkpKey(okp));
            }
            return keys;
        }
    }

    /** Makes nimbus's verifiers, an Ed25519 one for a key {@link Selector} wrapped. */
    static final class VerifierFactory extends DefaultJWSVerifierFactory
    {
        @Override
        public JWSVerifier createJWSVerifier(JWSHeader header, Key key) throws JOSEException
        {
            if (key instanceof OkpKey okp)
                return new Ed25519Verifier(okp.jwk());
            return super.createJWSVerifier(header, key);
        }
    }
}
