package org.jdapl.itest;

import static org.junit.Assert.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/** The registry's Gogo commands (scope {@code dat}) answer through the Gogo runtime's command processor. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class GogoCommandsIT extends JdaplContainerTest {

    @Test
    public void datListShowsTheIasAndWhetherTheyOpen() throws Exception {
        String list = execute("dat:list");
        assertTrue(list, list.contains("emu0"));
        assertTrue(list, list.contains("OPENABLE"));
    }

    @Test
    public void datSourceShowsTheConfigurationInEffect() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        String source = execute("dat:source");
        assertTrue(source, source.startsWith(registry.configurationSource()));
    }

    @Test
    public void datProvidersCountsTheOpenIas() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        String before = execute("dat:providers");
        assertTrue(before, before.contains("emu: 0 IAs open"));
        assertTrue(before, before.contains("ofa: 0 IAs open; no RDMA device (ibv_get_device_list found none)"));
        try (InterfaceAdapter ia = registry.open("emu0", 8)) {
            String during = execute("dat:providers");
            assertTrue(during, during.contains("emu: 1 IA open"));
            assertTrue(ia.name(), execute("dat:list").contains(ia.name()));
        }
        String after = execute("dat:providers");
        assertTrue(after, after.contains("emu: 0 IAs open"));
    }

    @Test
    public void datReloadReadsTheConfigurationAgain() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        String reload = execute("dat:reload");
        assertTrue(reload, reload.startsWith(registry.configurationSource()));
        assertTrue(reload, execute("dat:list").contains("emu0"));
    }

    /** Runs a command line in a new session of the Gogo runtime; its value and printed output. */
    private String execute(String line) throws Exception {
        await("the dat commands are registered", () -> {
            try {
                return context.getServiceReferences((String) null,
                        "(&(osgi.command.scope=dat)(osgi.command.function=list))") != null;
            } catch (org.osgi.framework.InvalidSyntaxException e) {
                throw new IllegalStateException(e);
            }
        });
        CommandProcessor processor = awaitService(CommandProcessor.class, null);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try (PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
             CommandSession session = processor.createSession(new ByteArrayInputStream(new byte[0]), outStream, errStream)) {
            Object value = session.execute(line);
            String printed = out.toString(StandardCharsets.UTF_8);
            String error = err.toString(StandardCharsets.UTF_8);
            assertTrue(line + " wrote to stderr: " + error, error.isEmpty());
            return (value == null ? "" : String.valueOf(value)) + printed;
        }
    }
}
