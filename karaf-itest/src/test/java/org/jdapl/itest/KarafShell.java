package org.jdapl.itest;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.CompletionException;
import javax.security.auth.Subject;
import org.apache.karaf.jaas.boot.principal.RolePrincipal;
import org.apache.karaf.jaas.boot.principal.UserPrincipal;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.api.console.SessionFactory;

/**
 * Karaf's shell inside the container: each command line runs in a new session of Karaf's
 * {@link SessionFactory} (the one the console and SSH use), bound to the subject of the user
 * {@code karaf} with the roles of Karaf's default {@code admingroup}, as an SSH login binds it
 * (the session takes its {@code USER} from it). What the command prints, and its result, are
 * returned.
 */
final class KarafShell {
    /** Karaf's default user, with the roles etc/users.properties gives its admingroup. */
    static final Subject KARAF_ADMIN = new Subject(true, Set.of(new UserPrincipal("karaf"),
            new RolePrincipal("admin"), new RolePrincipal("manager"), new RolePrincipal("viewer"),
            new RolePrincipal("systembundles"), new RolePrincipal("ssh")), Set.of(), Set.of());

    private final SessionFactory sessions;

    KarafShell(SessionFactory sessions) {
        this.sessions = sessions;
    }

    /** Runs {@code commandLine} as {@link #KARAF_ADMIN}; a failing command throws what the session threw. */
    String run(String commandLine) throws Exception {
        return runAs(KARAF_ADMIN, commandLine);
    }

    /** Runs {@code commandLine} as {@code subject}. */
    String runAs(Subject subject, String commandLine) throws Exception {
        try {
            return Subject.callAs(subject, () -> execute(commandLine));
        } catch (CompletionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    private String execute(String commandLine) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (Session session = sessions.create(new ByteArrayInputStream(new byte[0]), out, out)) {
            Object result = session.execute(commandLine);
            if (result != null) {
                out.println(result);
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
