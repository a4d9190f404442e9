package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.composite;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.jdapl.conformance.CaseResult;
import org.jdapl.conformance.ConformanceKit;
import org.jdapl.conformance.Outcome;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.spi.DatProvider;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * The whole conformance kit (every case, no subset) inside Karaf, against the emulated provider
 * that {@code feature:install jdapl-emu} brought, IAs opened by name ({@code emu0}) through the
 * registry service; report in {@code karaf-itest/target/conformance/emu-karaf.txt}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KarafConformanceIT extends JdaplContainerTest {

    @Override
    @Configuration
    public Option[] configuration() {
        return new Option[] {composite(KarafContainer.configuration(getClass(), "jdapl-emu")),
            KarafContainer.conformanceBundle(), KarafContainer.emuFaultsFragment()};
    }

    @Test
    public void conformanceKitPassesAgainstTheEmulatedProviderThroughTheRegistryInKaraf() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        DatProvider emu = awaitService(DatProvider.class, "(dat.provider=emu)");
        Path report = targetDirectory("conformance").resolve("emu-karaf.txt");
        List<CaseResult> results;
        try (OsgiEmuFixture fixture = new OsgiEmuFixture(registry, emu, "emu0")) {
            results = ConformanceKit.run(fixture, report);
        }
        assertEquals("one result per case", ConformanceKit.cases().size(), results.size());
        assertEquals("one report line per case", results.size(), Files.readAllLines(report).size());
        String notPassed = results.stream().filter(r -> r.outcome() != Outcome.PASS).map(CaseResult::reportLine)
                .collect(Collectors.joining("\n"));
        assertTrue(ConformanceKit.summary(results) + "\n" + notPassed, notPassed.isEmpty());
        ContainerIT.assertAllZero(emu.openObjects());
    }
}
