package io.sandgate.testing;

import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.Ed25519Signer;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.OctetKeyPairGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;

/**
 * The signing keys of {@link AuthorizationServerDouble} and the tokens a test makes with them: real
 * ones ({@link #token()}) and the forgeries a hostile client would try against a resource server.
 * Keys are generated when the double starts: RSA 2048 {@code rsa-1} (RS256), EC P-256 {@code ec-1}
 * (ES256) and Ed25519 {@code ed-1} (EdDSA). The RSA key pairs come from {@link RsaKeys}, made once per
 * build. {@link #rotate()} adds {@code rsa-2}, {@code rsa-3}, ...,
 * each becoming the RS256 key; older keys stay published until {@link #unpublish(String)}, and an
 * unpublished key still signs, which is how a test makes a token whose {@code kid} no JWKS names.
 */
public final class TestTokens
{
    /** RFC 9068's type for JWT access tokens, which real authorization servers put in the header. */
    public static final JOSEObjectType ACCESS_TOKEN_TYPE = new JOSEObjectType("at+jwt");
    /** The scope a {@link #tampered(String)} token gains. */
    public static final String WIDENED_SCOPE = "mcp:admin";
    private static final Base64.Encoder B64URL = Base64.getUrlEncoder().withoutPadding();

    /** How {@link #hmacWithPublicKey(JWTClaimsSet, PublicKeyAs)} spells the RSA public key as an HMAC secret. */
    public enum PublicKeyAs
    {
        /** X.509 SubjectPublicKeyInfo DER, what {@code PublicKey.getEncoded()} gives. */
        DER,
        /** The same DER in PEM armour, what libraries that take a key "as a string" read. */
        PEM,
        /** The public JWK's JSON, as the JWKS publishes it. */
        JWK_JSON
    }

    private final String issuer;
    private final Clock clock;
    /** Every key this server ever signed with, by kid, in creation order. Guarded by this. */
    private final Map<String, JWK> keys = new LinkedHashMap<>();
    private final Set<String> unpublished = new HashSet<>();
    private String currentRsaKid = "rsa-1";
    private int rsaKeys = 1;
    private RSAKey stranger;
    private volatile Duration lifetime = Duration.ofMinutes(5);

    TestTokens(String issuer, Clock clock)
    {
        this.issuer = issuer;
        this.clock = clock;
        try
        {
            keys.put("rsa-1", RsaKeys.next("rsa-1"));
            keys.put("ec-1", new ECKeyGenerator(Curve.P_256).keyID("ec-1").algorithm(JWSAlgorithm.ES256).generate());
            keys.put("ed-1", new OctetKeyPairGenerator(Curve.Ed25519).keyID("ed-1").algorithm(JWSAlgorithm.EdDSA).generate());
        }
        catch (JOSEException x)
        {
            throw new IllegalStateException("cannot generate the signing keys", x);
        }
    }

    // ------------------------------------------------------------------------------ keys

    /** The public keys the JWKS publishes. */
    public synchronized JWKSet publicKeys()
    {
        List<JWK> published = new ArrayList<>();
        keys.forEach((kid, key) ->
        {
            if (!unpublished.contains(kid))
                published.add(key.toPublicJWK());
        });
        return new JWKSet(published);
    }

    /** Adds a new RSA key, published, that RS256 tokens use from now on; returns its kid. */
    public synchronized String rotate()
    {
        String kid = "rsa-" + ++rsaKeys;
        keys.put(kid, RsaKeys.next(kid));
        currentRsaKid = kid;
        return kid;
    }

    /** Takes a key out of the JWKS; it still signs whatever names it. */
    public synchronized void unpublish(String kid)
    {
        unpublished.add(kid);
    }

    public synchronized void publish(String kid)
    {
        unpublished.remove(kid);
    }

    /** The kid RS256 tokens carry unless told otherwise. */
    public synchronized String currentRsaKid()
    {
        return currentRsaKid;
    }

