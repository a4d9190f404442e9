package org.jdapl.itest;

import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.cleanCaches;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.mavenBundle;
import static org.ops4j.pax.exam.CoreOptions.options;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.CoreOptions.workingDirectory;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.inject.Inject;
import org.junit.Before;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.util.tracker.ServiceTracker;

/**
 * The one place that says what the container holds (Apache Felix SCR's integration tests keep it
 * the same way): Felix with Declarative Services, Configuration Admin, the Gogo runtime, SLF4J 2
 * with Logback found through Aries SPI Fly, and the jdapl bundles this reactor just built, passed by
 * path in system properties that the failsafe configuration of the module's pom sets.
 *
 * <p>The container is Pax Exam's native one: Felix runs inside the failsafe JVM, so the JVM options
 * (among them {@code --enable-native-access=ALL-UNNAMED}) are the failsafe {@code argLine}.
 */
public abstract class JdaplContainerTest {
    /** The system properties naming the jdapl jars, in install order. */
    static final List<String> JDAPL_BUNDLE_PROPERTIES = List.of(
            "jdapl.bundle.api",
            "jdapl.bundle.registry",
            "jdapl.bundle.provider.emu",
            "jdapl.bundle.provider.ofa",
            "jdapl.bundle.conformance");

    /**
     * The system properties naming the test-only fragments (installed, not started, before the
     * bundles): the emulated provider's fault hooks.
     */
    static final List<String> JDAPL_FRAGMENT_PROPERTIES = List.of("jdapl.fragment.provider.emu.faults");

    /** The symbolic names the container must hold ACTIVE. */
    static final List<String> JDAPL_SYMBOLIC_NAMES = List.of(
            "org.jdapl.api",
            "org.jdapl.registry",
            "org.jdapl.provider.emu",
            "org.jdapl.provider.ofa",
            "org.jdapl.conformance");

    static final String EMU_BSN = "org.jdapl.provider.emu";
    static final String OFA_BSN = "org.jdapl.provider.ofa";
    static final String REGISTRY_BSN = "org.jdapl.registry";

    /** How long a test waits for a service or an event before it fails. */
    static final long WAIT_MILLIS = 10_000;

    /** How long a test in Karaf waits for Karaf's boot features. */
    static final long BOOT_MILLIS = 120_000;

    @Inject
    protected BundleContext context;

    /**
     * The container, the same for every test class. The jdapl bundles start at level 5, Pax Exam's
     * framework start level.
     */
    @Configuration
    public Option[] configuration() {
        String target = requiredProperty("jdapl.itest.target");
        return options(
                cleanCaches(true),
                workingDirectory(target + "/paxexam/" + getClass().getSimpleName()),
                // Third-party bundles come from the local Maven repository only (they are test
                // dependencies of this module, so Maven has fetched them).
                systemProperty("org.ops4j.pax.url.mvn.localRepository")
                        .value(requiredProperty("jdapl.itest.localRepository")),
                systemProperty("org.ops4j.pax.url.mvn.offline").value("true"),
                systemProperty("org.ops4j.pax.url.mvn.repositories").value(""),
                systemProperty("org.ops4j.pax.url.mvn.useFallbackRepositories").value("false"),
                systemProperty("logback.configurationFile").value(requiredProperty("jdapl.itest.logback")),
                systemProperty("jdapl.itest.target").value(target),
                loggingBundles(),
                osgiServiceBundles(),
                junitBundles(),
                jdaplBundles());
    }

    /**
     * SLF4J 2 locates its provider with ServiceLoader; in OSGi, Aries SPI Fly mediates that (its
     * weaving hook must be in place, and Logback registered with it, before anything loads
     * LoggerFactory: Pax Exam's own bundles log from start level 2, so all of this starts at 1).
     */
    static Option loggingBundles() {
        return composite(
                mavenBundle("org.ow2.asm", "asm").versionAsInProject().startLevel(1),
                mavenBundle("org.ow2.asm", "asm-commons").versionAsInProject().startLevel(1),
                mavenBundle("org.ow2.asm", "asm-tree").versionAsInProject().startLevel(1),
                mavenBundle("org.ow2.asm", "asm-analysis").versionAsInProject().startLevel(1),
                mavenBundle("org.ow2.asm", "asm-util").versionAsInProject().startLevel(1),
                mavenBundle("org.apache.aries.spifly", "org.apache.aries.spifly.dynamic.bundle")
                        .versionAsInProject().startLevel(1),
                mavenBundle("org.slf4j", "slf4j-api").versionAsInProject().startLevel(1),
                mavenBundle("ch.qos.logback", "logback-core").versionAsInProject().startLevel(1),
                mavenBundle("ch.qos.logback", "logback-classic").versionAsInProject().startLevel(1));
    }

