package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

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
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole conformance kit (CONN, DISC, FREE, LMR, OBJ, SRQ, EP) inside the container, against the
 * emulated provider reached through the registry service, with the report in
 * {@code itest/target/conformance/emu-osgi.txt}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ConformanceIT extends JdaplContainerTest {
    private static final Logger LOG = LoggerFactory.getLogger(ConformanceIT.class);

    @Test
    public void conformanceKitPassesAgainstTheEmulatedProviderThroughTheRegistry() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        DatProvider emu = awaitService(DatProvider.class, "(dat.provider=emu)");
        Path report = targetDirectory("conformance").resolve("emu-osgi.txt");
        List<CaseResult> results;
        try (OsgiEmuFixture fixture = new OsgiEmuFixture(registry, emu, "emu0")) {
            results = ConformanceKit.run(fixture, report);
        }
        LOG.info("conformance emu-osgi: {}", ConformanceKit.summary(results));

        assertEquals("one result per case", ConformanceKit.cases().size(), results.size());
        assertEquals("one report line per case", results.size(), Files.readAllLines(report).size());
        String failed = results.stream().filter(r -> r.outcome() == Outcome.FAIL).map(CaseResult::reportLine)
                .collect(Collectors.joining("\n"));
        assertTrue(ConformanceKit.summary(results) + "\n" + failed, failed.isEmpty());
        ContainerIT.assertAllZero(emu.openObjects());
    }
}
