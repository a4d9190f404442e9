package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.karaf.shell.api.console.Command;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.ServiceReference;

/**
 * The {@code dat:*} commands in Karaf's shell: {@code dat:list} and {@code dat:providers} are
 * Karaf commands (bundle org.jdapl.karaf.commands) that print tables as Karaf's own commands do
 * (ShellTable, tab-separated with {@code --no-format}) and complete IA names; {@code dat:source},
 * {@code dat:reload} (the registry's plain Gogo commands, which Felix users have) and the tools'
 * {@code dat:dtest} run beside them.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KarafShellCommandsIT extends JdaplContainerTest {

    @Override
    @Configuration
    public Option[] configuration() {
        return KarafContainer.configuration(getClass(), "jdapl-emu", "jdapl-ofa", "jdapl-tools");
    }

    @Test
    public void datListPrintsAShellTableAndTabSeparatedRowsWithNoFormat() throws Exception {
        KarafShell shell = shell();
        String table = shell.run("dat:list");
        assertTrue("a table with Karaf's column separator:\n" + table,
                table.lines().findFirst().orElse("").matches("IA Name\\s+\\| API\\s+\\| Provider.*\\| Reason\\s*"));
        List<String> emu0 = row(shell.run("dat:list --no-format"), "emu0");
        assertEquals(List.of("emu0", "u2.0", "emu", "threadsafe"), emu0.subList(0, 4));
        assertEquals("OPENABLE", emu0.get(5));
        String one = shell.run("dat:list --no-format emu0");
        assertEquals("only the IA asked for:\n" + one, 1, one.lines().count());
    }

    @Test
    public void datProvidersListsEachProviderWithItsOpenIasAndStatus() throws Exception {
        String providers = shell().run("dat:providers --no-format");
        assertEquals("0", row(providers, "emu").get(2));
        assertEquals("OK", row(providers, "emu").get(3));
        assertEquals("0", row(providers, "ofa").get(2));
    }

    @Test
    public void iaNamesCompleteAfterDatList() throws Exception {
        SessionFactory factory = awaitService(SessionFactory.class, null);
        try (Session session = factory.create(new ByteArrayInputStream(new byte[0]),
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(new ByteArrayOutputStream()))) {
            Command list = factory.getRegistry().getCommands().stream()
                    .filter(c -> c.getScope().equals("dat") && c.getName().equals("list")).findFirst().orElseThrow();
            List<String> candidates = new ArrayList<>();
            list.getCompleter(true).complete(session, new Line("dat:list em"), candidates);
            assertTrue("emu0 is offered for \"em\": " + candidates, candidates.stream().anyMatch(c -> c.strip().equals("emu0")));
            assertFalse("only names that start with em: " + candidates,
                    candidates.stream().anyMatch(c -> !c.strip().startsWith("em")));
        }
    }

    @Test
    public void theRegistrysGogoCommandsAndTheToolsRunBesideTheKarafCommands() throws Exception {
        KarafShell shell = shell();
        String datConf = JdaplContainerTest.requiredProperty("dat.conf");
        assertTrue(shell.run("dat:source").contains(datConf + " (system property dat.conf)"));
        assertTrue(shell.run("dat:reload").contains(datConf + " (system property dat.conf)"));
        ServiceReference<?> gogo = context.getServiceReferences("org.jdapl.registry.DatCommands", null)[0];
        assertEquals("the plain Gogo component keeps source and reload in Karaf", List.of("source", "reload"),
                Arrays.asList((String[]) gogo.getProperty("osgi.command.function")));
        assertTrue(shell.run("dat:dtest").contains("dtest: PASSED"));
    }

    private KarafShell shell() {
        return new KarafShell(awaitService(SessionFactory.class, null));
    }

    /** The cells of the --no-format row whose first cell is {@code first}; fails if there is none. */
    static List<String> row(String noFormat, String first) {
        return noFormat.lines().map(l -> Arrays.stream(l.split("\t")).map(String::strip).toList())
                .filter(cells -> cells.get(0).equals(first)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + first + " in:\n" + noFormat));
    }

    /** A command line with the cursor at its end, split at spaces, as the console hands it over. */
    private record Line(String buffer) implements CommandLine {
        @Override
        public int getCursorArgumentIndex() {
            return getArguments().length - 1;
        }

        @Override
        public String getCursorArgument() {
            return getArguments()[getCursorArgumentIndex()];
        }

        @Override
        public int getArgumentPosition() {
            return getCursorArgument().length();
        }

        @Override
        public String[] getArguments() {
            return buffer.split(" ", -1);
        }

        @Override
        public int getBufferPosition() {
            return buffer.length();
        }

        @Override
        public String getBuffer() {
            return buffer;
        }
    }
}
