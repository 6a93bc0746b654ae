package io.sandgate.egress;

/**
 * Retries as a share of requests (a token bucket in the manner of Finagle's retry budget): each
 * request deposits {@code ratio} of a token, each retry withdraws one. When many requests fail at
 * once, at most that share of them is retried, so a sick egress cannot be drowned by its own
 * retries. A small reserve lets a quiet gateway retry its first failures.
 */
final class RetryBudget
{
    private static final double RESERVE = 10;

    private final double ratio;
    private double tokens = RESERVE;

    RetryBudget(double ratio)
    {
        this.ratio = ratio;
    }

    synchronized void deposit()
    {
        tokens = Math.min(RESERVE + 100 * ratio, tokens + ratio);
    }

    synchronized boolean tryWithdraw()
    {
        if (tokens < 1)
            return false;
        tokens -= 1;
        return true;
    }
}