    /** The lifetime of tokens made from now on (builder default and token endpoint). */
    public void lifetime(Duration lifetime)
    {
        this.lifetime = lifetime;
    }

    public Duration lifetime()
    {
        return lifetime;
    }

    private synchronized JWK key(String kid)
    {
        return keys.get(kid);
    }

    /** The key a token of this algorithm is signed with when no kid of the same kind is named. */
    private synchronized JWK keyFor(JWSAlgorithm algorithm)
    {
        if (JWSAlgorithm.RS256.equals(algorithm))
            return keys.get(currentRsaKid);
        if (JWSAlgorithm.ES256.equals(algorithm))
            return keys.get("ec-1");
        if (JWSAlgorithm.EdDSA.equals(algorithm))
            return keys.get("ed-1");
        throw new IllegalArgumentException("algorithm: " + algorithm + " (expected: RS256, ES256 or EdDSA)");
    }

    // ---------------------------------------------------------------------------- tokens

    /** A token of this server: {@code iss} its issuer, valid from now for the current lifetime, RS256. */
    public Builder token()
    {
        return new Builder();
    }

    /**
     * The claims of a JWT that one of this server's keys signed (published or not), of this issuer,
     * already valid and not yet expired; null for anything else. What the server itself trusts a
     * presented token with (token exchange, introspection).
     */
    JWTClaimsSet verified(String jwt)
    {
        try
        {
            SignedJWT signed = SignedJWT.parse(jwt);
            JWK key = signed.getHeader().getKeyID() == null ? null : key(signed.getHeader().getKeyID());
            if (key == null || !algorithmOf(key).equals(signed.getHeader().getAlgorithm()) || !signed.verify(verifier(key)))
                return null;
            JWTClaimsSet claims = signed.getJWTClaimsSet();
            Instant now = clock.instant();
            boolean live = claims.getExpirationTime() != null && now.isBefore(claims.getExpirationTime().toInstant())
                && (claims.getNotBeforeTime() == null || !now.isBefore(claims.getNotBeforeTime().toInstant()));
            return live && issuer.equals(claims.getIssuer()) ? claims : null;
        }
        catch (ParseException | JOSEException | RuntimeException x)
        {
            return null;
        }
    }

    /** A fluent maker of one signed token; every setter returns the builder. */
    public final class Builder
    {
        private final JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder();
        private final Set<String> omitted = new HashSet<>();
        private JWSAlgorithm algorithm = JWSAlgorithm.RS256;
        private JOSEObjectType type = ACCESS_TOKEN_TYPE;
        private String kid;

        private Builder()
        {
            Instant now = clock.instant();
            claims.issuer(issuer).subject("alice").claim("client_id", "test-client")
                .issueTime(Date.from(now)).notBeforeTime(Date.from(now)).expirationTime(Date.from(now.plus(lifetime)))
                .jwtID(UUID.randomUUID().toString());
        }

        public Builder subject(String subject)
        {
            claims.subject(subject);
            return this;
        }

        public Builder clientId(String clientId)
        {
            return claim("client_id", clientId);
        }

        /** {@code aud}: one value is written as a string, several as an array, none leaves it out. */
        public Builder audience(String... audience)
        {
            return audience(List.of(audience));
        }

        public Builder audience(List<String> audience)
        {
            if (audience.isEmpty())
                claims.audience((String)null);
            else
                claims.audience(audience.size() == 1 ? List.of(audience.get(0)) : audience);
            return this;
        }

        /** {@code scope}: space-separated, as RFC 8693 §4.2 and RFC 9068 write it. */
        public Builder scope(String scope)
        {
            return claim("scope", scope);
        }

        public Builder issuer(String issuer)
        {
            claims.issuer(issuer);
            return this;
        }

        public Builder issuedAt(Instant instant)
        {
            claims.issueTime(Date.from(instant));
            return this;
        }

        public Builder notBefore(Instant instant)
        {
            claims.notBeforeTime(Date.from(instant));
            return this;
        }

