package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.Hashtable;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.RegistryEntry;
import org.jdapl.dat.spi.DatProvider;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * IAs opened by name from what Configuration Admin hands the registry: a dat.conf named by the
 * registry's configuration (pid {@code org.jdapl.registry}, property {@code dat.conf}), and IAs
 * declared as factory configurations (factory pid {@code org.jdapl.registry.ia}).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class DatConfIT extends JdaplContainerTest {
    static final String REGISTRY_PID = "org.jdapl.registry";
    static final String IA_FACTORY_PID = "org.jdapl.registry.ia";

    /** OFED, illumos and jdapl lines, as DAT_CONF.md quotes them. */
    static final String DAT_CONF = """
            # OFED
            ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
            ofa-v2-mlx4_0-1u u2.0 nonthreadsafe default libdaploucm.so.2 dapl.2.0 "mlx4_0 1" ""
            # illumos
            ibd0 u1.2 nonthreadsafe default udapl_tavor.so.1 SUNW.1.0 "" "driver_name=tavor"
            # jdapl
            emu-conf u2.0 threadsafe default emu emu.1.0 "loopback conf" ""
            emu-hidden u2.0 threadsafe nondefault emu emu.1.0 loopback ""
            """;

    private ConfigurationAdmin configAdmin;
    private DatRegistry registry;
    private DatProvider emu;
    /** The source in effect without configuration (the tests' empty dat.conf, named by -Ddat.conf). */
    private String unconfiguredSource;

    @Before
    public void services() {
        configAdmin = awaitService(ConfigurationAdmin.class, null);
        registry = awaitService(DatRegistry.class, null);
        emu = awaitService(DatProvider.class, "(dat.provider=emu)");
        unconfiguredSource = registry.configurationSource();
    }

    @After
    public void noConfigurationLeft() throws Exception {
        Configuration[] left = configAdmin.listConfigurations(
                "(|(service.pid=" + REGISTRY_PID + ")(service.factoryPid=" + IA_FACTORY_PID + "))");
        if (left != null) {
            for (Configuration c : left) {
                c.delete();
            }
        }
        await("the registry is back on " + unconfiguredSource + " (now: " + registry.configurationSource() + ")",
                () -> registry.configurationSource().equals(unconfiguredSource));
    }

    @Test
    public void iaOpensByNameFromDatConfHandedOverByConfigurationAdmin() throws Exception {
        Path datConf = Files.writeString(targetDirectory("datconf").resolve("dat.conf"), DAT_CONF,
                StandardCharsets.UTF_8);
        Configuration config = configAdmin.getConfiguration(REGISTRY_PID, "?");
        config.update(properties("dat.conf", datConf.toString()));
        await("the registry reads " + datConf + " (source now: " + registry.configurationSource() + ")",
                () -> registry.configurationSource().contains(datConf.toString()));

        try (InterfaceAdapter ia = registry.open("emu-conf", 8)) {
            assertEquals("emu-conf", ia.name());
            assertNotNull(ia.query().attributes().address());
            assertTrue(registry.listProviders().stream().anyMatch(p -> p.iaName().equals("emu-conf")));
        }
        ContainerIT.assertAllZero(emu.openObjects());

        assertNotRegistered("emu-hidden");       // nondefault
        assertNotRegistered("no-such-ia");
        assertNotRegistered("ibd0");             // u1.2, a library we do not provide

        RegistryEntry ofed = entry("ofa-v2-ib0");
        assertEquals("libdaplofa.so.2 maps onto the OFA provider", "ofa", ofed.provider());
        assertTrue("the OFA provider is present: " + ofed, ofed.present());
        assertFalse("no device here, so not openable: " + ofed, ofed.openable());
        assertTrue("the listing says why: " + ofed, ofed.status() != null && !ofed.status().isBlank());
        assertEquals("ofa", entry("ofa-v2-mlx4_0-1u").provider());
        try {
            registry.openv("ofa-v2-ib0", 8, 2, 0, false).close();
            fail("an OFA IA opened on a machine without RDMA devices");
        } catch (DatException expected) {
            assertNotNull(expected.type());
        }
        assertEquals("the OFA bundle survives", Bundle.ACTIVE, installedBundle(OFA_BSN).getState());

        RegistryEntry illumos = entry("ibd0");
        assertNull("udapl_tavor.so.1 is no provider of ours", illumos.provider());
        assertTrue(illumos.status(), illumos.status().contains("not provided"));
        assertTrue("the file line is the source: " + entry("emu-conf").source(),
                entry("emu-conf").source().contains(datConf.getFileName().toString()));
    }

    @Test
    public void iaOpensByNameFromFactoryConfiguration() throws Exception {
        assertNotRegistered("emu-factory");
        Configuration config = configAdmin.createFactoryConfiguration(IA_FACTORY_PID, "?");
        Dictionary<String, Object> props = properties("ia_name", "emu-factory");
        props.put("lib_path", "emu");
        props.put("ia_params", "loopback factory");
        config.update(props);
        await("the registry lists emu-factory: " + registry.entries(),
                () -> registry.entries().stream().anyMatch(e -> e.iaName().equals("emu-factory") && e.openable()));
        assertTrue(entry("emu-factory").source(), entry("emu-factory").source().contains(config.getPid()));

        try (InterfaceAdapter ia = registry.open("emu-factory", 8)) {
            assertEquals("emu-factory", ia.name());
            assertNotNull(ia.query().attributes().address());
        }
        ContainerIT.assertAllZero(emu.openObjects());

        config.delete();
        await("emu-factory leaves the listing",
                () -> registry.entries().stream().noneMatch(e -> e.iaName().equals("emu-factory")));
        assertNotRegistered("emu-factory");
    }

    @Test
    public void tcpIaOfAFactoryConfigurationConnectsOverLoopbackSockets() throws Exception {
        Configuration config = configAdmin.createFactoryConfiguration(IA_FACTORY_PID, "?");
        Dictionary<String, Object> props = properties("ia_name", "emu-tcp");
        props.put("lib_path", "emu");
        props.put("ia_params", "tcp 127.0.0.1:0");
        config.update(props);
        await("the registry lists emu-tcp: " + registry.entries(),
                () -> registry.entries().stream().anyMatch(e -> e.iaName().equals("emu-tcp") && e.openable()));

        try (ConnectedPair pair = ConnectedPair.open(registry, "emu-tcp")) {
            assertEquals("emu-tcp", pair.active.ia.name());
            java.net.InetSocketAddress address =
                    (java.net.InetSocketAddress) pair.passive.ia.query().attributes().address();
            assertTrue("a loopback socket address: " + address, address.getAddress().isLoopbackAddress());
            assertTrue("a port of its own: " + address, address.getPort() > 0);
        }
        ContainerIT.assertAllZero(emu.openObjects());
        config.delete();
    }

    @Test
    public void datConfThatCannotBeReadIsAnErrorWithoutFallback() throws Exception {
        Path missing = targetDirectory("datconf").resolve("missing-dat.conf");
        Files.deleteIfExists(missing);
        configAdmin.getConfiguration(REGISTRY_PID, "?").update(properties("dat.conf", missing.toString()));
        await("the registry reports the error (source now: " + registry.configurationSource() + ")",
                () -> registry.configurationSource().startsWith("error:"));
        assertTrue(registry.configurationSource(), registry.configurationSource().contains(missing.toString()));
        assertNotRegistered("emu0");   // no fallback to the provider defaults
    }

    private RegistryEntry entry(String iaName) {
        return registry.entries().stream().filter(e -> e.iaName().equals(iaName)).findFirst()
                .orElseThrow(() -> new AssertionError("no entry " + iaName + " in " + registry.entries()));
    }

    private void assertNotRegistered(String iaName) {
        try {
            registry.open(iaName, 8).close();
            fail(iaName + " opened");
        } catch (DatException e) {
            assertEquals(iaName + ": " + e.getMessage(), DatReturnType.PROVIDER_NOT_FOUND, e.type());
            assertEquals(iaName + ": " + e.getMessage(), DatReturnSubtype.NAME_NOT_REGISTERED, e.subtype());
        }
    }

    static Dictionary<String, Object> properties(String key, Object value) {
        Dictionary<String, Object> props = new Hashtable<>();
        props.put(key, value);
        return props;
    }
}
