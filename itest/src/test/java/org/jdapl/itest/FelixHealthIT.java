package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.mavenBundle;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;

/**
 * The health checks in Felix: with Apache Felix Health Checks and the health bundle of this reactor
 * added to the container, {@code hc:exec jdapl} in the Gogo runtime runs one check per provider:
 * the emulated provider OK with the IAs it has open, the OFA provider WARN with the reason when the
 * host has no RDMA device.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class FelixHealthIT extends JdaplContainerTest {

    @Override
    @Configuration
    public Option[] configuration() {
        List<Option> options = new ArrayList<>(Arrays.asList(super.configuration()));
        options.addAll(List.of(
                bundle(new File(requiredProperty("jdapl.itest.slf4j17")).toURI().toString()).startLevel(3),
                mavenBundle("org.apache.felix", "org.apache.felix.eventadmin").versionAsInProject().startLevel(3),
                mavenBundle("jakarta.servlet", "jakarta.servlet-api").versionAsInProject().startLevel(3),
                mavenBundle("org.osgi", "org.osgi.service.servlet").versionAsInProject().startLevel(3),
                mavenBundle("org.osgi", "org.osgi.service.condition").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.felix", "org.apache.felix.healthcheck.api").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.felix", "org.apache.felix.healthcheck.core").versionAsInProject().startLevel(3),
                bundle(new File(requiredProperty("jdapl.bundle.health")).toURI().toString()).startLevel(5)));
        return options.toArray(Option[]::new);
    }

    @Test
    public void hcExecJdaplRunsACheckPerProviderOkWithOpenIasAndWarnWithoutADevice() throws Exception {
        CommandProcessor gogo = awaitService(CommandProcessor.class, null);
        DatRegistry registry = awaitService(DatRegistry.class, null);
        await("hc:exec is registered and both checks answer", () -> {
            String out = hcExec(gogo);
            return out.contains("jdapl provider emu") && out.contains("jdapl provider ofa");
        });
        try (InterfaceAdapter ia = registry.open("emu0", 8)) {
            String out = hcExec(gogo);
            assertTrue("emu is OK with its open IA:\n" + out, out.contains("provider emu") && out.contains("1 IA open"));
            if (!Files.isDirectory(Path.of("/sys/class/infiniband"))) {
                assertTrue("ofa warns with the reason:\n" + out, out.contains("WARN")
                        && out.contains("cannot open any IA: "));
            }
        }
        assertEquals(Bundle.ACTIVE, installedBundle("org.jdapl.health").getState());
    }

    /** {@code hc:exec -v jdapl} through the Gogo runtime, its output as text. */
    private static String hcExec(CommandProcessor gogo) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (CommandSession session = gogo.createSession(new ByteArrayInputStream(new byte[0]), out, out)) {
            Object result = session.execute("hc:exec -v jdapl");
            if (result != null) {
                out.println(result);
            }
        } catch (Exception e) {
            return "hc:exec failed: " + e;
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
