package org.jdapl.itest;

import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.sshd.client.SshClient;
import org.apache.sshd.client.keyverifier.AcceptAllServerKeyVerifier;
import org.apache.sshd.client.session.ClientSession;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * Karaf's SSH console on Java 25: a user logs in with a password (the {@code karaf} user of
 * {@code etc/users.properties}, enabled for the test) on a loopback port and runs commands, among
 * them the jdapl ones. Without {@code jdapl-karaf-jdk25} the session closes at once
 * ({@code Subject.getSubject} in the session's set-up).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KarafSshIT extends JdaplContainerTest {
    /** Chosen in the test JVM when it configures the container (the container reads the property). */
    private static final int PORT = freeLoopbackPort();

    @Override
    @Configuration
    public Option[] configuration() {
        List<Option> options = new ArrayList<>(Arrays.asList(
                KarafContainer.configuration(getClass(), true, "jdapl-emu", "jdapl-tools")));
        options.add(editConfigurationFilePut("etc/org.apache.karaf.shell.cfg", "sshPort", Integer.toString(PORT)));
        options.add(editConfigurationFilePut("etc/org.apache.karaf.shell.cfg", "sshHost", "127.0.0.1"));
        options.add(editConfigurationFilePut("etc/users.properties", "karaf", "karaf,_g_:admingroup"));
        options.add(editConfigurationFilePut("etc/users.properties", "_g_:admingroup",
                "group,admin,manager,viewer,systembundles,ssh"));
        options.add(systemProperty("jdapl.itest.sshPort").value(Integer.toString(PORT)));
        return options.toArray(Option[]::new);
    }

    @Test
    public void aUserLogsInBySshAndRunsDatCommands() throws Exception {
        int port = Integer.parseInt(requiredProperty("jdapl.itest.sshPort"));
        SshClient client = SshClient.setUpDefaultClient();
        client.setServerKeyVerifier(AcceptAllServerKeyVerifier.INSTANCE);
        client.start();
        try {
            String out = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (out == null) {
                try (ClientSession session = client.connect("karaf", "127.0.0.1", port)
                        .verify(10, TimeUnit.SECONDS).getSession()) {
                    session.addPasswordIdentity("karaf");
                    session.auth().verify(10, TimeUnit.SECONDS);
                    out = session.executeRemoteCommand("shell:echo logged in; dat:list --no-format emu0; dat:dtest");
                } catch (IOException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;   // the console did not answer within 30 s
                    }
                    Thread.sleep(500);
                }
            }
            assertTrue("the command ran in the SSH session:\n" + out, out.contains("logged in"));
            assertTrue("dat:list over SSH:\n" + out, out.lines()
                    .anyMatch(l -> l.split("\t")[0].strip().equals("emu0") && l.contains("\tOPENABLE\t")));
            assertTrue("dat:dtest over SSH:\n" + out, out.contains("dtest: PASSED"));
        } finally {
            client.stop();
        }
    }

    private static int freeLoopbackPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
