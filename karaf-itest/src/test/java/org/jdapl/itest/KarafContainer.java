package org.jdapl.itest;

import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.maven;
import static org.ops4j.pax.exam.CoreOptions.options;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.configureConsole;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.features;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.karafDistributionConfiguration;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.logLevel;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.replaceConfigurationFile;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.karaf.options.LogLevelOption.LogLevel;
import org.ops4j.pax.exam.options.MavenArtifactUrlReference;

/**
 * The one place that says what the Karaf container is: Apache Karaf's own distribution
 * ({@code org.apache.karaf:apache-karaf} tar.gz from Maven Central), unpacked and started by Pax
 * Exam's Karaf container with {@code java} directly (not {@code bin/karaf}), over the jars and the
 * feature repository this reactor built (laid out as a Maven repository in
 * {@code karaf-itest/target/jdapl-repository}, which Karaf's Pax URL reads before any other).
 *
 * <p>What Karaf 4.4.10 needs to run on Java 25, each a change to the stock distribution (the
 * README's Karaf section names the upstream issue of each):
 * <ul>
 * <li>no {@code -Djava.security.manager=allow} (only {@code bin/inc} adds it, and Pax Exam does not
 *     run {@code bin/karaf}): Java 24+ refuses to start with it (apache/karaf#2128, #2208);</li>
 * <li>{@code eecap-25} in {@code etc/config.properties}: Karaf defines the {@code osgi.ee}
 *     capabilities up to {@code eecap-21}, so on Java 22+ the system bundle offers none and no bundle
 *     that requires an execution environment resolves (the same lines
 *     {@code features/src/main/karaf/config-java25.properties} gives {@code karaf:verify});</li>
 * <li>{@code jdapl-karaf-jdk25} in {@code etc/startup.properties} at start level 1 (its jar in
 *     {@code system/}): Karaf's Event Admin, shell, SSH and command ACLs reach the caller's
 *     {@code Subject} with {@code Subject.getSubject}, which throws on Java 24+ (JEP 486), so every
 *     event and every shell session fails; the bundle's weaving hook rewrites those calls to
 *     {@code Subject.current()} and Karaf's {@code JaasHelper.doAs} to {@code Subject.doAs};</li>
 * <li>no command ACLs ({@code etc/org.apache.karaf.command.acl.*.cfg} emptied): the shell runs a
 *     command line's pipes in a thread pool and checks their ACL there, where on Java 24+ no
 *     subject is bound (a subject no longer travels with an {@code AccessControlContext}), so every
 *     command an ACL names (feature:install, bundle:restart, config:edit, ...) would be refused as
 *     "Command not found".</li>
 * </ul>
 */
final class KarafContainer {
    /** The command ACL configurations of Karaf 4.4.10's {@code etc/}, emptied (see the class comment). */
    static final List<String> COMMAND_ACLS = List.of("bundle", "config", "feature", "jaas", "kar", "scope_bundle",
            "shell", "system");

    private KarafContainer() {
    }

    /** The version of jdapl this build made. */
    static String jdaplVersion() {
        return JdaplContainerTest.requiredProperty("jdapl.version");
    }

    /** The feature repository's URL, as a Karaf user adds it. */
    static String featureRepository() {
        return "mvn:org.jdapl/jdapl-features/" + jdaplVersion() + "/xml/features";
    }

    /**
     * The container for one test class, with {@code bootFeatures} of the jdapl repository installed
     * when it starts (none: a Karaf that does not know jdapl yet).
     */
    static Option[] configuration(Class<?> testClass, String... bootFeatures) {
        return configuration(testClass, false, bootFeatures);
    }

    /** The container, with Karaf's SSH console started if {@code sshConsole}. */
    static Option[] configuration(Class<?> testClass, boolean sshConsole, String... bootFeatures) {
        String karafVersion = JdaplContainerTest.requiredProperty("karaf.version");
        String target = JdaplContainerTest.requiredProperty("jdapl.itest.target");
        MavenArtifactUrlReference distribution = maven().groupId("org.apache.karaf").artifactId("apache-karaf")
                .type("tar.gz").version(karafVersion);
        List<Option> options = new ArrayList<>(List.of(
                karafDistributionConfiguration().frameworkUrl(distribution).karafVersion(karafVersion)
                        .name("Apache Karaf").unpackDirectory(new File(target, "karaf/" + testClass.getSimpleName()))
                        .useDeployFolder(false),
                sshConsole ? configureConsole().ignoreLocalConsole().startRemoteShell()
                        : configureConsole().ignoreLocalConsole().ignoreRemoteShell(),
                logLevel(LogLevel.INFO),
                java25(),
                repositories(),
                jvm(karafVersion),
                systemProperty("jdapl.itest.target").value(target),
                systemProperty("jdapl.version").value(jdaplVersion()),
                systemProperty("karaf.version").value(karafVersion)));
        // The registry in Karaf reads the tests' empty dat.conf (jdapl.test.datConf), not the machine's.
        options.add(systemProperty("dat.conf").value(JdaplContainerTest.requiredProperty("dat.conf")));
        if (bootFeatures.length > 0) {
            options.add(features(maven().groupId("org.jdapl").artifactId("jdapl-features").version(jdaplVersion())
                    .classifier("features").type("xml"), bootFeatures));
        }
        return options(options.toArray(Option[]::new));
    }

