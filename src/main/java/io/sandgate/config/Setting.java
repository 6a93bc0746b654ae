package io.sandgate.config;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Names the key a record component is bound from when its name does not follow from the record's
 * prefix ({@code grantParam} under {@code ingress.} is {@code ingress.grant.param}, not
 * {@code ingress.grant-param}). Without it, {@link RecordBuilder#bind} takes the prefix and the
 * component's name in kebab case.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.RECORD_COMPONENT)
@interface Setting
{
    /** The dotted key name, as declared in {@link ConfigKeys}. */
    String value();
}
