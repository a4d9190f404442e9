package org.jdapl.conformance;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a method of the kit as the case for one conformance ID, e.g. {@code @Conformance("CONN_04")}.
 * The case's display name is the ID followed by the method name.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Conformance {
    /** The conformance ID, e.g. {@code CONN_04}. */
    String value();
}