    /** The conformance kit's bundle (a test tool, in no feature), from this build. */
    static Option conformanceBundle() {
        return bundle(repositoryFile("jdapl-conformance", "jar").toUri().toString());
    }

    /**
     * The emulated provider's test-only fault hooks ({@code org.jdapl.provider.emu.faults}), a
     * fragment of the provider bundle built from its test sources: installed with the boot features,
     * so that it attaches when the provider resolves. No feature names it; it ships nowhere.
     */
    static Option emuFaultsFragment() {
        File jar = new File(JdaplContainerTest.requiredProperty("jdapl.fragment.provider.emu.faults"));
        if (!jar.isFile()) {
            throw new IllegalStateException(jar + " is not there (build the reactor: ./mvnw -B verify)");
        }
        return bundle(jar.toURI().toString()).noStart();
    }

    /** This build's artifact in target/jdapl-repository. */
    static Path repositoryFile(String artifactId, String suffix) {
        Path file = Path.of(JdaplContainerTest.requiredProperty("jdapl.karaf.repository"), "org", "jdapl", artifactId,
                jdaplVersion(), artifactId + "-" + jdaplVersion() + "." + suffix);
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException(file + " is not there (build the reactor: ./mvnw -B verify)");
        }
        return file;
    }

    /** The changes Karaf 4.4.10 needs on Java 25 (see the class comment). */
    private static Option java25() {
        String version = jdaplVersion();
        String artifact = "jdapl-karaf-jdk25";
        List<Option> options = new ArrayList<>(List.of(
                editConfigurationFilePut("etc/config.properties", "eecap-25", eecap25()),
                replaceConfigurationFile("system/org/jdapl/" + artifact + "/" + version + "/" + artifact + "-" + version
                        + ".jar", repositoryFile(artifact, "jar").toFile()),
                editConfigurationFilePut("etc/startup.properties", "mvn:org.jdapl/" + artifact + "/" + version, "1")));
        File noAcl = noCommandAcl();
        for (String acl : COMMAND_ACLS) {
            options.add(replaceConfigurationFile("etc/org.apache.karaf.command.acl." + acl + ".cfg", noAcl));
        }
        return composite(options.toArray(Option[]::new));
    }

    private static File noCommandAcl() {
        try {
            Path file = Path.of(JdaplContainerTest.requiredProperty("jdapl.itest.target"), "no-command-acl.cfg");
            Files.writeString(file, "# No command ACL: on Java 24+ the shell's pipe threads carry no subject to check.\n");
            return file.toFile();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The eecap-25 of features/src/main/karaf/config-java25.properties. */
    static String eecap25() {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(JdaplContainerTest.requiredProperty("jdapl.karaf.java25")))) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String value = p.getProperty("eecap-25");
        if (value == null) {
            throw new IllegalStateException("no eecap-25 in " + System.getProperty("jdapl.karaf.java25"));
        }
        return value;
    }

    /**
     * Pax URL inside Karaf: this build's repository first, then Karaf's system folder, then the
     * local repository Maven filled, then Maven Central.
     */
    private static Option repositories() {
        String cfg = "etc/org.ops4j.pax.url.mvn.cfg";
        String build = Path.of(JdaplContainerTest.requiredProperty("jdapl.karaf.repository")).toUri()
                + "@id=jdapl.build@snapshots";
        return composite(
                editConfigurationFilePut(cfg, "org.ops4j.pax.url.mvn.defaultRepositories",
                        build + ",${karaf.home.uri}system@id=system.repository@snapshots"),
                editConfigurationFilePut(cfg, "org.ops4j.pax.url.mvn.localRepository",
                        JdaplContainerTest.requiredProperty("jdapl.karaf.localRepository")),
                editConfigurationFilePut(cfg, "org.ops4j.pax.url.mvn.repositories",
                        "https://repo1.maven.org/maven2@id=central"));
    }

    /**
     * The JVM options {@code bin/karaf} gives Java 9+ (the module patches and opens of Karaf's
     * boot), less the Security Manager, plus jdapl's: bundles may make foreign calls (the OFA
     * provider), a bounded heap.
     */
    private static Option jvm(String karafVersion) {
        List<String> args = new ArrayList<>(List.of(
                "--add-reads=java.xml=java.logging",
                "--add-exports=java.base/org.apache.karaf.specs.locator=java.xml,ALL-UNNAMED",
                "--patch-module", "java.base=lib/endorsed/org.apache.karaf.specs.locator-" + karafVersion + ".jar",
                "--patch-module", "java.xml=lib/endorsed/org.apache.karaf.specs.java.xml-" + karafVersion + ".jar",
                "--add-opens", "java.base/java.security=ALL-UNNAMED",
                "--add-opens", "java.base/java.net=ALL-UNNAMED",
                "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                "--add-opens", "java.base/java.util=ALL-UNNAMED",
                "--add-opens", "java.naming/javax.naming.spi=ALL-UNNAMED",
                "--add-opens", "java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED",
                "--add-exports=java.base/sun.net.www.protocol.file=ALL-UNNAMED",
                "--add-exports=java.base/sun.net.www.protocol.jar=ALL-UNNAMED",
                "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx768m"));
        return composite(args.stream().map(org.ops4j.pax.exam.options.extra.VMOption::new).toArray(Option[]::new));
    }
}
