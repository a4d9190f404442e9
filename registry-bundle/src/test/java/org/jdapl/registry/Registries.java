package org.jdapl.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.registry.conf.DatConfLocator;
import org.junit.jupiter.api.function.Executable;

/** Helpers to build registries over files in a test's temporary directory. */
final class Registries {
    private Registries() {
    }

    /** A locator seeing only the given environment and system properties, with a default file in {@code dir}. */
    static DatConfLocator locator(Path dir, Map<String, String> env, Map<String, String> properties) {
        return new DatConfLocator(env::get, properties::get, dir.resolve("etc-dat.conf"));
    }

    /** A registry reading {@code text} as its dat.conf (named by the system property). */
    static ProviderRegistry withDatConf(Path dir, String text) {
        Path file = write(dir.resolve("dat.conf"), text);
        ProviderRegistry registry = new ProviderRegistry(locator(dir, Map.of(),
                Map.of(DatConfLocator.SYSTEM_PROPERTY, file.toString())));
        registry.configure(Map.of());
        return registry;
    }

    static Path write(Path file, String text) {
        try {
            return Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Asserts that the call fails PROVIDER_NOT_FOUND / NAME_NOT_REGISTERED, and returns the error. */
    static DatException assertNotRegistered(Executable call) {
        DatException e = assertThrows(DatException.class, call);
        assertEquals(DatReturnType.PROVIDER_NOT_FOUND, e.type(), e.getMessage());
        assertEquals(DatReturnSubtype.NAME_NOT_REGISTERED, e.subtype(), e.getMessage());
        return e;
    }
}
