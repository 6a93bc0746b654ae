package io.sandgate.web;

import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;

/** When a request's exchange is over, for filters that count or log it after the chain returns. */
public final class Exchanges
{
    private Exchanges()
    {
    }

    /**
     * Runs {@code action} once, when the exchange has ended: at once if the request stayed
     * synchronous, otherwise when its asynchronous processing completes, however many cycles it
     * went through (a WebSocket upgrade that waits for its sandbox dispatches back and starts
     * again, and a new cycle keeps only the listeners it is given again). Call it after the filter
     * chain returns, still within the request's first dispatch.
     */
    public static void whenDone(HttpServletRequest request, Runnable action)
    {
        if (!request.isAsyncStarted())
        {
            action.run();
            return;
        }
        request.getAsyncContext().addListener(new AsyncListener()
        {
            private final AtomicBoolean done = new AtomicBoolean();

            @Override
            public void onComplete(AsyncEvent event)
            {
                if (done.compareAndSet(false, true))
                    action.run();
            }

            /** Ending: onComplete follows. */
            @Override
            public void onTimeout(AsyncEvent event)
            {
            }

            /** Ending: onComplete follows. */
            @Override
            public void onError(AsyncEvent event)
            {
            }

            @Override
            public void onStartAsync(AsyncEvent event)
            {
                event.getAsyncContext().addListener(this);
            }
        });
    }
}
