package org.jdapl.cdi;

import static java.lang.annotation.ElementType.FIELD;
import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.PARAMETER;
import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.enterprise.util.AnnotationLiteral;
import jakarta.inject.Qualifier;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.util.Objects;

/**
 * Injects the Interface Adapter of that name, opened through the application's
 * {@link org.jdapl.dat.DatRegistry} ({@code dat_ia_open}) when it is first used and closed ABRUPT
 * ({@code dat_ia_close}, freeing every object made through it) when its scope ends:
 *
 * <pre>{@code
 * @Inject @Ia("emu0") InterfaceAdapter ia;                          // application scoped
 * @Inject @Ia(value = "emu0", scope = IaScope.DEPENDENT) Instance<InterfaceAdapter> fresh;
 * }</pre>
 *
 * <p>A direct injection point makes the IA required: an IA the registry cannot open fails the
 * application's deployment validation with the registry's message (the name, the dat.conf source,
 * why). An {@code Instance<InterfaceAdapter>} injection point makes it optional: {@code get()}
 * then throws the registry's {@link org.jdapl.dat.DatException} while it cannot be opened.
 * Each (name, scope) is one bean.
 */
@Qualifier
@Documented
@Retention(RUNTIME)
@Target({FIELD, METHOD, PARAMETER, TYPE})
public @interface Ia {
    /** The IA name, as {@code dat_ia_open} takes it (a dat.conf field 1, or a provider's default IA). */
    String value();

    /** How long one opened IA lives; application by default. */
    IaScope scope() default IaScope.APPLICATION;

    /** An {@code @Ia} for programmatic lookups, e.g. {@code instance.select(Ia.Literal.of("emu0"))}. */
    final class Literal extends AnnotationLiteral<Ia> implements Ia {
        private static final long serialVersionUID = 1L;

        private final String value;
        private final IaScope scope;

        private Literal(String value, IaScope scope) {
            this.value = Objects.requireNonNull(value, "value");
            this.scope = Objects.requireNonNull(scope, "scope");
        }

        /** {@code @Ia(value)}: the application-scoped IA of that name. */
        public static Literal of(String value) {
            return new Literal(value, IaScope.APPLICATION);
        }

        /** {@code @Ia(value = value, scope = scope)}. */
        public static Literal of(String value, IaScope scope) {
            return new Literal(value, scope);
        }

        @Override
        public String value() {
            return value;
        }

        @Override
        public IaScope scope() {
            return scope;
        }
    }
}