    /** Declarative Services, Configuration Admin and the Gogo runtime. */
    static Option osgiServiceBundles() {
        return composite(
                mavenBundle("org.osgi", "org.osgi.util.function").versionAsInProject().startLevel(3),
                mavenBundle("org.osgi", "org.osgi.util.promise").versionAsInProject().startLevel(3),
                mavenBundle("org.osgi", "org.osgi.service.component").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.felix", "org.apache.felix.configadmin").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.felix", "org.apache.felix.scr").versionAsInProject().startLevel(3),
                mavenBundle("org.apache.felix", "org.apache.felix.gogo.runtime").versionAsInProject().startLevel(3));
    }

    /** The jars this reactor built, by path; a missing jar stops the run before the container starts. */
    static Option jdaplBundles() {
        List<Option> bundles = new ArrayList<>();
        for (String property : JDAPL_FRAGMENT_PROPERTIES) {
            bundles.add(bundle(reactorJar(property).toURI().toString()).startLevel(5).noStart());
        }
        for (String property : JDAPL_BUNDLE_PROPERTIES) {
            bundles.add(bundle(reactorJar(property).toURI().toString()).startLevel(5));
        }
        return composite(bundles.toArray(Option[]::new));
    }

    private static File reactorJar(String property) {
        File jar = new File(requiredProperty(property));
        if (!jar.isFile()) {
            throw new IllegalStateException("the jar named by " + property + " is not there: " + jar
                    + " (build the reactor: ./mvnw -B verify)");
        }
        return jar;
    }

    static String requiredProperty(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("system property " + name + " is not set (run through Maven: ./mvnw -B verify)");
        }
        return value;
    }

    /**
     * In Karaf, waits until its boot features are installed (Karaf then registers the service
     * {@code org.apache.karaf.features.BootFinished}): a {@code feature:install} that runs beside the
     * boot installation can meet the features service's state half-built, and fail to resolve a
     * feature the boot installation is installing at that moment. Felix has no features service,
     * and nothing to wait for.
     */
    @Before
    public void karafBootFeaturesInstalled() throws InvalidSyntaxException, InterruptedException {
        boolean karaf = Stream.of(context.getBundles())
                .anyMatch(b -> "org.apache.karaf.features.core".equals(b.getSymbolicName()));
        if (!karaf) {
            return;
        }
        ServiceTracker<Object, Object> boot = new ServiceTracker<>(context,
                context.createFilter("(objectClass=org.apache.karaf.features.BootFinished)"), null);
        boot.open();
        try {
            if (boot.waitForService(BOOT_MILLIS) == null) {
                fail("Karaf's boot features were not installed within " + BOOT_MILLIS + " ms");
            }
        } finally {
            boot.close();
        }
    }

    // ---- helpers for the tests (run inside the container) ----

    /** The installed bundle with that symbolic name; fails the test if there is none. */
    protected Bundle installedBundle(String symbolicName) {
        for (Bundle b : context.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        fail("no bundle " + symbolicName + " in the container");
        throw new AssertionError();
    }

    /** The service of that type (and filter, if not null), waited for; fails the test on time-out. */
    protected <T> T awaitService(Class<T> type, String filter) {
        return awaitService(type, filter, WAIT_MILLIS);
    }

    protected <T> T awaitService(Class<T> type, String filter, long millis) {
        ServiceTracker<T, T> tracker = tracker(type, filter);
        try {
            if (tracker.waitForService(millis) == null) {
                fail("no " + type.getName() + (filter == null ? "" : " " + filter) + " service within "
                        + millis + " ms; services of that type: " + describeServices(type));
            }
            // Got again outside the tracker, so that the object stays valid after the tracker
            // closes (Configuration Admin, for one, is a service factory).
            T service = context.getService(tracker.getServiceReference());
            if (service == null) {
                fail(type.getName() + " " + filter + " went away while it was being got");
            }
            return service;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } finally {
            tracker.close();
        }
    }

    /** The service of that type and filter now, or null. */
    protected <T> T serviceNow(Class<T> type, String filter) {
        try {
            var refs = context.getServiceReferences(type, filter);
            if (refs.isEmpty()) {
                return null;
            }
            return context.getService(refs.iterator().next());
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException(filter, e);
        }
    }

    /** Waits until no service of that type and filter is registered; fails the test on time-out. */
    protected void awaitServiceGone(Class<?> type, String filter) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (System.nanoTime() < deadline) {
            try {
                if (context.getServiceReferences(type, filter).isEmpty()) {
                    return;
                }
                Thread.sleep(20);
            } catch (InvalidSyntaxException e) {
                throw new IllegalArgumentException(filter, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        fail(type.getName() + " " + filter + " still registered after " + WAIT_MILLIS + " ms");
    }

    private <T> ServiceTracker<T, T> tracker(Class<T> type, String filter) {
        try {
            Filter f = filter == null
                    ? FrameworkUtil.createFilter("(objectClass=" + type.getName() + ")")
                    : FrameworkUtil.createFilter("(&(objectClass=" + type.getName() + ")" + filter + ")");
            ServiceTracker<T, T> tracker = new ServiceTracker<>(context, f, null);
            tracker.open();
            return tracker;
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException(filter, e);
        }
    }

    /** Waits until {@code condition} holds; fails the test with {@code what} on time-out. */
    protected static void await(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within " + WAIT_MILLIS + " ms: " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** A directory under the module's target directory, created if needed. */
    protected static java.nio.file.Path targetDirectory(String name) throws java.io.IOException {
        return java.nio.file.Files.createDirectories(
                java.nio.file.Path.of(requiredProperty("jdapl.itest.target")).resolve(name));
    }

    /** The registered services of a type with their properties, for failure messages. */
    protected String describeServices(Class<?> type) {
        try {
            StringBuilder out = new StringBuilder("[");
            for (ServiceReference<?> ref : context.getServiceReferences(type, null)) {
                out.append(" {bundle=").append(ref.getBundle().getSymbolicName());
                for (String key : ref.getPropertyKeys()) {
                    out.append(", ").append(key).append('=').append(stringOf(ref.getProperty(key)));
                }
                out.append('}');
            }
            return out.append(" ]").toString();
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String stringOf(Object value) {
        return value instanceof Object[] array ? java.util.Arrays.toString(array) : String.valueOf(value);
    }
}
