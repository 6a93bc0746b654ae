package io.sandgate.egress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * {@code GET /egress/ca.pem}: the certificate of the CA that signs inspected tunnels' leaves, for
 * sandboxes to trust ({@code SSL_CERT_FILE}, {@code NODE_EXTRA_CA_CERTS}, ...). Served on the
 * internal listener with the rest of the egress face; the certificate is public, its key never leaves.
 */
public final class InspectionCaServlet extends HttpServlet
{
    private final byte[] pem;

    public InspectionCaServlet(InspectionCa ca)
    {
        this.pem = ca.certificatePem().getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        response.setContentType("application/x-pem-file");
        response.setContentLength(pem.length);
        response.getOutputStream().write(pem);
    }
}
