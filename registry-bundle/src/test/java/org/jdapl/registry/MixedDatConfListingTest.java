package org.jdapl.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.RegistryEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The listing of a dat.conf that mixes OFED, illumos and project lines, with an emulated provider
 * {@code emu} and an OFA provider {@code ofa} that has device mlx4_0 but no netdev ib0. Printed and
 * written to {@code target/conformance/registry-listing.txt} (see README).
 */
class MixedDatConfListingTest {
    static final String MIXED = """
            # OFED
            ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
            ofa-v2-mlx4_0-1 u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "mlx4_0 1" ""
            ofa-v2-mlx4_0-1u u2.0 nonthreadsafe default libdaploucm.so.2 dapl.2.0 "mlx4_0 1" ""
            OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
            # illumos
            ibd0 u1.2 nonthreadsafe default udapl_tavor.so.1 SUNW.1.0 "" "driver_name=tavor"
            # jdapl
            emu-tcp u2.0 threadsafe default emu emu.1.0 "tcp 127.0.0.1:0" ""
            emu-spare u2.0 threadsafe nondefault emu emu.1.0 loopback ""
            emu-kernel k2.0 threadsafe default emu emu.1.0 loopback ""
            ofa-v2-roce u2.0 threadsafe default ofa ofa.1.0 "rxe0 1" ""
            broken line with "an unterminated quote
            """;

    @TempDir
    Path dir;

    @Test
    void listingOfAMixedDatConf() throws IOException {
        ProviderRegistry registry = Registries.withDatConf(dir, MIXED);
        registry.addProvider(TestProvider.withDefault("emu", "emu0", "loopback"));
        registry.addProvider(new TestProvider("ofa", Set.of(), true, List.of(),
                spec -> spec.iaParams().startsWith("mlx4_0")));
        List<RegistryEntry> entries = registry.entries();
        String listing = "dat:source\n" + new DatCommands(registry).sourceText().replace(dir.toString(), "$DIR")
                + "\ndat:list\n" + RegistryTable.format(entries.stream().map(e -> new RegistryEntry(e.iaName(),
                        e.apiVersion(), e.threadSafe(), e.isDefault(), e.libPath(), e.providerVersion(), e.iaParams(),
                        e.platformParams(), e.provider(), e.present(), e.openable(), e.status(),
                        e.source().replace(dir.toString(), "$DIR"))).toList());
        Path out = Path.of(System.getProperty("basedir", "."), "target", "conformance", "registry-listing.txt");
        Files.createDirectories(out.getParent());
        Files.writeString(out, listing);
        System.out.println(listing);

        assertEquals(List.of("ofa-v2-ib0", "ofa-v2-mlx4_0-1", "ofa-v2-mlx4_0-1u", "OpenIB-cma", "ibd0", "emu-tcp",
                "emu-spare", "emu-kernel", "ofa-v2-roce", "emu0"), entries.stream().map(RegistryEntry::iaName).toList());
        assertEquals(List.of("ofa-v2-mlx4_0-1", "ofa-v2-mlx4_0-1u", "emu-tcp", "emu0"),
                registry.listProviders().stream().map(p -> p.iaName()).toList());
        assertTrue(listing.contains("dat.conf:13: has an unterminated quote"), listing);
        assertTrue(entries.get(4).status().contains("u1.2"));
        assertTrue(entries.get(4).status().contains("udapl_tavor.so.1 is not provided"), entries.get(4).status());
    }
}
