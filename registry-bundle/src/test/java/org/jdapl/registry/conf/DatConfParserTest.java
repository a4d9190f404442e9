package org.jdapl.registry.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The dat.conf grammar on real OFED and illumos lines, and on hostile input. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DatConfParserTest {
    @TempDir
    Path dir;

    @Test
    void realOfedAndIllumosLinesReadUnchanged() {
        ParseResult r = DatConfParser.parse("""
                ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
                ofa-v2-mlx4_0-1 u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "mlx4_0 1" ""
                ofa-v2-mlx4_0-1u u2.0 nonthreadsafe default libdaploucm.so.2 dapl.2.0 "mlx4_0 1" ""
                OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
                ibd0 u1.2 nonthreadsafe default udapl_tavor.so.1 SUNW.1.0 "" "driver_name=tavor"
                """, "real");
        assertTrue(r.ok());
        assertEquals(0, r.problemCount(), r.problems().toString());
        assertEquals(5, r.entries().size());
        DatConfEntry ib0 = r.entries().get(0);
        assertEquals("ofa-v2-ib0", ib0.iaName());
        assertEquals(new ApiVersion(false, 2, 0), ib0.apiVersion());
        assertFalse(ib0.threadSafe());
        assertTrue(ib0.isDefault());
        assertEquals("libdaplofa.so.2", ib0.libPath());
        assertEquals(new ProviderVersion("dapl", 2, 0), ib0.providerVersion());
        assertEquals("ib0 0", ib0.iaParams());
        assertEquals("", ib0.platformParams());
        assertEquals("mlx4_0 1", r.entries().get(1).iaParams());
        assertEquals("libdaploucm.so.2", r.entries().get(2).libPath());
        assertEquals(new ApiVersion(false, 1, 2), r.entries().get(3).apiVersion());
        DatConfEntry illumos = r.entries().get(4);
        assertEquals("ibd0", illumos.iaName());
        assertEquals("udapl_tavor.so.1", illumos.libPath());
        assertEquals(new ProviderVersion("SUNW", 1, 0), illumos.providerVersion());
        assertEquals("", illumos.iaParams());
        assertEquals("driver_name=tavor", illumos.platformParams());
        assertEquals("ibd0 u1.2 nonthreadsafe default udapl_tavor.so.1 SUNW.1.0 \"\" driver_name=tavor",
                illumos.toLine());
    }

    @Test
    void commentsBlankLinesCrlfAndKernelEntries() {
        ParseResult r = DatConfParser.parse("#only a comment\r\n\r\n   \t\r\n"
                + "a k1.2 threadsafe nondefault lib x.1.0 p q#comment right after a field\r\n"
                + "b u2.0 threadsafe default lib x.1.0 \"#in quotes\" \"\" # comment\n", "c");
        assertEquals(0, r.problemCount(), r.problems().toString());
        assertEquals(2, r.entries().size());
        assertTrue(r.entries().get(0).apiVersion().kernel());
        assertEquals("q", r.entries().get(0).platformParams());
        assertEquals("#in quotes", r.entries().get(1).iaParams());
        assertEquals(5, r.lines());
    }

    @Test
    void malformedFieldsAreSkippedWithTheirLineNumbers() {
        ParseResult r = DatConfParser.parse("""
                good u2.0 threadsafe default emu emu.1.0 "" ""
                v u2 threadsafe default emu emu.1.0 "" ""
                t u2.0 sometimes default emu emu.1.0 "" ""
                d u2.0 threadsafe always emu emu.1.0 "" ""
                p u2.0 threadsafe default emu 1.0 "" ""
                n u2.0 threadsafe default emu emu.1.0 "" "" extra
                q u2.0 threadsafe default emu emu.1.0 "a"b ""
                e u2.0 threadsafe default "" emu.1.0 "" ""
                "" u2.0 threadsafe default emu emu.1.0 "" ""
                good2 u2.0 threadsafe default emu emu.1.0 "" ""
                """, "m");
        assertEquals(List.of("good", "good2"), r.entries().stream().map(DatConfEntry::iaName).toList());
        assertEquals(List.of(2, 3, 4, 5, 6, 7, 8, 9), r.problems().stream().map(ParseProblem::line).toList());
        assertTrue(r.problems().get(0).message().contains("API version"));
        assertTrue(r.problems().get(1).message().contains("threadsafety"));
        assertTrue(r.problems().get(2).message().contains("default"));
        assertTrue(r.problems().get(3).message().contains("provider version"));
        assertTrue(r.problems().get(4).message().contains("9 fields"));
        assertTrue(r.problems().get(5).message().contains("after the closing quote"));
        assertTrue(r.problems().get(6).message().contains("lib_path"));
        assertTrue(r.problems().get(7).message().contains("ia_name"));
    }

    @Test
    void overlongLineIsSkippedAndTheNextLineLoads() {
        String text = "x".repeat(DatConfParser.MAX_LINE_BYTES + 1000) + " u2.0 threadsafe default emu emu.1.0 \"\" \"\"\n"
                + "ok u2.0 threadsafe default emu emu.1.0 \"\" \"\"\n";
        ParseResult r = DatConfParser.parse(text, "long");
        assertEquals(List.of("ok"), r.entries().stream().map(DatConfEntry::iaName).toList());
        assertEquals(1, r.problems().getFirst().line());
        assertTrue(r.problems().getFirst().message().contains("longer than 4096 bytes"));
        assertEquals(2, r.entries().size() + r.problemCount());

        String longName = "n".repeat(300) + " u2.0 threadsafe default emu emu.1.0 \"\" \"\"\n";
        assertTrue(DatConfParser.parse(longName, "name").problems().getFirst().message().contains("longer than 256"));
    }

    @Test
    void nulBytesControlCharactersAndInvalidUtf8AreRejectedPerLine() {
        byte[] text = ("a u2.0 threadsafe default emu emu.1.0 \"\0\" \"\"\n"
                + "b u2.0 threadsafe default emu emu.1.0 \"\u0007\" \"\"\n"
                + "ok u2.0 threadsafe default emu emu.1.0 \"caf\u00e9\" \"\"\n").getBytes(StandardCharsets.UTF_8);
        byte[] bad = {'c', ' ', (byte) 0xc3, (byte) 0x28, '\n'};
        byte[] all = new byte[text.length + bad.length];
        System.arraycopy(text, 0, all, 0, text.length);
        System.arraycopy(bad, 0, all, text.length, bad.length);
        ParseResult r = parse(all);
        assertEquals(List.of("ok"), r.entries().stream().map(DatConfEntry::iaName).toList());
        assertEquals("caf\u00e9", r.entries().getFirst().iaParams());
        assertEquals(3, r.problemCount());
        assertTrue(r.problems().get(0).message().contains("NUL byte at column 40"), r.problems().get(0).message());
        assertTrue(r.problems().get(1).message().contains("control character 0x07"));
        assertTrue(r.problems().get(2).message().contains("not UTF-8"));
        assertEquals(4, r.problems().get(2).line());
    }

    @Test
    void unterminatedQuotesAreRejected() {
        ParseResult r = DatConfParser.parse("""
                a u2.0 threadsafe default emu emu.1.0 "" "ib0 0
                b u2.0 threadsafe default emu emu.1.0 "" "ends in escape\\
                ok u2.0 threadsafe default emu emu.1.0 "" ""
                """, "q");
        assertEquals(List.of("ok"), r.entries().stream().map(DatConfEntry::iaName).toList());
        assertTrue(r.problems().get(0).message().contains("unterminated quote starting at column 42"),
                r.problems().get(0).message());
        assertTrue(r.problems().get(1).message().contains("unterminated quote"));
    }

    @Test
    void binaryJunkGivesMessagesNotExceptionsAndKeepsFewProblems() {
        byte[] junk = new byte[512 * 1024];
        new Random(42).nextBytes(junk);
        ParseResult r = parse(junk);
        assertTrue(r.ok());
        assertTrue(r.entries().isEmpty());
        assertTrue(r.problemCount() > DatConfParser.MAX_PROBLEMS_KEPT, "problems: " + r.problemCount());
        assertEquals(DatConfParser.MAX_PROBLEMS_KEPT, r.problems().size());
    }

    @Test
    void endlessStreamIsCutAtTheSizeLimit() throws IOException {
        InputStream endless = new InputStream() {
            private long served;

            @Override
            public int read() {
                served++;
                return served % 80 == 0 ? '\n' : 'x';
            }

            @Override
            public int read(byte[] b, int off, int len) {
                for (int i = 0; i < len; i++) {
                    b[off + i] = (byte) read();
                }
                return len;
            }
        };
        ParseResult r = DatConfParser.parse(endless, "endless");
        assertFalse(r.ok());
        assertTrue(r.error().contains("more than 1048576 bytes"), r.error());
        assertTrue(r.entries().isEmpty());
    }

    @Test
    void hugeDirectoryAndDeviceFilesLoadNothing() throws IOException {
        Path huge = dir.resolve("huge.conf");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(DatConfParser.MAX_FILE_BYTES + 1);
        }
        assertTrue(DatConfParser.readFile(huge).error().contains("1048577 bytes"));
        assertTrue(DatConfParser.readFile(dir).error().contains("not a regular file"));
        assertTrue(DatConfParser.readFile(dir.resolve("absent")).error().contains("does not exist"));
        if (Files.exists(Path.of("/dev/zero"))) {
            assertTrue(DatConfParser.readFile(Path.of("/dev/zero")).error().contains("not a regular file"));
        }
        Path ok = Files.writeString(dir.resolve("ok.conf"), "x u2.0 threadsafe default emu emu.1.0 \"\" \"\"");
        ParseResult r = DatConfParser.readFile(ok);
        assertTrue(r.ok());
        assertEquals(ok + ":1", r.entries().getFirst().source());
    }

    @Test
    void unreadableFileLoadsNothing() throws IOException {
        Path locked = Files.writeString(dir.resolve("locked.conf"), "x u2.0 threadsafe default emu emu.1.0 \"\" \"\"\n");
        assertTrue(locked.toFile().setReadable(false, false));
        ParseResult r = DatConfParser.readFile(locked);
        if (Files.isReadable(locked)) {
            // root reads any file; the permission case cannot be shown then, but the file must load.
            assertTrue(r.ok());
        } else {
            assertTrue(r.error().contains("not readable"), r.error());
        }
    }

    @Test
    void entriesRoundTripThroughTheirLine() {
        ParseResult r = DatConfParser.parse("\"a b\" u2.0 threadsafe default \"my lib\" x.1.0 \"q\\\"\\\\\" \"\"\n", "rt");
        DatConfEntry e = r.entries().getFirst();
        ParseResult again = DatConfParser.parse(e.toLine(), "rt");
        assertEquals(e.iaParams(), again.entries().getFirst().iaParams());
        assertEquals("q\"\\", e.iaParams());
        assertEquals(e.iaName(), again.entries().getFirst().iaName());
    }

    private static ParseResult parse(byte[] bytes) {
        try {
            return DatConfParser.parse(new ByteArrayInputStream(bytes), "bytes");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
