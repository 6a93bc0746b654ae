package io.sandgate.ingress;

import java.io.EOFException;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The one rule by which both front-ends send a request to a sandbox a second time. */
class SendAgainTest
{
    @ParameterizedTest(name = "{0}, again {1}, untouched {2}, timeout {3}: {4}")
    @CsvSource({
        "GET, false, true, false, true",
        "HEAD, false, true, false, true",
        "PUT, false, true, false, true",
        "DELETE, false, true, false, true",
        "OPTIONS, false, true, false, true",
        // Not idempotent: the sandbox may have acted on it.
        "POST, false, true, false, false",
        "PATCH, false, true, false, false",
        "BREW, false, true, false, false",
        // Once only.
        "GET, true, true, false, false",
        // An answer begun, or a body gone.
        "GET, false, false, false, false",
        // A timeout: a second try would double the wait.
        "GET, false, true, true, false",
    })
    void aRequestGoesAgain_onlyIfIdempotent_untouched_notTimedOut_andOnce(String method, boolean sentAgain, boolean untouched, boolean timeout, boolean expected)
    {
        Throwable failure = timeout ? new TimeoutException() : new EOFException("closed as it was taken");
        assertEquals(expected, SendAgain.mayGoAgain(method, sentAgain, untouched, failure));
    }
}
