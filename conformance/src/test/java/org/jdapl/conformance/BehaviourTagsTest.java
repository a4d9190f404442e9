package org.jdapl.conformance;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every conformance ID a provider claims has an implementing site in the provider's {@code src/main}:
 * a Javadoc line {@code Behaviours: OBJ_07, LMR_04.} naming it (the one form of behaviour tag; a tag
 * that runs on ends its line with a comma and goes on in the next).
 *
 * <p>Per provider (emulated, OFA, libfabric) it prints every ID of {@code conformance/CONFORMANCE.md}
 * with no tag. A provider claims the IDs its conformance kit run must pass: every ID the kit has a
 * case for ({@link ConformanceKit#cases()}; the REG_* IDs are the registry's, not a provider's), less
 * the IDs its kit run lists as open (for the libfabric provider the keys of {@code OPEN} in
 * {@code OfiTcpConformanceTest}; the emulated provider's kit tests and the OFA provider's Soft-RoCE
 * run, {@code OfaRxeKit}, fail on any FAIL and list none). The test fails if a claimed ID has no tag.
 *
 * <p>The EXT_* IDs are OFED's optional extensions: a provider claims those of the extensions it
 * offers ({@link Provider#extensions}), and none claims EXT_04 (what is not offered fails
 * MODEL_NOT_SUPPORTED), which the API's default methods implement for every provider.
 */
class BehaviourTagsTest {
    private static final Pattern ID = Pattern.compile("\\b(?:CONN|DISC|FREE|LMR|OBJ|SRQ|EP|REG|EXT)_\\d\\d\\b");
    private static final Pattern TAG = Pattern.compile("^\\s*(?:/\\*\\*|\\*).*?Behaviours:(.*)$");
    private static final Pattern OPEN_ENTRY = Pattern.compile("Map\\.entry\\(\"([A-Z]+_\\d\\d)\"");

    /** The repository's root: the conformance module's parent. */
    private static Path root() {
        Path here = Path.of("").toAbsolutePath();
        return Files.exists(here.resolve("CONFORMANCE.md")) ? here.getParent() : here;
    }

    /** The IDs CONFORMANCE.md defines, in its order. */
    static Set<String> conformanceIds(Path conformanceMd) throws IOException {
        Set<String> ids = new LinkedHashSet<>();
        Pattern defined = Pattern.compile("^- \\*\\*((?:[A-Z]+)_\\d\\d)\\*\\*");
        for (String line : Files.readAllLines(conformanceMd)) {
            Matcher m = defined.matcher(line);
            if (m.find()) {
                ids.add(m.group(1));
            }
        }
        return ids;
    }

    /** The IDs named by the behaviour tags of the Java sources under {@code dir}, each with its first site. */
    static Map<String, String> taggedIds(Path dir) throws IOException {
        Map<String, String> sites = new TreeMap<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                List<String> lines = Files.readAllLines(f);
                for (int i = 0; i < lines.size(); i++) {
                    Matcher tag = TAG.matcher(lines.get(i));
                    if (!tag.find()) {
                        continue;
                    }
                    String text = tag.group(1);
                    int at = i;
                    while (text.strip().endsWith(",") && at + 1 < lines.size()) {
                        text += " " + lines.get(++at).replaceFirst("^\\s*\\*", "");
                    }
                    Matcher id = ID.matcher(text);
                    while (id.find()) {
                        sites.putIfAbsent(id.group(), dir.relativize(f) + ":" + (i + 1));
                    }
                }
            }
        }
        return sites;
    }

    /** The IDs the libfabric provider's kit test lists as open (the keys of its {@code OPEN} map). */
    static Set<String> ofiOpen(Path root) throws IOException {
        Path test = root.resolve("provider-ofi-bundle/src/test/java/org/jdapl/provider/ofi/kit/OfiTcpConformanceTest.java");
        Set<String> open = new TreeSet<>();
        Matcher m = OPEN_ENTRY.matcher(Files.readString(test));
        while (m.find()) {
            open.add(m.group(1));
        }
        return open;
    }

    /**
     * A provider, its sources, its open IDs and the EXT IDs of the extensions it offers.
     */
    private record Provider(String name, Path sources, Set<String> open, Set<String> extensions) {
    }

    /** The EXT IDs of every extension (EXT_04 apart: the API's). */
    private static final Set<String> EVERY_EXTENSION = Set.of("EXT_01", "EXT_02", "EXT_03", "EXT_05", "EXT_06",
            "EXT_07", "EXT_08", "EXT_09", "EXT_10", "EXT_11", "EXT_12");

    @Test
    void everyClaimedIdHasATaggedImplementingSite() throws IOException {
        Path root = root();
        Set<String> all = conformanceIds(root.resolve("conformance/CONFORMANCE.md"));
        Set<String> kit = new LinkedHashSet<>(ConformanceKit.cases().stream().map(ConformanceCase::id).toList());
        assertTrue(all.containsAll(kit), "kit IDs missing from CONFORMANCE.md: " + kit + " vs " + all);
        List<Provider> providers = List.of(
                // The loopback fabric offers every extension (the tcp fabric all but datagram endpoints).
                new Provider("emulated", root.resolve("provider-emu-bundle/src/main/java"), Set.of(),
                        EVERY_EXTENSION),
                // Verbs atomics and RDMA Write with immediate data; no datagram endpoints, no counters.
                new Provider("OFA", root.resolve("provider-ofa-bundle/src/main/java"), Set.of(),
                        Set.of("EXT_01", "EXT_02", "EXT_03", "EXT_05", "EXT_06", "EXT_07")),
                // On tcp's MSG endpoints: RDMA Write with immediate data and counters; no atomics, no datagrams.
                new Provider("libfabric", root.resolve("provider-ofi-bundle/src/main/java"), ofiOpen(root),
                        Set.of("EXT_05", "EXT_06", "EXT_07", "EXT_09")));
        List<String> failures = new ArrayList<>();
        for (Provider p : providers) {
            Map<String, String> tagged = taggedIds(p.sources());
            List<String> untagged = all.stream().filter(id -> !tagged.containsKey(id)).toList();
            List<String> claimedUntagged = untagged.stream()
                    .filter(id -> kit.contains(id) && !p.open().contains(id))
                    .filter(id -> !id.startsWith("EXT_") || p.extensions().contains(id)).toList();
            System.out.println(p.name() + " provider: " + tagged.size() + " IDs tagged, untagged: "
                    + (untagged.isEmpty() ? "none" : String.join(", ", untagged))
                    + (p.open().isEmpty() ? "" : " (open on its kit run: " + String.join(", ", p.open()) + ")"));
            if (!claimedUntagged.isEmpty()) {
                failures.add(p.name() + " provider claims " + String.join(", ", claimedUntagged)
                        + " but no Behaviours: tag in " + root.relativize(p.sources()) + " names them");
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    @Test
    void theTagReaderFindsTagsAndTheirContinuation(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("A.java"), """
                /** Behaviours: OBJ_01: text naming CONN_02 as well. */
                class A {
                    /**
                     * Text (DISC_03) that is not a tag.
                     *
                     * <p>Behaviours: LMR_01, LMR_02,
                     * LMR_03.
                     */
                    void m() {
                        // Behaviours: FREE_01 in a line comment is no tag
                    }
                }
                """);
        Map<String, String> tagged = taggedIds(dir);
        assertTrue(tagged.keySet().equals(Set.of("OBJ_01", "CONN_02", "LMR_01", "LMR_02", "LMR_03")), tagged.toString());
        assertFalse(tagged.containsKey("DISC_03"));
    }
}
