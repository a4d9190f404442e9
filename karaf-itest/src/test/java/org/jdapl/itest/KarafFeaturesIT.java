package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.karaf.features.FeaturesService;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.RegistryEntry;
import org.jdapl.dat.spi.DatProvider;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;

/**
 * A Karaf that does not know jdapl yet, and what a Karaf user types: {@code feature:repo-add} of
 * the feature repository, {@code feature:install jdapl-emu}, then {@code jdapl-ofa} and
 * {@code jdapl-tools}. Every bundle the features installed is ACTIVE, the providers are discovered
 * as services, an IA opens through the {@link DatRegistry} service, and on a host without an RDMA
 * device the OFA provider is registered and the listing says why nothing opens; {@code jdapl-ofi}
 * registers the libfabric provider, whose tcp IAs are listed where libfabric is installed.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KarafFeaturesIT extends JdaplContainerTest {

    @Override
    @Configuration
    public Option[] configuration() {
        return KarafContainer.configuration(getClass());
    }

    @Test
    public void repoAddAndInstallJdaplEmuStartEveryBundleAndOpenAnIaThroughTheRegistry() throws Exception {
        KarafShell shell = new KarafShell(awaitService(SessionFactory.class, null));
        String repository = KarafContainer.featureRepository();
        shell.run("feature:repo-add " + repository);
        String available = shell.run("feature:list --no-format");
        for (String feature : List.of("jdapl", "jdapl-emu", "jdapl-ofa", "jdapl-tools")) {
            assertTrue(feature + " is offered by " + repository + ":\n" + available,
                    available.lines().anyMatch(l -> l.split("\t")[0].strip().equals(feature)));
        }

        shell.run("feature:install jdapl-emu");
        FeaturesService features = awaitService(FeaturesService.class, null);
        assertTrue(features.isInstalled(features.getFeature("jdapl-emu")));
        assertTrue(features.isInstalled(features.getFeature("jdapl")));
        assertJdaplBundlesActive(List.of("org.jdapl.api", "org.jdapl.registry", EMU_BSN));
        assertEquals("the build's jar, from target/jdapl-repository",
                "mvn:org.jdapl/jdapl-provider-emu/" + KarafContainer.jdaplVersion(), installedBundle(EMU_BSN).getLocation());

        Installed.emu0OpensThroughTheRegistry(this, shell);
    }

    @Test
    public void installJdaplOfaOnAHostWithoutRdmaRegistersTheProviderAndTheListingSaysWhyNothingOpens()
            throws Exception {
        assumeTrue("this machine has no RDMA device (/sys/class/infiniband)", !hasRdmaDevice());
        KarafShell shell = new KarafShell(awaitService(SessionFactory.class, null));
        shell.run("feature:repo-add " + KarafContainer.featureRepository());
        shell.run("feature:install jdapl-ofa");
        assertJdaplBundlesActive(List.of("org.jdapl.api", "org.jdapl.registry", OFA_BSN));

        Installed.ofaIsRegisteredAndSaysWhyNothingOpens(this, shell);
    }

    @Test
    public void installJdaplOfiRegistersTheLibfabricProviderAndListsItsIas() throws Exception {
        KarafShell shell = new KarafShell(awaitService(SessionFactory.class, null));
        shell.run("feature:repo-add " + KarafContainer.featureRepository());
        shell.run("feature:install jdapl-ofi");
        assertJdaplBundlesActive(List.of("org.jdapl.api", "org.jdapl.registry", "org.jdapl.provider.ofi"));

        Installed.ofiIsRegisteredAndListed(this, shell);
    }

    @Test
    public void karafRunsOnThisJdkWithoutTheSubjectErrorsOfJava24() throws Exception {
        assertTrue("the container runs on Java 24+: " + Runtime.version(), Runtime.version().feature() >= 24);
        KarafShell shell = new KarafShell(awaitService(SessionFactory.class, null));
        shell.run("feature:repo-add " + KarafContainer.featureRepository());
        shell.run("feature:install jdapl-emu");   // events of every bundle, through Karaf's Event Admin
        Path log = Path.of(JdaplContainerTest.requiredProperty("karaf.log"), "karaf.log");
        List<String> lines = Files.readAllLines(log);
        assertTrue("the log is Karaf's, with the feature installation: " + log,
                lines.stream().anyMatch(l -> l.contains("org.jdapl.provider.emu")));
        List<String> failures = lines.stream()
                .filter(l -> l.contains("getSubject") || l.contains("Security Manager") || l.contains("| ERROR |"))
                .toList();
        assertTrue("Karaf's log has no errors, none of Subject.getSubject:\n" + String.join("\n", failures),
                failures.isEmpty());
    }

    @Test
    public void installJdaplToolsAddsDtestAndDapltestToKarafsShell() throws Exception {
        KarafShell shell = new KarafShell(awaitService(SessionFactory.class, null));
        shell.run("feature:repo-add " + KarafContainer.featureRepository());
        shell.run("feature:install jdapl-emu jdapl-tools");
        assertJdaplBundlesActive(List.of("org.jdapl.api", "org.jdapl.registry", EMU_BSN, "org.jdapl.tools"));
        String dtest = shell.run("dat:dtest");
        assertTrue("dat:dtest runs on emu0 in Karaf's shell:\n" + dtest, dtest.contains("dtest: PASSED"));
    }

    private void assertJdaplBundlesActive(List<String> expected) {
        for (String bsn : expected) {
            Bundle b = installedBundle(bsn);
            assertEquals(bsn + " is ACTIVE", Bundle.ACTIVE, b.getState());
        }
        String notActive = Stream.of(context.getBundles()).filter(b -> b.getState() != Bundle.ACTIVE
                        && (b.getHeaders().get("Fragment-Host") == null))
                .map(b -> b.getSymbolicName() + " " + b.getState()).collect(Collectors.joining(", "));
        assertFalse("every bundle is ACTIVE: " + notActive, !notActive.isEmpty());
    }

    /**
     * The checks that use jdapl's API, apart from the test class: the probe's dynamic imports can
     * wire org.jdapl.dat only once a feature has installed the API bundle.
     */
    static final class Installed {
        private Installed() {
        }

        static void emu0OpensThroughTheRegistry(JdaplContainerTest test, KarafShell shell) throws Exception {
            DatRegistry registry = test.awaitService(DatRegistry.class, null);
            DatProvider emu = test.awaitService(DatProvider.class, "(dat.provider=emu)");
            assertEquals("emu", emu.name());
            RegistryEntry emu0 = registry.entries().stream().filter(e -> e.iaName().equals("emu0")).findFirst()
                    .orElseThrow();
            assertTrue("emu0 is openable: " + emu0, emu0.openable());
            try (InterfaceAdapter ia = registry.open("emu0", 8)) {
                assertFalse(ia.isFreed());
                assertFalse(ia.createPz().isFreed());
                String providers = shell.run("dat:providers --no-format");
                assertTrue("dat:providers counts the open IA:\n" + providers,
                        KarafShellCommandsIT.row(providers, "emu").get(2).equals("1"));
            }
            ContainerIT.assertAllZero(emu.openObjects());
        }

        static void ofaIsRegisteredAndSaysWhyNothingOpens(JdaplContainerTest test, KarafShell shell) throws Exception {
            DatProvider ofa = test.awaitService(DatProvider.class, "(dat.provider=ofa)");
            assertTrue("no device, so no default IA: " + ofa.defaultIas(), ofa.defaultIas().isEmpty());
            String providers = shell.run("dat:providers --no-format");
            List<String> row = KarafShellCommandsIT.row(providers, "ofa");
            assertEquals("no IA open:\n" + providers, "0", row.get(2));
            assertTrue("dat:providers says why ofa opens nothing:\n" + providers,
                    row.size() > 4 && !row.get(4).isBlank());
            String listing = shell.run("dat:list --no-format");
            assertTrue("dat:list has no openable ofa IA:\n" + listing, listing.lines()
                    .noneMatch(l -> l.startsWith("ofa") && l.contains("\tOPENABLE\t")));
            ContainerIT.assertAllZero(ofa.openObjects());
        }

        /** With libfabric its tcp domains are listed (ofi-v2-tcp-lo); without it the listing says why. */
        static void ofiIsRegisteredAndListed(JdaplContainerTest test, KarafShell shell) throws Exception {
            DatProvider ofi = test.awaitService(DatProvider.class, "(dat.provider=ofi)");
            String providers = shell.run("dat:providers --no-format");
            List<String> row = KarafShellCommandsIT.row(providers, "ofi");
            assertEquals("no IA open:\n" + providers, "0", row.get(2));
            String listing = shell.run("dat:list --no-format");
            if (hasLibfabric()) {
                assertTrue("tcp on lo is offered: " + ofi.defaultIas(),
                        ofi.defaultIas().stream().anyMatch(s -> s.iaName().equals("ofi-v2-tcp-lo")));
                assertTrue("dat:list lists ofi-v2-tcp-lo:\n" + listing, listing.lines()
                        .anyMatch(l -> l.startsWith("ofi-v2-tcp-lo")));
            } else {
                assertTrue("dat:providers says why ofi opens nothing:\n" + providers,
                        row.size() > 4 && row.get(4).contains("libfabric"));
            }
            ContainerIT.assertAllZero(ofi.openObjects());
        }
    }

    static boolean hasLibfabric() {
        return Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libfabric.so.1"));
    }

    static boolean hasRdmaDevice() {
        return Files.isDirectory(Path.of("/sys/class/infiniband"));
    }
}
