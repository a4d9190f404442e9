package org.jdapl.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.apache.felix.hc.api.Result;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.management.IaCountersMXBean;
import org.jdapl.dat.spi.DatProvider;
import org.junit.jupiter.api.Test;

/** The emulated provider's health: OK, with the IAs it has open counted. */
class ProviderHealthCheckTest {

    @Test
    void okWithTheOpenIasOfTheProvider() {
        DatProvider emu = ServiceLoader.load(DatProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals("emu")).findFirst().orElseThrow();
        ProviderHealthCheck check = new ProviderHealthCheck(emu);
        assertEquals(Result.Status.OK, check.execute().getStatus());
        try (InterfaceAdapter ia = emu.open(emu.defaultIas().getFirst(), 8)) {
            Result result = check.execute();
            assertEquals(Result.Status.OK, result.getStatus());
            assertTrue(result.toString().contains("1 IA open"), result.toString());
            assertTrue(result.toString().contains("IA=1"), result.toString());
        }
        assertTrue(check.execute().toString().contains("0 IAs open"));
    }

    @Test
    void theDetailsNameTheNonZeroCountersOfTheProvidersOpenIas() {
        DatProvider emu = ServiceLoader.load(DatProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals("emu")).findFirst().orElseThrow();
        try (InterfaceAdapter ia = emu.open(emu.defaultIas().getFirst(), 8)) {
            ia.createPz();
            IaCountersMXBean bean = new IaCountersMXBean() {
                @Override
                public String getIaName() {
                    return ia.name();
                }

                @Override
                public String getProvider() {
                    return "emu";
                }

                @Override
                public boolean isOpen() {
                    return !ia.isFreed();
                }

                @Override
                public boolean isCounting() {
                    return true;
                }

                @Override
                public Map<String, Long> getCounters() {
                    return ia.queryCounters(false).byName();
                }

                @Override
                public void reset() {
                    ia.queryCounters(true);
                }
            };
            Result result = new ProviderHealthCheck(emu, () -> List.of(bean)).execute();
            assertEquals(Result.Status.OK, result.getStatus());
            assertTrue(result.toString().contains("counters of IA " + ia.name() + ": DCNT_IA_PZ_CREATE=1"),
                    result.toString());
        }
    }
}
