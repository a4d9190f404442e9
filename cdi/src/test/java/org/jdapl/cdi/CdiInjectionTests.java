package org.jdapl.cdi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.se.SeContainer;
import jakarta.enterprise.inject.se.SeContainerInitializer;
import jakarta.enterprise.inject.spi.DeploymentException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import org.jdapl.cdi.internal.DatExtension;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProviderInfo;
import org.jdapl.dat.RegistryEvent;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.provider.emu.EmuProvider;
import org.jdapl.registry.ProviderRegistry;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

/**
 * The extension in a CDI SE container, with the standalone registry and the emulated provider found
 * on the class path; run in each CDI implementation by a subclass naming its {@link SeContainerInitializer}.
 */
abstract class CdiInjectionTests {
    /** A new initializer of the implementation under test. */
    protected abstract SeContainerInitializer initializer();

    /**
     * A container of the given beans and the extension. With bean discovery on, the extension comes
     * from its META-INF/services entry; a synthetic archive (discovery off) names it.
     */
    private SeContainer container(Class<?>... beans) {
        return initializer().disableDiscovery().addExtensions(DatExtension.class)
                .addBeanClasses(beans).initialize();
    }

    private static ProviderRegistry registryOf(SeContainer container) {
        return (ProviderRegistry) container.select(DatExtension.class).get().registry();
    }

    @Test
    void theRegistryAndTheEmu0IaAreInjected() {
        try (SeContainer container = container(Echo.class)) {
            Echo echo = container.select(Echo.class).get();
            assertTrue(echo.registry.listProviders().contains(new ProviderInfo("emu0", 2, 0, true)),
                    echo.registry.listProviders().toString());
            assertEquals("emu0", echo.server.name());
            assertEquals("emu0", echo.client.name());
            assertTrue(echo.server.query().attributes().address() != null);
            assertNotSame(echo.server.query().attributes().address(), echo.client.query().attributes().address());
        }
    }

    @Test
    void sendAndReceiveOverTwoInjectedIas() {
        try (SeContainer container = container(Echo.class)) {
            Echo echo = container.select(Echo.class).get();
            assertEquals("hello over two injected IAs", echo.roundTrip("hello over two injected IAs"));
            assertEquals("again", echo.roundTrip("again"));
        }
    }

    @Test
    void disposersCloseTheIasAndTheProviderCountsReturnToTheBaseline() {
        ProviderRegistry registry;
        try (SeContainer container = container(Echo.class)) {
            registry = registryOf(container);
            int baseline = registry.openCount("emu");
            Instance<Echo> echoes = container.select(Echo.class);
            Echo echo = echoes.get();
            assertEquals("x", echo.roundTrip("x"));
            assertEquals(baseline + 2, registry.openCount("emu"), "the application and the dependent IA are open");
            echoes.destroy(echo);
            assertEquals(baseline + 1, registry.openCount("emu"), "Echo destroyed, its dependent IA closed");
        }
        assertEquals(0, registry.openCount("emu"), "the disposers closed both IAs");
    }

    @Test
    void aRequestScopedIaIsOpenedInARequestAndClosedWhenItEnds() {
        SeContainer container = container(RequestIa.class);
        try {
            ProviderRegistry registry = registryOf(container);
            RequestIa consumer = container.select(RequestIa.class).get();
            for (int request = 0; request < 2; request++) {
                // OpenWebBeans SE keeps a request context active from the start: activate() then
                // says so, and the IA lives until the container stops.
                boolean started = consumer.request.activate();
                try {
                    assertEquals("emu0", consumer.ia.name());
                    assertEquals(1, registry.openCount("emu"), "one IA for the request");
                } finally {
                    consumer.request.deactivate();
                }
                if (started) {
                    assertEquals(0, registry.openCount("emu"), "the request's end closed its IA");
                }
            }
            container.close();
            assertEquals(0, registry.openCount("emu"), "the container's end closed the request's IA");
        } finally {
            if (container.isRunning()) {
                container.close();
            }
        }
    }

    @Test
    void anUnknownIaFailsDeploymentValidationWithTheRegistrysMessage() {
        List<String> logged = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getThrown() != null) {
                    logged.add(String.valueOf(record.getThrown().getMessage()));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
        root.addHandler(handler);
        RuntimeException failure;
        try {
            failure = assertThrows(RuntimeException.class, () -> container(UnknownIa.class).close());
        } finally {
            root.removeHandler(handler);
            afterFailedStart();
        }
        cause(failure, DeploymentException.class);
        String expected = "@Ia(\"no-such-ia\") InterfaceAdapter cannot be opened: "
                + "[DAT_PROVIDER_NOT_FOUND:DAT_NAME_NOT_REGISTERED] (0x800a0063): no entry names IA 'no-such-ia' (";
        // The registry's message reaches the user: in the exception chain (Weld), or in the error the
        // container logs for each deployment problem before it throws (OpenWebBeans).
        List<String> reported = new ArrayList<>(logged);
        for (Throwable t = failure; t != null; t = t.getCause()) {
            reported.add(String.valueOf(t.getMessage()));
        }
        assertTrue(reported.stream().anyMatch(m -> m.contains(expected)), reported.toString());
    }

