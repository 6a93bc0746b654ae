package io.sandgate.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.ClassTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs every test of the class once against each ingress front-end of the embedded runner: the
 * handler on Jetty's core API, and the servlets the WAR serves with. The class's
 * {@link GatewayExtension} starts its gateways with the front-end of the run, and stops a class-wide
 * gateway between the two runs.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ClassTemplate
@ExtendWith(IngressFrontEnds.class)
public @interface EachIngressFrontEnd
{
    /**
     * Runs each test on one front-end only, the class's tests taking the front-ends in turn (in the
     * order of their names), so that every front-end is still driven by each class; a test shows as
     * skipped in the run of the other front-ends. For the browser tests: a real Chromium costs about
     * ten seconds a scenario, and the walls they drive are the same gateway code behind either
     * front-end, which the HTTP-level tests of the same walls check on both.
     */
    boolean split() default false;
}
