package org.jdapl.karaf.jdk25;

import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.Opcode;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Rewrites, in one class file, the two calls through which Apache Karaf 4.4 reaches the caller's
 * JAAS {@code Subject} with the Security Manager's API, which Java 24+ no longer serves (JEP 486):
 * <ul>
 * <li>{@code Subject.getSubject(AccessControlContext)} throws {@code UnsupportedOperationException}
 *     on Java 24+; each call becomes {@code Subject.current()} (the access control context on the
 *     stack is dropped), the replacement the JDK documents;</li>
 * <li>Karaf's {@code org.apache.karaf.util.jaas.JaasHelper.doAs(Subject, action)} binds the subject
 *     with {@code AccessController.doPrivileged} and a domain combiner, which Java 24+ ignores; each
 *     call becomes {@code Subject.doAs(Subject, action)} (same descriptor), which binds the subject so
 *     that {@code Subject.current()} sees it.</li>
 * </ul>
 * Everything else of the class is kept; a class without such a call is returned as it is.
 */
final class SubjectCallRewriter {
    static final String SUBJECT = "javax/security/auth/Subject";
    static final String JAAS_HELPER = "org/apache/karaf/util/jaas/JaasHelper";
    private static final String GET_SUBJECT = "(Ljava/security/AccessControlContext;)Ljavax/security/auth/Subject;";
    private static final ClassDesc SUBJECT_DESC = ClassDesc.ofInternalName(SUBJECT);
    private static final MethodTypeDesc CURRENT = MethodTypeDesc.of(SUBJECT_DESC);
    private static final byte[] GET_SUBJECT_NAME = "getSubject".getBytes(StandardCharsets.UTF_8);
    private static final byte[] JAAS_HELPER_NAME = JAAS_HELPER.getBytes(StandardCharsets.UTF_8);

    private SubjectCallRewriter() {
    }

    /**
     * The class with its calls rewritten, or null if it makes none. {@code loader} finds the class
     * files of the types the class refers to (as resources, never loading them), so that the stack
     * maps of rewritten methods can be computed.
     */
    static byte[] rewrite(byte[] classFile, ClassLoader loader) {
        if (!contains(classFile, GET_SUBJECT_NAME) && !contains(classFile, JAAS_HELPER_NAME)) {
            return null;   // cheap test first: most classes name neither
        }
        ClassFile cf = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(
                ClassHierarchyResolver.defaultResolver().orElse(ClassHierarchyResolver.ofResourceParsing(loader))));
        ClassModel model = cf.parse(classFile);
        AtomicInteger rewritten = new AtomicInteger();
        CodeTransform calls = (code, element) -> {
            if (!rewriteCall(code, element)) {
                code.with(element);
            } else {
                rewritten.incrementAndGet();
            }
        };
        byte[] result = cf.transformClass(model, ClassTransform.transformingMethodBodies(calls));
        return rewritten.get() == 0 ? null : result;
    }

    /** Emits the replacement of {@code element} and says so, or emits nothing and says false. */
    private static boolean rewriteCall(CodeBuilder code, CodeElement element) {
        if (!(element instanceof InvokeInstruction call) || call.opcode() != Opcode.INVOKESTATIC) {
            return false;
        }
        String owner = call.owner().asInternalName();
        String name = call.name().stringValue();
        if (owner.equals(SUBJECT) && name.equals("getSubject") && call.type().stringValue().equals(GET_SUBJECT)) {
            code.pop();   // the AccessControlContext
            code.invokestatic(SUBJECT_DESC, "current", CURRENT);
            return true;
        }
        if (owner.equals(JAAS_HELPER) && name.equals("doAs")) {
            code.invokestatic(SUBJECT_DESC, "doAs", call.typeSymbol());
            return true;
        }
        return false;
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
