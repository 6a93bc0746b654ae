package io.sandgate.web;

import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.Promise;

/**
 * An answer listener that hands everything to the proxy's own, except a failure the caller's rule
 * says the request may survive: then a copy of the request goes once more, on a new connection of
 * its own (the pool's other idle connections are as old as the failed one), closed after the
 * answer. Jetty's client does not say whether a connection was used before, so the rule is told
 * only whether a connection took the request and nothing came of it: no answer began.
 */
public final class SendAgainOnce implements Response.Listener
{
    /** Whether a request that failed so may go again. */
    @FunctionalInterface
    public interface Rule
    {
        boolean mayGoAgain(boolean untouched, Throwable failure);
    }

    private final HttpClient client;
    private final Request request;
    private final Response.Listener answer;
    private final Rule rule;
    /** Whether a connection took the request: a request that never had one failed to connect. */
    private volatile boolean taken;
    private volatile boolean begun;

    public SendAgainOnce(HttpClient client, Request request, Response.Listener answer, Rule rule)
    {
        this.client = client;
        this.request = request;
        this.answer = answer;
        this.rule = rule;
        request.onRequestBegin(r -> taken = true);
    }

    @Override
    public void onBegin(Response response)
    {
        begun = true;
        answer.onBegin(response);
    }

    @Override
    public boolean onHeader(Response response, HttpField field)
    {
        return answer.onHeader(response, field);
    }

    @Override
    public void onHeaders(Response response)
    {
        answer.onHeaders(response);
    }

    @Override
    public void onContentSource(Response response, Content.Source source)
    {
        answer.onContentSource(response, source);
    }

    @Override
    public void onSuccess(Response response)
    {
        answer.onSuccess(response);
    }

    @Override
    public void onFailure(Response response, Throwable failure)
    {
        if (!mayGoAgain(failure))
            answer.onFailure(response, failure);
    }

    @Override
    public void onComplete(Result result)
    {
        if (!result.isFailed() || !mayGoAgain(result.getFailure()))
        {
            answer.onComplete(result);
            return;
        }
        Request again = client.newRequest(request.getURI())
            .method(request.getMethod())
            .headers(headers -> headers.add(request.getHeaders()))
            .timeout(request.getTimeout(), TimeUnit.MILLISECONDS);
        request.getAttributes().forEach(again::attribute);
        client.resolveDestination(again).newConnection(Promise.from(connection ->
        {
            again.onComplete(done -> connection.close());
            connection.send(again, answer);
        }, x ->
        {
            // No new connection: the browser learns of the first failure, as it would have.
            answer.onFailure(result.getResponse(), result.getFailure());
            answer.onComplete(result);
        }));
    }

    private boolean mayGoAgain(Throwable failure)
    {
        return rule.mayGoAgain(taken && !begun, failure);
    }
}
