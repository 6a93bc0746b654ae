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
}
