package io.sandgate.bench;

import java.time.Duration;
import java.util.OptionalDouble;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The retries an agent gets from the official OpenAI and Anthropic Python SDKs when it sets
 * nothing: both clients are generated from one template, whose {@code _constants.py} says
 * {@code DEFAULT_MAX_RETRIES = 2}, {@code INITIAL_RETRY_DELAY = 0.5} and
 * {@code MAX_RETRY_DELAY = 8.0}, and whose {@code _base_client.py} retries a connection error or
 * timeout, a 408, 409 or 429 and any status from 500 up, sleeping before retry n (0 for the first)
 * {@code min(0.5 s * 2^n, 8 s) * (1 - 0.25 * random())}, or the server's Retry-After when it is
 * above 0 and at most 60 s. An agent's step against the gateway is then up to three requests.
 */
final class SdkRetries
{
    static final int MAX_RETRIES = 2;
    private static final double INITIAL_DELAY_SECONDS = 0.5;
    private static final double MAX_DELAY_SECONDS = 8.0;
    /** Anthropic's client; OpenAI's now takes up to 120 s, which no answer in these runs comes near. */
    private static final double MAX_RETRY_AFTER_SECONDS = 60;

    private SdkRetries()
    {
    }

    /** Whether the SDKs retry a request that ended with {@code status}, 0 standing for no response at all. */
    static boolean retries(int status)
    {
        return status == 0 || status == 408 || status == 409 || status == 429 || status >= 500;
    }

    /** How long the SDKs sleep before retry {@code retriesTaken} (0 for the first). */
    static Duration delay(int retriesTaken, OptionalDouble retryAfterSeconds)
    {
        double seconds;
        if (retryAfterSeconds.isPresent() && retryAfterSeconds.getAsDouble() > 0 && retryAfterSeconds.getAsDouble() <= MAX_RETRY_AFTER_SECONDS)
            seconds = retryAfterSeconds.getAsDouble();
        else
            seconds = Math.min(INITIAL_DELAY_SECONDS * Math.pow(2, retriesTaken), MAX_DELAY_SECONDS) * (1 - 0.25 * ThreadLocalRandom.current().nextDouble());
        return Duration.ofNanos(Math.round(seconds * 1e9));
    }
}
