package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.felix.hc.api.Result;
import org.apache.felix.hc.api.execution.HealthCheckExecutionResult;
import org.apache.felix.hc.api.execution.HealthCheckExecutor;
import org.apache.felix.hc.api.execution.HealthCheckSelector;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * Health the way container operators watch it: {@code feature:install jdapl-health} gives each
 * provider a Felix Health Check tagged {@code jdapl}; {@code hc:exec jdapl} in Karaf's shell runs
 * them: the emulated provider OK with the IAs it has open, the OFA provider on a host without an
 * RDMA device WARN with the reason.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KarafHealthIT extends JdaplContainerTest {

    @Override
    @Configuration
    public Option[] configuration() {
        return KarafContainer.configuration(getClass(), "jdapl-emu", "jdapl-ofa", "jdapl-health");
    }

    @Test
    public void eachProviderHasAHealthCheckTaggedJdaplOkWithItsOpenIas() throws Exception {
        HealthCheckExecutor executor = awaitService(HealthCheckExecutor.class, null);
        DatRegistry registry = awaitService(DatRegistry.class, null);
        await("a health check per provider", () -> results(executor).keySet().containsAll(
                List.of("jdapl provider emu", "jdapl provider ofa")));
        Result emu = results(executor).get("jdapl provider emu");
        assertEquals(emu.toString(), Result.Status.OK, emu.getStatus());
        try (InterfaceAdapter first = registry.open("emu0", 8); InterfaceAdapter second = registry.open("emu0", 8)) {
            Result open = results(executor).get("jdapl provider emu");
            assertEquals(open.toString(), Result.Status.OK, open.getStatus());
            assertTrue("counts the open IAs: " + open, open.toString().contains("2 IAs open")
                    && open.toString().contains("IA=2"));
        }
    }

    @Test
    public void theOfaProviderWithoutAnRdmaDeviceWarnsWithTheReason() {
        assumeTrue("this machine has no RDMA device", !KarafFeaturesIT.hasRdmaDevice());
        HealthCheckExecutor executor = awaitService(HealthCheckExecutor.class, null);
        await("the ofa check", () -> results(executor).containsKey("jdapl provider ofa"));
        Result ofa = results(executor).get("jdapl provider ofa");
        assertEquals(ofa.toString(), Result.Status.WARN, ofa.getStatus());
        assertTrue("says why: " + ofa, ofa.toString().contains("cannot open any IA: "));
    }

    @Test
    public void hcExecJdaplInKarafsShellRunsThem() throws Exception {
        String out = new KarafShell(awaitService(SessionFactory.class, null)).run("hc:exec -v jdapl");
        assertTrue("hc:exec runs both checks:\n" + out,
                out.contains("jdapl provider emu") && out.contains("jdapl provider ofa"));
        if (!KarafFeaturesIT.hasRdmaDevice()) {
            assertTrue("the ofa check's warning is shown:\n" + out, out.contains("WARN"));
        }
    }

    private static Map<String, Result> results(HealthCheckExecutor executor) {
        return executor.execute(HealthCheckSelector.tags("jdapl")).stream().collect(Collectors.toMap(
                r -> r.getHealthCheckMetadata().getName(), HealthCheckExecutionResult::getHealthCheckResult));
    }
}
