package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * Configuration the Karaf way: {@code etc/org.jdapl.registry.cfg} names a dat.conf (present when
 * Karaf starts); a factory configuration file for an emulated IA
 * ({@code etc/org.jdapl.registry.ia-NAME.cfg}) dropped into {@code etc/} while Karaf runs declares
 * a new IA that opens without a restart, and goes when the file goes; {@code config:edit} of the
 * registry's configuration in Karaf's shell switches to another dat.conf, and Karaf writes the
 * change back to {@code etc/org.jdapl.registry.cfg}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KarafConfigurationIT extends JdaplContainerTest {
    static final String BOOT_CONF = "emu-etc u2.0 threadsafe default emu emu.1.0 \"loopback etc\" \"\"\n";
    static final String EDITED_CONF = "emu-edited u2.0 threadsafe default emu emu.1.0 \"loopback edited\" \"\"\n";

    @Override
    @Configuration
    public Option[] configuration() {
        Path datConf = writeConf("karaf-dat.conf", BOOT_CONF);
        Option[] karaf = KarafContainer.configuration(getClass(), "jdapl-emu");
        Option[] all = Arrays.copyOf(karaf, karaf.length + 1);
        all[karaf.length] = editConfigurationFilePut("etc/org.jdapl.registry.cfg", "dat.conf", datConf.toString());
        return all;
    }

    @Test
    public void registryCfgInEtcNamesTheDatConfTheRegistryReads() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        await("the registry reads karaf-dat.conf: " + registry.configurationSource(),
                () -> registry.configurationSource().contains("karaf-dat.conf"));
        try (InterfaceAdapter ia = registry.open("emu-etc", 8)) {
            assertEquals("emu-etc", ia.name());
        }
        String source = new KarafShell(awaitService(SessionFactory.class, null)).run("dat:source");
        assertTrue("dat:source names the file and the configuration: " + source, source.contains("karaf-dat.conf"));
    }

    @Test
    public void factoryConfigurationFileDroppedIntoEtcOpensANewIaWithoutARestart() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        DatProvider emu = awaitService(DatProvider.class, "(dat.provider=emu)");
        assertFalse(openable(registry, "emu-dropped"));
        Path cfg = etc().resolve("org.jdapl.registry.ia-dropped.cfg");
        Files.writeString(cfg, "ia_name = emu-dropped\nlib_path = emu\nia_params = loopback dropped\n",
                StandardCharsets.UTF_8);
        try {
            await("Karaf's file install hands the new file to the registry: " + registry.entries(),
                    () -> openable(registry, "emu-dropped"));
            try (InterfaceAdapter ia = registry.open("emu-dropped", 8)) {
                assertEquals("emu-dropped", ia.name());
            }
        } finally {
            Files.delete(cfg);
        }
        await("the IA leaves with its file: " + registry.entries(), () -> !openable(registry, "emu-dropped"));
        ContainerIT.assertAllZero(emu.openObjects());
    }

    @Test
    public void configEditInKarafsShellSwitchesTheDatConfAndIsWrittenBackToEtc() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        Path edited = writeConf("karaf-edited-dat.conf", EDITED_CONF);
        KarafShell shell = new KarafShell(awaitService(SessionFactory.class, null));
        shell.run("config:edit org.jdapl.registry\nconfig:property-set dat.conf " + edited + "\nconfig:update");
        await("the registry reads " + edited + ": " + registry.configurationSource(),
                () -> registry.configurationSource().contains("karaf-edited-dat.conf"));
        try (InterfaceAdapter ia = registry.open("emu-edited", 8)) {
            assertEquals("emu-edited", ia.name());
        }
        assertFalse("emu-etc was in the previous file only", openable(registry, "emu-etc"));
        await("Karaf writes the edit back to etc/org.jdapl.registry.cfg",
                () -> read(etc().resolve("org.jdapl.registry.cfg")).contains("karaf-edited-dat.conf"));

        shell.run("config:edit org.jdapl.registry\nconfig:property-set dat.conf " + KarafContainerPaths.conf("karaf-dat.conf")
                + "\nconfig:update");
        await("back to karaf-dat.conf: " + registry.configurationSource(), () -> openable(registry, "emu-etc"));
    }

    private static boolean openable(DatRegistry registry, String name) {
        return registry.entries().stream().anyMatch(e -> e.iaName().equals(name) && e.openable());
    }

    private static Path etc() {
        return Path.of(System.getProperty("karaf.etc"));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path writeConf(String name, String content) {
        try {
            return Files.writeString(KarafContainerPaths.conf(name), content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Where the test's dat.conf files live: the module's target directory, seen from both JVMs. */
    static final class KarafContainerPaths {
        private KarafContainerPaths() {
        }

        static Path conf(String name) {
            try {
                return Files.createDirectories(Path.of(requiredProperty("jdapl.itest.target"), "datconf")).resolve(name);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
