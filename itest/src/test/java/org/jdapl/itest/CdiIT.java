package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.mavenBundle;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.spi.DatProvider;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.OptionUtils;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cdi.runtime.CDIComponentRuntime;
import org.osgi.service.cdi.runtime.dto.ComponentDTO;
import org.osgi.service.cdi.runtime.dto.ComponentInstanceDTO;
import org.osgi.service.cdi.runtime.dto.ContainerDTO;
import org.osgi.service.log.LogEntry;
import org.osgi.service.log.LogReaderService;

/**
 * jdapl in a CDI bundle under the OSGi CDI Integration (Apache Aries CDI 1.1 with Weld 3.1): the
 * container of {@link JdaplContainerTest} plus Aries CDI and jdapl's extension bundle
 * ({@code cdi-osgi}), and a CDI bundle built here from {@code org.jdapl.itest.cdi} whose bean
 * {@code CdiIaUser} gets {@code @Ia("emu0")} IAs injected through the {@code DatRegistry} service.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class CdiIT extends JdaplContainerTest {
    static final String CDI_BUNDLE = "org.jdapl.itest.cdi";
    private static final String CDI_PACKAGE = "org/jdapl/itest/cdi";
    static final String DS_BUNDLE = "org.jdapl.itest.ds";
    private static final String DS_PACKAGE = "org/jdapl/itest/ds";

    @Override
    @Configuration
    public Option[] configuration() {
        return OptionUtils.combine(super.configuration(), cdiIntegrationBundles(), jdaplCdiBundles());
    }

    /** Aries CDI, Weld and the javax specifications they need; Felix Log for Aries CDI's logging. */
    static Option cdiIntegrationBundles() {
        return composite(
                mavenBundle("org.apache.felix", "org.apache.felix.log").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.felix", "org.apache.felix.converter").versionAsInProject().startLevel(3),
                mavenBundle("org.osgi", "org.osgi.service.cdi").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.geronimo.specs", "geronimo-annotation_1.3_spec").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.geronimo.specs", "geronimo-atinject_1.0_spec").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.geronimo.specs", "geronimo-interceptor_1.2_spec").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.geronimo.specs", "geronimo-el_2.2_spec").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.geronimo.specs", "geronimo-jcdi_2.0_spec").versionAsInProject().startLevel(3),
                mavenBundle("org.jboss.logging", "jboss-logging").versionAsInProject().startLevel(4),
                mavenBundle("org.jboss.classfilewriter", "jboss-classfilewriter").versionAsInProject().startLevel(4),
                mavenBundle("org.jboss.weld", "weld-osgi-bundle").versionAsInProject().startLevel(4),
                mavenBundle("org.apache.aries.cdi", "org.apache.aries.cdi.spi").versionAsInProject().startLevel(4),
                mavenBundle("org.apache.aries.cdi", "org.apache.aries.cdi.extension.spi").versionAsInProject().startLevel(4),
                mavenBundle("org.apache.aries.cdi", "org.apache.aries.cdi.extender").versionAsInProject().startLevel(4),
                mavenBundle("org.apache.aries.cdi", "org.apache.aries.cdi.weld").versionAsInProject().startLevel(4));
    }

    /**
     * jdapl's extension bundle (built by this reactor), and the CDI bundle and the DS bundle built
     * from this module's classes.
     */
    static Option jdaplCdiBundles() {
        File extension = new File(requiredProperty("jdapl.bundle.cdi.osgi"));
        if (!extension.isFile()) {
            throw new IllegalStateException("the jar named by jdapl.bundle.cdi.osgi is not there: " + extension);
        }
        try {
            return composite(bundle(extension.toURI().toString()).startLevel(5),
                    bundle(cdiBundle().toUri().toString()).startLevel(5),
                    bundle(dsBundle().toUri().toString()).startLevel(5));
        } catch (IOException e) {
            throw new IllegalStateException("the CDI bundle could not be written", e);
        }
    }

    /**
     * The CDI bundle: the classes of {@code org.jdapl.itest.cdi}, requiring the CDI extender (with
     * its bean) and jdapl's extension, as bnd's {@code -cdiannotations} would write it.
     */
    static Path cdiBundle() throws IOException {
        return testBundle(CDI_BUNDLE, CDI_PACKAGE, Map.of(
                "Import-Package", String.join(",",
                        "javax.enterprise.context;version=\"[2.0,3)\"", "javax.enterprise.event;version=\"[2.0,3)\"",
                        "javax.enterprise.inject;version=\"[2.0,3)\"", "javax.inject", "org.jdapl.cdi;version=\"[1.0,2)\"",
                        "org.jdapl.conformance", "org.jdapl.dat;version=\"[1.1,2)\"",
                        "org.osgi.service.cdi.annotations;version=\"[1.0,2)\""),
                "Require-Capability", String.join(",",
                        "osgi.extender;filter:=\"(&(osgi.extender=osgi.cdi)(version>=1.0.0)(!(version>=2.0.0)))\";"
                                + "beans:List<String>=\"org.jdapl.itest.cdi.CdiIaUser\"",
                        "osgi.cdi.extension;filter:=\"(osgi.cdi.extension=org.jdapl.cdi)\"",
                        "osgi.ee;filter:=\"(&(osgi.ee=JavaSE)(version=25))\"")), Map.of());
    }

    /** The DS bundle: {@code org.jdapl.itest.ds} and its component description. */
    static Path dsBundle() throws IOException {
        Path description = Path.of(requiredProperty("jdapl.itest.target"), "test-classes", DS_PACKAGE, "component.xml");
        return testBundle(DS_BUNDLE, DS_PACKAGE, Map.of(
                "Import-Package", "org.jdapl.dat;version=\"[1.1,2)\"",
                "Service-Component", "OSGI-INF/org.jdapl.itest.ds.xml",
                "Require-Capability", "osgi.extender;filter:=\"(&(osgi.extender=osgi.component)(version>=1.3.0)"
                        + "(!(version>=2.0.0)))\""), Map.of("OSGI-INF/org.jdapl.itest.ds.xml", description));
    }

    /** A bundle of the class files of one package of this module's tests, with those headers and extra entries. */
    private static Path testBundle(String symbolicName, String packagePath, Map<String, String> headers,
                                   Map<String, Path> entries) throws IOException {
        Path target = Path.of(requiredProperty("jdapl.itest.target"));
        Path classes = target.resolve("test-classes").resolve(packagePath);
        Path jar = Files.createDirectories(target.resolve("test-bundles")).resolve(symbolicName + ".jar");
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue("Bundle-ManifestVersion", "2");
        main.putValue("Bundle-SymbolicName", symbolicName);
        main.putValue("Bundle-Version", "1.0.0");
        headers.forEach(main::putValue);
        Map<String, Path> content = new TreeMap<>(entries);
        try (Stream<Path> files = Files.list(classes)) {
            files.filter(f -> f.toString().endsWith(".class"))
                    .forEach(f -> content.put(packagePath + "/" + f.getFileName(), f));
        }
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream jarOut = new JarOutputStream(out, manifest)) {
            for (Map.Entry<String, Path> entry : content.entrySet()) {
                jarOut.putNextEntry(new JarEntry(entry.getKey()));
                jarOut.write(Files.readAllBytes(entry.getValue()));
                jarOut.closeEntry();
            }
        }
        return jar;
    }

    /**
     * The CDI bean's {@code @Ia("emu0")} opens through the emulated provider service, the one a DS
     * component's {@code emu0} uses too; dependent {@code @Ia("emu0")} IAs pass six cases of the kit
     * (CONN_01 to CONN_04, DISC_01, OBJ_01); when the provider bundle stops, the bean hears
     * {@code IaBroken} and {@code ProviderRemoved} (REG_06), and when it is back, {@code ProviderAdded},
     * and the same injected proxy opens {@code emu0} again.
     */
    @Test
    public void REG_06_aCdiBundleGetsEmu0InjectedRunsConformanceCasesThroughItAndSurvivesTheProviderRestart()
            throws Exception {
        DatProvider emu = awaitService(DatProvider.class, "(dat.provider=emu)");
        Function<String, String> user = cdiUser();
        dsUser();
        int baseline = openIas(emu); // the DS component's emu0 among them

        String ia = user.apply("ia");
        assertTrue(ia, ia.startsWith("emu0 "));
        assertEquals("the CDI bundle's IA is open through the emulated provider service", baseline + 1, openIas(emu));
        Supplier<String> ds = dsUser();
        String dsIa = ds.get();
        assertTrue(dsIa, dsIa.startsWith("emu0 "));
        assertFalse("two IAs: " + ia + " and " + dsIa, dsIa.equals(ia));
        Bundle dsBundle = installedBundle(DS_BUNDLE);
        dsBundle.stop();
        assertEquals("the DS bundle's emu0 was one of the emulated provider's IAs too", baseline, openIas(emu));
        dsBundle.start();
        assertTrue(dsUser().get().startsWith("emu0 "));
        assertEquals("the DS and the CDI bundle's emu0 share the provider", baseline + 1, openIas(emu));

        String kit = user.apply("kit");
        List<String> lines = kit.lines().toList();
        assertEquals(kit, 6, lines.size());
        assertTrue(kit, lines.stream().noneMatch(l -> l.contains(" FAIL")));
        for (String id : List.of("CONN_02", "CONN_03", "CONN_04")) {
            assertTrue(kit, lines.stream().anyMatch(l -> l.startsWith(id + " PASS")));
        }
        assertEquals("the kit's IAs are closed; the application IA stays", baseline + 1, openIas(emu));

        Bundle emuBundle = installedBundle(EMU_BSN);
        emuBundle.stop();
        await("the CDI bean hears its IA broken and the provider gone: " + user.apply("events"),
                () -> user.apply("events").contains("IaBroken emu emu0")
                        && user.apply("events").contains("ProviderRemoved emu"));
        emuBundle.start();
        await("the CDI bean hears the provider back: " + user.apply("events"),
                () -> user.apply("events").endsWith("ProviderAdded emu"));
        DatProvider emuAgain = awaitService(DatProvider.class, "(dat.provider=emu)");
        String reopened = user.apply("ia");
        assertTrue(reopened, reopened.startsWith("emu0 "));
        assertEquals("the same injected proxy opened emu0 again", 1, openIas(emuAgain));
        assertFalse("the restarted provider is a new service object", emuAgain == emu);
    }

    /** The DS component's Supplier service. */
    @SuppressWarnings("unchecked")
    private Supplier<String> dsUser() {
        return awaitService(Supplier.class, "(component.name=org.jdapl.itest.ds)");
    }

    private static int openIas(DatProvider provider) {
        return provider.openObjects().getOrDefault(HandleType.IA, 0);
    }

    /** The CDI bean's Function service, waited for; fails with the bundles' states when it does not come. */
    @SuppressWarnings("unchecked")
    private Function<String, String> cdiUser() throws InvalidSyntaxException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            for (ServiceReference<Function> ref : context.getServiceReferences(Function.class, null)) {
                if (CDI_BUNDLE.equals(ref.getBundle().getSymbolicName())) {
                    return context.getService(ref);
                }
            }
            Thread.sleep(50);
        }
        fail("no Function service of " + CDI_BUNDLE + " within 60 s; bundles: " + Stream.of(context.getBundles())
                .filter(b -> b.getState() != Bundle.ACTIVE)
                .map(b -> b.getSymbolicName() + "=" + b.getState()).collect(Collectors.joining(", "))
                + "; CDI containers: " + cdiContainers() + "; log: " + logEntries());
        throw new AssertionError();
    }

    /** What the CDI Component Runtime says of the CDI bundle's container (its errors), for failure messages. */
    private String cdiContainers() {
        CDIComponentRuntime runtime = serviceNow(CDIComponentRuntime.class, null);
        if (runtime == null) {
            return "no CDIComponentRuntime service";
        }
        StringBuilder out = new StringBuilder();
        for (ContainerDTO container : runtime.getContainerDTOs()) {
            out.append(container.bundle.symbolicName).append(" errors=").append(container.errors)
                    .append(" changeCount=").append(container.changeCount);
            for (ComponentDTO component : container.components) {
                for (ComponentInstanceDTO instance : component.instances) {
                    out.append(" component ").append(component.template.name).append(" active=")
                            .append(instance.activations.size());
                }
            }
        }
        return out.toString();
    }

    /** The OSGi log (where Aries CDI logs), for failure messages. */
    private String logEntries() {
        LogReaderService reader = serviceNow(LogReaderService.class, null);
        if (reader == null) {
            return "no LogReaderService";
        }
        StringBuilder out = new StringBuilder();
        var entries = reader.getLog();
        int n = 0;
        while (entries.hasMoreElements() && n++ < 40) {
            LogEntry e = (LogEntry) entries.nextElement();
            if (e.getLogLevel().ordinal() <= org.osgi.service.log.LogLevel.WARN.ordinal()) {
                out.append("\n  ").append(e.getLogLevel()).append(' ').append(e.getBundle().getSymbolicName())
                        .append(": ").append(e.getMessage()).append(e.getException() == null ? "" : " " + e.getException());
            }
        }
        return out.toString();
    }
}