    /** Called after a container failed to start; an implementation that keeps state then clears it. */
    protected void afterFailedStart() {
    }

    @Test
    void REG_06_providerEventsReachObserversAndAnApplicationIaReopensAfterItsProviderCameBack() {
        SeContainer container = container(OptionalIa.class, RegistryEvents.class);
        try {
            OptionalIa consumer = container.select(OptionalIa.class).get();
            RegistryEvents events = container.select(RegistryEvents.class).get();
            // Absent at start: an Instance lookup tolerates it (the registry's error, no deployment failure).
            DatException absent = assertThrows(DatException.class, () -> consumer.ia.get().query());
            assertEquals(DatReturnType.PROVIDER_NOT_FOUND, absent.type());

            DatProvider provider = new RenamedProvider(new EmuProvider(), "emu-test");
            consumer.registry.addProvider(provider);
            InterfaceAdapter ia = consumer.ia.get();
            assertEquals("emu-test0", ia.name());
            assertEquals(1, provider.openObjects().get(HandleType.IA));

            consumer.registry.removeProvider(provider);
            List<RegistryEvent> heard = events.heard();
            assertEquals(3, heard.size(), heard.toString());
            assertEquals("emu-test", assertInstanceOf(RegistryEvent.ProviderAdded.class, heard.get(0)).provider());
            RegistryEvent.IaBroken broken = assertInstanceOf(RegistryEvent.IaBroken.class, heard.get(1));
            assertEquals("emu-test0", broken.iaName());
            assertEquals(List.of("emu-test0"),
                    assertInstanceOf(RegistryEvent.ProviderRemoved.class, heard.get(2)).brokenIas());
            assertEquals(0, provider.openObjects().get(HandleType.IA), "the broken IA freed its objects");

            DatProvider back = new RenamedProvider(new EmuProvider(), "emu-test");
            consumer.registry.addProvider(back);
            assertTrue(ia.query().attributes().address() != null, "the same proxy opens the IA again");
            assertEquals(1, back.openObjects().get(HandleType.IA));
            container.close();
            assertEquals(0, back.openObjects().get(HandleType.IA), "the disposer closed the reopened IA");
        } finally {
            if (container.isRunning()) {
                container.close();
            }
        }
    }

    @Test
    void iaDeclarationsAreReadThroughMicroProfileConfig() {
        // emu-test0 is declared in META-INF/microprofile-config.properties, which only MicroProfile Config reads.
        try (SeContainer container = container(OptionalIa.class)) {
            ProviderRegistry registry = registryOf(container);
            assertTrue(registry.entries().stream().anyMatch(e -> e.iaName().equals("emu-test0")
                    && e.source().contains("ia.emu-test0") && e.libPath().equals("emu-test")),
                    registry.entries().toString());
        }
    }

    @Test
    @ResourceLock(Resources.SYSTEM_PROPERTIES)
    void jdaplDatConfNamesTheDatConfTheRegistryReads(@TempDir Path dir) throws IOException {
        Path datConf = Files.writeString(dir.resolve("dat.conf"),
                "emu-file u2.0 threadsafe default emu emu.1.0 \"loopback\" \"\"\n");
        System.setProperty("jdapl.dat.conf", datConf.toString());
        // The application's Config is built once and kept: built again, it sees the new property.
        ConfigProviderResolver.instance().releaseConfig(ConfigProvider.getConfig());
        try (SeContainer container = container(FileIa.class)) {
            assertTrue(registryOf(container).configurationSource().contains(datConf.toString()),
                    registryOf(container).configurationSource());
            FileIa consumer = container.select(FileIa.class).get();
            assertEquals("emu-file", consumer.ia.name());
        } finally {
            System.clearProperty("jdapl.dat.conf");
            ConfigProviderResolver.instance().releaseConfig(ConfigProvider.getConfig());
        }
    }

    @Test
    void theReadmeShowsTheExampleTheseTestsCompile() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        String example = Files.readString(Path.of("src/test/java/org/jdapl/cdi/Echo.java"));
        String body = example.substring(example.indexOf("@Dependent"));
        assertTrue(readme.contains(body), "README.md's CDI section shows Echo.java from @Dependent on");
    }

    private static <T extends Throwable> T cause(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        throw new AssertionError("no " + type.getSimpleName() + " in " + t, t);
    }
}
