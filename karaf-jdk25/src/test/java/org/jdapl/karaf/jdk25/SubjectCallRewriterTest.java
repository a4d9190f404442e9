package org.jdapl.karaf.jdk25;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.security.Principal;
import java.util.Set;
import javax.security.auth.Subject;
import org.junit.jupiter.api.Test;

/**
 * The rewriter against a class that calls the Subject API as Karaf 4.4 does: as compiled, the
 * calls fail on this JDK (25) or lose the subject; rewritten, they see the subject bound by
 * {@code Subject.doAs} and {@code JaasHelper.doAs}.
 */
class SubjectCallRewriterTest {
    private static final Subject ADMIN = new Subject(true, Set.<Principal>of(() -> "karaf"), Set.of(), Set.of());

    @Test
    void asCompiledGetSubjectIsRefusedOnThisJdk() throws Exception {
        Class<?> original = KarafStyleCaller.class;
        InvocationTargetException e = assertThrows(InvocationTargetException.class,
                () -> original.getMethod("currentSubject").invoke(null));
        assertEquals(UnsupportedOperationException.class, e.getCause().getClass());
    }

    @Test
    void rewrittenGetSubjectReturnsTheSubjectBoundByDoAs() throws Exception {
        Method current = rewritten().getMethod("currentSubject");
        assertNull(current.invoke(null), "no subject bound");
        assertSame(ADMIN, Subject.callAs(ADMIN, () -> current.invoke(null)));
    }

    @Test
    void rewrittenJaasHelperDoAsBindsTheSubject() throws Exception {
        Method inside = rewritten().getMethod("subjectSeenInside", Subject.class);
        assertSame(ADMIN, inside.invoke(null, ADMIN));
    }

    @Test
    void aClassThatMakesNoSuchCallIsLeftAsItIs() throws IOException {
        assertNull(SubjectCallRewriter.rewrite(bytesOf(SubjectCallRewriterTest.class), getClass().getClassLoader()));
        assertNull(SubjectCallRewriter.rewrite(new byte[0], getClass().getClassLoader()));
    }

    /** KarafStyleCaller rewritten and defined in a loader of its own (JaasHelper from the parent). */
    private static Class<?> rewritten() throws IOException {
        ClassLoader parent = SubjectCallRewriterTest.class.getClassLoader();
        byte[] bytes = SubjectCallRewriter.rewrite(bytesOf(KarafStyleCaller.class), parent);
        assertNotNull(bytes, "KarafStyleCaller makes both calls");
        return new ClassLoader(parent) {
            Class<?> define() {
                return defineClass(KarafStyleCaller.class.getName(), bytes, 0, bytes.length);
            }
        }.define();
    }

    private static byte[] bytesOf(Class<?> type) throws IOException {
        try (InputStream in = type.getResourceAsStream(type.getSimpleName() + ".class")) {
            return in.readAllBytes();
        }
    }
}