        public Builder expiresAt(Instant instant)
        {
            claims.expirationTime(Date.from(instant));
            return this;
        }

        /** RS256 (the default), ES256 or EdDSA; the algorithm's current key signs unless {@link #kid} names another. */
        public Builder algorithm(JWSAlgorithm algorithm)
        {
            keyFor(algorithm);
            this.algorithm = algorithm;
            return this;
        }

        /**
         * The header's kid. When it names a key of this server of the token's algorithm, that key
         * signs; otherwise the algorithm's current key signs and the header names what it was
         * given: a kid no JWKS knows, or one that lies about the key.
         */
        public Builder kid(String kid)
        {
            this.kid = kid;
            return this;
        }

        /** The header's {@code typ}; null leaves it out. Default {@code at+jwt}. */
        public Builder type(String type)
        {
            this.type = type == null ? null : new JOSEObjectType(type);
            return this;
        }

        public Builder claim(String name, Object value)
        {
            claims.claim(name, value);
            omitted.remove(name);
            return this;
        }

        /** Leaves these claims out, defaults included (a token without {@code exp}, say). */
        public Builder without(String... names)
        {
            omitted.addAll(List.of(names));
            return this;
        }

        public JWTClaimsSet claims()
        {
            JWTClaimsSet.Builder copy = new JWTClaimsSet.Builder(claims.build());
            omitted.forEach(name -> copy.claim(name, null));
            return copy.build();
        }

        public String sign()
        {
            JWK named = kid == null ? null : key(kid);
            JWK key = named != null && algorithmOf(named).equals(algorithm) ? named : keyFor(algorithm);
            JWSHeader header = new JWSHeader.Builder(algorithm).type(type).keyID(kid == null ? key.getKeyID() : kid).build();
            return signed(header, claims(), signer(key));
        }
    }

    // ------------------------------------------------------------------------- forgeries

    /** {@code alg: none}, no signature, naming the current RSA kid, as if a verifier might skip the check. */
    public String unsigned(JWTClaimsSet claims)
    {
        return unsigned(claims, "none");
    }

    /** An unsigned token with {@code alg} spelled as given ({@code None}, {@code NONE}, ...). */
    public String unsigned(JWTClaimsSet claims, String alg)
    {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("alg", alg);
        header.put("typ", "JWT");
        header.put("kid", currentRsaKid());
        return encode(JSONObjectUtils.toJSONString(header)) + "." + encode(claims.toString()) + ".";
    }

    /** HS256 keyed with the RSA public key's DER: a verifier that hands "the key for rsa-1" to any algorithm accepts it. */
    public String hmacWithPublicKey(JWTClaimsSet claims)
    {
        return hmacWithPublicKey(claims, PublicKeyAs.DER);
    }

