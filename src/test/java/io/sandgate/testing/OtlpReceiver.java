package io.sandgate.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * An OTLP/HTTP trace receiver as a collector presents one: {@code POST /v1/traces} with a protobuf
 * {@code ExportTraceServiceRequest}, answered 200 with an empty protobuf response. It records each
 * request's path, content type and raw body; it does not decode them (tests look for the trace id's
 * 16 bytes, which the protobuf carries as they are).
 */
public final class OtlpReceiver implements AutoCloseable
{
    /** One export as received. */
    public record Export(String method, String path, String contentType, byte[] body)
    {
    }

    private final Server server;
    private final List<Export> exports = new CopyOnWriteArrayList<>();

    private OtlpReceiver()
    {
        server = LoopbackServers.serve("otlp-receiver", new Handler.Abstract()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception
            {
                byte[] body = BufferUtil.toArray(Content.Source.asByteBuffer(request));
                exports.add(new Export(request.getMethod(), Request.getPathInContext(request), request.getHeaders().get(HttpHeader.CONTENT_TYPE), body));
                response.setStatus(HttpStatus.OK_200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/x-protobuf");
                // An empty ExportTraceServiceResponse: no partial success to report.
                response.write(true, BufferUtil.EMPTY_BUFFER, callback);
                return true;
            }
        });
    }

    public static OtlpReceiver start()
    {
        return new OtlpReceiver();
    }

    /** The base URL a gateway's {@code tracing.otlp.endpoint} names. */
    public String baseUrl()
    {
        return "http://127.0.0.1:" + LoopbackServers.port(server);
    }

    public List<Export> exports()
    {
        return exports;
    }

    @Override
    public void close()
    {
        LoopbackServers.stop(server, "OTLP receiver");
    }
}
