package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.ProviderStatus;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.Version;
import org.osgi.framework.namespace.ExecutionEnvironmentNamespace;
import org.osgi.framework.wiring.BundleCapability;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.framework.wiring.BundleWiring;

/**
 * The jdapl bundles in Felix: every one resolves and is ACTIVE, the registry and both providers are
 * services, the OFA bundle may make foreign calls, and SLF4J lines of the jdapl bundles reach the
 * container's Logback.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ContainerIT extends JdaplContainerTest {

    @Test
    public void everyJdaplBundleResolvesAndIsActive() {
        List<String> problems = new ArrayList<>();
        TreeSet<String> found = new TreeSet<>();
        for (Bundle b : context.getBundles()) {
            String bsn = b.getSymbolicName();
            if (bsn == null || !bsn.startsWith("org.jdapl")) {
                continue;
            }
            if (b.getHeaders().get(org.osgi.framework.Constants.FRAGMENT_HOST) != null) {
                // a test-only fragment (the emulated provider's fault hooks): attached, never started
                if (b.getState() != Bundle.RESOLVED) {
                    problems.add(bsn + " (fragment) is " + stateName(b.getState()));
                }
                continue;
            }
            found.add(bsn);
            if (b.getState() != Bundle.ACTIVE) {
                problems.add(bsn + " is " + stateName(b.getState()) + ": " + whyNotActive(b));
            }
        }
        assertEquals("jdapl bundles in the container", new TreeSet<>(JDAPL_SYMBOLIC_NAMES), found);
        assertTrue(String.join("\n", problems), problems.isEmpty());
    }

    @Test
    public void theBundlesAreTheJarsThisReactorBuilt() {
        for (int i = 0; i < JDAPL_BUNDLE_PROPERTIES.size(); i++) {
            Bundle b = installedBundle(JDAPL_SYMBOLIC_NAMES.get(i));
            File jar = new File(System.getProperty(JDAPL_BUNDLE_PROPERTIES.get(i)));
            assertTrue(jar + " is a jar of this reactor", jar.toPath().normalize().toString().contains("/target/jdapl-"));
            assertEquals(b.getSymbolicName() + " installed from", jar.toURI().toString(), b.getLocation());
        }
    }

    @Test
    public void frameworkOffersTheJavaSeOfThisJvm() {
        int feature = Runtime.version().feature();
        List<String> offered = new ArrayList<>();
        boolean found = false;
        BundleRevision system = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION).adapt(BundleRevision.class);
        for (BundleCapability cap : system.getDeclaredCapabilities(ExecutionEnvironmentNamespace.EXECUTION_ENVIRONMENT_NAMESPACE)) {
            Object name = cap.getAttributes().get(ExecutionEnvironmentNamespace.EXECUTION_ENVIRONMENT_NAMESPACE);
            Object versions = cap.getAttributes().get(ExecutionEnvironmentNamespace.CAPABILITY_VERSION_ATTRIBUTE);
            offered.add(name + " " + versions);
            if ("JavaSE".equals(name) && versions instanceof List<?> list
                    && list.contains(new Version(feature, 0, 0))) {
                found = true;
            }
        }
        assertTrue("osgi.ee JavaSE " + feature + " among " + offered, found);
    }

    @Test
    public void ofaBundleMayMakeForeignCalls() throws Exception {
        ClassLoader loader = installedBundle(OFA_BSN).adapt(BundleWiring.class).getClassLoader();
        assertNotNull("the OFA bundle has a class loader (it is resolved)", loader);
        assertTrue("native access is enabled for the OFA bundle's (unnamed) module",
                loader.getUnnamedModule().isNativeAccessEnabled());
        // java.* comes from the JVM through the framework's boot delegation, for bundles as for us.
        assertSame(java.lang.foreign.Linker.class, Class.forName("java.lang.foreign.Linker", false, loader));
    }

    @Test
    public void registryServiceIsPresent() {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        assertNotNull(registry.configurationSource());
        assertNotNull(registry.entries());
    }

    @Test
    public void emulatedProviderIsDiscoveredAsService() {
        DatProvider emu = awaitService(DatProvider.class, "(dat.provider=emu)");
        assertEquals("emu", emu.name());
        assertFalse("the emulated provider offers a default IA", emu.defaultIas().isEmpty());
        for (IaSpec ia : emu.defaultIas()) {
            assertTrue(ia + " can be served: " + emu.check(ia).reason(), emu.check(ia).canServe());
        }
        assertAllZero(emu.openObjects());
    }

    @Test
    public void ofaProviderIsDiscoveredAndReportsNoDevice() {
        assumeTrue("this machine has no RDMA device (/sys/class/infiniband)",
                !Files.isDirectory(Path.of("/sys/class/infiniband")));
        DatProvider ofa = awaitService(DatProvider.class, "(dat.provider=ofa)");
        assertEquals("ofa", ofa.name());
        assertTrue("no device, so no default IA: " + ofa.defaultIas(), ofa.defaultIas().isEmpty());
        for (IaSpec spec : List.of(
                new IaSpec("ofa-v2-ib0", "ib0 0", "", false, "itest"),
                new IaSpec("ofa-v2-mlx5_0-1", "mlx5_0 1", "", false, "itest"))) {
            ProviderStatus status = ofa.check(spec);
            assertFalse(spec + " cannot be served here", status.canServe());
            assertTrue("the OFA provider says why: '" + status.reason() + "'",
                    status.reason() != null && !status.reason().isBlank());
        }
        assertAllZero(ofa.openObjects());
        assertEquals(Bundle.ACTIVE, installedBundle(OFA_BSN).getState());
    }

    @Test
    public void logLinesOfJdaplBundlesReachTheSlf4jBackend() throws Exception {
        ContainerLog log = ContainerLog.recent();
        String line = log.firstLine("org.jdapl.", "org.jdapl.itest");
        if (line == null) {
            // Nothing logged at start-up: a provider leaving and coming back is worth a line.
            Bundle emu = installedBundle(EMU_BSN);
            emu.stop();
            emu.start();
            awaitService(DatProvider.class, "(dat.provider=emu)");
            long deadline = System.currentTimeMillis() + WAIT_MILLIS;
            while ((line = log.firstLine("org.jdapl.", "org.jdapl.itest")) == null
                    && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
        }
        assertNotNull("no log line from a jdapl bundle reached Logback", line);
    }

    static void assertAllZero(Map<HandleType, Integer> counts) {
        assertNotNull("openObjects()", counts);
        counts.forEach((type, n) -> assertEquals("open " + type, 0, n.intValue()));
    }

    /** Why a bundle is not ACTIVE: the resolver's or the activator's message. */
    private static String whyNotActive(Bundle b) {
        try {
            b.start();
            return b.getState() == Bundle.ACTIVE ? "started only when asked again" : stateName(b.getState());
        } catch (BundleException e) {
            return e.getMessage() + (e.getCause() == null ? "" : " caused by " + e.getCause());
        }
    }

    static String stateName(int state) {
        return switch (state) {
            case Bundle.UNINSTALLED -> "UNINSTALLED";
            case Bundle.INSTALLED -> "INSTALLED (not resolved)";
            case Bundle.RESOLVED -> "RESOLVED (not started)";
            case Bundle.STARTING -> "STARTING";
            case Bundle.STOPPING -> "STOPPING";
            case Bundle.ACTIVE -> "ACTIVE";
            default -> "state " + state;
        };
    }
}