    public String hmacWithPublicKey(JWTClaimsSet claims, PublicKeyAs form)
    {
        RSAKey rsa = (RSAKey)key(currentRsaKid()).toPublicJWK();
        try
        {
            byte[] der = rsa.toRSAPublicKey().getEncoded();
            byte[] secret = switch (form)
            {
                case DER -> der;
                case PEM -> ("-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                    + "\n-----END PUBLIC KEY-----\n").getBytes(StandardCharsets.US_ASCII);
                case JWK_JSON -> rsa.toJSONString().getBytes(StandardCharsets.UTF_8);
            };
            JWSHeader header = new JWSHeader.Builder(JWSAlgorithm.HS256).type(ACCESS_TOKEN_TYPE).keyID(rsa.getKeyID()).build();
            return signed(header, claims, new MACSigner(secret));
        }
        catch (JOSEException x)
        {
            throw new IllegalStateException("cannot make the HMAC forgery", x);
        }
    }

    /** A token of this server with its scope widened by {@value #WIDENED_SCOPE} after signing; the signature kept. */
    public String tampered(String jwt)
    {
        String scope = (String)payloadOf(jwt).get("scope");
        return tampered(jwt, "scope", scope == null || scope.isBlank() ? WIDENED_SCOPE : scope + " " + WIDENED_SCOPE);
    }

    /** A token with one claim of its payload changed after signing; header and signature kept. */
    public String tampered(String jwt, String claim, Object value)
    {
        String[] parts = jwt.split("\\.", -1);
        Map<String, Object> payload = payloadOf(jwt);
        payload.put(claim, value);
        return parts[0] + "." + encode(JSONObjectUtils.toJSONString(payload)) + "." + parts[2];
    }

    /** Signed by an RSA key that no JWKS of this server holds, {@code kid: stranger}. */
    public String signedByStranger(JWTClaimsSet claims)
    {
        return signedByStranger(claims, "stranger");
    }

    /** Signed by the stranger's key under a kid of the caller's choosing ({@code rsa-1}: a lie). */
    public String signedByStranger(JWTClaimsSet claims, String kid)
    {
        JWSHeader header = new JWSHeader.Builder(JWSAlgorithm.RS256).type(ACCESS_TOKEN_TYPE).keyID(kid).build();
        return signed(header, claims, signer(stranger()));
    }

    /**
     * Signed by the stranger's key, which the header carries as {@code jwk} (CVE-2018-0114): a
     * verifier that trusts a key the token brings accepts anything.
     */
    public String signedWithHeaderKey(JWTClaimsSet claims)
    {
        RSAKey key = stranger();
        JWSHeader header = new JWSHeader.Builder(JWSAlgorithm.RS256).type(ACCESS_TOKEN_TYPE)
            .keyID(currentRsaKid()).jwk(key.toPublicJWK()).build();
        return signed(header, claims, signer(key));
    }

    private synchronized RSAKey stranger()
    {
        if (stranger == null)
            stranger = RsaKeys.stranger();
        return stranger;
    }

    // --------------------------------------------------------------------------- helpers

    private static String signed(JWSHeader header, JWTClaimsSet claims, JWSSigner signer)
    {
        try
        {
            SignedJWT jwt = new SignedJWT(header, claims);
            jwt.sign(signer);
            return jwt.serialize();
        }
        catch (JOSEException x)
        {
            throw new IllegalStateException("cannot sign", x);
        }
    }

    private static JWSAlgorithm algorithmOf(JWK key)
    {
        if (key instanceof RSAKey)
            return JWSAlgorithm.RS256;
        if (key instanceof ECKey)
            return JWSAlgorithm.ES256;
        return JWSAlgorithm.EdDSA;
    }

    private static JWSSigner signer(JWK key)
    {
        try
        {
            if (key instanceof RSAKey rsa)
                return new RSASSASigner(rsa);
            if (key instanceof ECKey ec)
                return new ECDSASigner(ec);
            return new Ed25519Signer((OctetKeyPair)key);
        }
        catch (JOSEException x)
        {
            throw new IllegalStateException("no signer for " + key.getKeyID(), x);
        }
    }

    private static JWSVerifier verifier(JWK key) throws JOSEException
    {
        if (key instanceof RSAKey rsa)
            return new RSASSAVerifier(rsa);
        if (key instanceof ECKey ec)
            return new ECDSAVerifier(ec);
        return new Ed25519Verifier(((OctetKeyPair)key).toPublicJWK());
    }

    private static Map<String, Object> payloadOf(String jwt)
    {
        String[] parts = jwt.split("\\.", -1);
        if (parts.length != 3)
            throw new IllegalArgumentException("not a compact JWS: " + parts.length + " parts (expected: 3)");
        try
        {
            return new LinkedHashMap<>(JSONObjectUtils.parse(new Base64URL(parts[1]).decodeToString()));
        }
        catch (ParseException x)
        {
            throw new IllegalArgumentException("the payload is not a JSON object", x);
        }
    }

    private static String encode(String json)
    {
        return B64URL.encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}
