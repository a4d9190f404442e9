package org.jdapl.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CommandArgsTest {
    private static CommandArgs parse(String... args) {
        return CommandArgs.parse(new CommandArgs.Syntax("t", List.of("t [-sV] [-b N] [-h HOST]"), List.of(
                CommandArgs.flag("s", "server", "serve"), CommandArgs.flag("V", null, "validate"),
                CommandArgs.valued("b", "buflen", "N", "buffer length"), CommandArgs.valued("h", "host", "HOST", "host")),
                List.of()), List.of(args));
    }

    @Test
    void shortLongAttachedAndGroupedOptions() {
        CommandArgs a = parse("-sV", "-b4k", "--host=node1", "rest", "--", "-x");
        assertTrue(a.has("s"));
        assertTrue(a.has("V"));
        assertEquals(4096, a.number("b", 0, 1, Long.MAX_VALUE));
        assertEquals("node1", a.value("h", null));
        assertEquals(List.of("rest", "-x"), a.operands());
        CommandArgs b = parse("--buflen", "1m", "--server");
        assertEquals(1 << 20, b.number("b", 0, 1, Long.MAX_VALUE));
        assertTrue(b.has("s"));
        assertFalse(b.has("V"));
        assertEquals(0x1000, CommandArgs.parseNumber("t", "-q", "0x1000", 0, Long.MAX_VALUE));
    }

    @Test
    void badInputIsAUsageError() {
        for (String[] args : List.of(new String[] {"-x"}, new String[] {"--nope"}, new String[] {"-b"},
                new String[] {"--server=1"}, new String[] {"--buflen"})) {
            ToolException e = assertThrows(ToolException.class, () -> parse(args));
            assertEquals(ToolException.USAGE, e.status(), e.getMessage());
        }
        ToolException range = assertThrows(ToolException.class, () -> parse("-b", "0").number("b", 1, 1, 10));
        assertEquals(ToolException.USAGE, range.status());
        ToolException text = assertThrows(ToolException.class, () -> parse("-b", "12q").number("b", 1, 1, 100));
        assertTrue(text.getMessage().contains("wants a number, not '12q'"), text.getMessage());
        ToolException overflow = assertThrows(ToolException.class,
                () -> CommandArgs.parseNumber("t", "-b", "99999999999999999g", 0, Long.MAX_VALUE));
        assertEquals(ToolException.USAGE, overflow.status());
    }
}
