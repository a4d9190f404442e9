package com.example.echo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The example runs on Weld SE as a user runs it, and the root README shows it as it is. */
class MainTest {
    @Test
    void mainSendsAMessageOverTwoInjectedIasAndPrintsWhatArrived() {
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream capture = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            Main.main(new String[0]);
        } finally {
            System.setOut(saved);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        saved.print(out);
        assertEquals(List.of("sent:     hello over emu0", "received: hello over emu0"), out.lines().toList());
    }

    /** Each file of the example appears in the root README whole, so that what it shows compiles and runs. */
    @Test
    void theReadmeShowsEveryFileOfTheExample() throws IOException {
        String readme = Files.readString(Path.of("..", "..", "..", "README.md"));
        for (String file : List.of("pom.xml", "src/main/resources/META-INF/beans.xml",
                "src/main/java/com/example/echo/Main.java", "src/main/java/com/example/echo/Echo.java")) {
            assertTrue(readme.contains(Files.readString(Path.of(file))), "README.md shows dist/examples/cdi/" + file);
        }
        assertTrue(readme.contains("sent:     hello over emu0\nreceived: hello over emu0\n"), "README.md shows what Main prints");
    }
}
