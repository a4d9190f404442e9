package org.apache.karaf.util.jaas;

import java.security.PrivilegedAction;
import javax.security.auth.Subject;

/** Stands for Karaf's JaasHelper: binds nothing that Subject.current() would see on Java 24+. */
public final class JaasHelper {
    private JaasHelper() {
    }

    public static <T> T doAs(Subject subject, PrivilegedAction<T> action) {
        return action.run();
    }
}
