package org.jdapl.karaf.jdk25;

import java.security.AccessController;
import java.security.PrivilegedAction;
import javax.security.auth.Subject;
import org.apache.karaf.util.jaas.JaasHelper;

/** Calls the Subject API as Karaf 4.4's shell and Event Admin do. */
@SuppressWarnings("removal")
public final class KarafStyleCaller {
    private KarafStyleCaller() {
    }

    /** As Karaf's ShellUtil.getCurrentUserName: the subject of the access control context. */
    public static Subject currentSubject() {
        return Subject.getSubject(AccessController.getContext());
    }

    /** As Karaf's ssh ShellCommand: runs the action as the subject through JaasHelper. */
    public static Subject subjectSeenInside(Subject subject) {
        return JaasHelper.doAs(subject, (PrivilegedAction<Subject>) KarafStyleCaller::currentSubject);
    }
}
