package org.jdapl.docs;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every module whose README.md has a {@code ## Code map} section names each of its {@code src/main}
 * Java files there, in backquotes ({@code `OfaEp`}, {@code `NativeLibrary.Loader`}); package-info and
 * module-info files need no entry. The section runs from its heading to the next heading of level
 * one or two. The test runs in the first module of the build and reads the whole repository, so that
 * a module added with a code map is checked without a change here.
 */
class CodeMapsTest {
    private static final Pattern CODE_MAP = Pattern.compile("(?m)^##\\s+Code map\\b.*$");
    private static final Pattern NEXT_SECTION = Pattern.compile("(?m)^#{1,2}\\s");
    private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");

    /** The modules that must have a code map, so that renaming a heading cannot switch the check off. */
    private static final List<String> REQUIRED = List.of("provider-emu-bundle", "provider-ofa-bundle");

    @Test
    void everySrcMainClassIsNamedInItsModulesCodeMap() throws IOException {
        Path root = repositoryRoot();
        Set<String> mapped = new TreeSet<>();
        List<String> missing = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.sorted().toList()) {
                Path readme = module.resolve("README.md");
                Path sources = module.resolve("src/main/java");
                if (!Files.isRegularFile(readme) || !Files.isDirectory(sources)) {
                    continue;
                }
                String map = codeMap(Files.readString(readme));
                if (map == null) {
                    continue;
                }
                mapped.add(module.getFileName().toString());
                Set<String> named = namesIn(map);
                for (Path source : javaFiles(sources)) {
                    String name = source.getFileName().toString().replaceFirst("\\.java$", "");
                    if (!named.contains(name)) {
                        missing.add(root.relativize(readme) + " code map lacks `" + name + "` ("
                                + root.relativize(source) + ")");
                    }
                }
            }
        }
        for (String module : REQUIRED) {
            assertTrue(mapped.contains(module),
                    module + "/README.md has no '## Code map' section; modules with one: " + mapped);
        }
        if (!missing.isEmpty()) {
            fail(missing.size() + " src/main classes not named in their module README's code map"
                    + " (add a row or a name in backquotes to the '## Code map' section):\n  "
                    + String.join("\n  ", missing));
        }
    }

    /** The text of the README's code map section, or null when it has none. */
    static String codeMap(String readme) {
        Matcher heading = CODE_MAP.matcher(readme);
        if (!heading.find()) {
            return null;
        }
        String rest = readme.substring(heading.end());
        Matcher next = NEXT_SECTION.matcher(rest);
        return next.find() ? rest.substring(0, next.start()) : rest;
    }

    /** Every identifier inside a code span of the section. */
    static Set<String> namesIn(String section) {
        Set<String> names = new HashSet<>();
        Matcher span = CODE_SPAN.matcher(section);
        while (span.find()) {
            Matcher id = IDENTIFIER.matcher(span.group(1));
            while (id.find()) {
                names.add(id.group());
            }
        }
        return names;
    }

    private static List<Path> javaFiles(Path sources) {
        try (Stream<Path> files = Files.walk(sources)) {
            return files.filter(Files::isRegularFile)
                    .filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.getFileName().toString().equals("package-info.java"))
                    .filter(p -> !p.getFileName().toString().equals("module-info.java"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The directory of the parent pom: the module's basedir's parent. */
    private static Path repositoryRoot() {
        Path dir = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("pom.xml")) && Files.isDirectory(p.resolve("provider-emu-bundle"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository root above " + dir);
    }
}
