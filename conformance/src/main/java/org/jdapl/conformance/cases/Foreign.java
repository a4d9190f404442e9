package org.jdapl.conformance.cases;

import java.lang.reflect.Proxy;

/** Handles that no provider created: a consumer's own implementation of an API interface. */
final class Foreign {
    private Foreign() {
    }

    /** An implementation of {@code type} whose every DAT method throws UnsupportedOperationException. */
    static <T> T handle(Class<T> type) {
        Object proxy = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, m, args) ->
                switch (m.getName()) {
                    case "hashCode" -> System.identityHashCode(self);
                    case "equals" -> self == args[0];
                    case "toString" -> "foreign " + type.getSimpleName();
                    default -> throw new UnsupportedOperationException(
                            "a provider called " + m.getName() + " of a handle it did not create");
                });
        return type.cast(proxy);
    }
}
