package org.jdapl.provider.ofi.tools;

import java.util.Arrays;
import java.util.List;
import org.jdapl.dat.DatRegistry;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.dapltest.Dapltest;
import org.jdapl.tools.dtest.Dtest;
import org.jdapl.tools.soak.Soak;

/**
 * jdapl's {@code dtest}, {@code dapltest} or {@code soak} in plain Java, as a process of
 * {@link OfiShmToolsTest}: {@code ToolMain <tool> <arguments>}. The registry finds this provider by
 * ServiceLoader and reads dat.conf from {@code -Ddat.conf}. Exits with the tool's status.
 */
public final class ToolMain {
    private ToolMain() {
    }

    public static void main(String[] args) {
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        DatRegistry registry = DatRegistry.standalone();
        int status = 0;
        try {
            switch (args[0]) {
                case "dtest" -> new Dtest(registry, System.out).run(rest);
                case "dapltest" -> new Dapltest(registry, System.out).run(rest);
                case "soak" -> new Soak(registry, System.out, System.in).run(rest);
                default -> throw new IllegalArgumentException("no tool " + args[0]);
            }
        } catch (ToolException e) {
            System.out.flush();
            System.err.println(args[0] + ": " + e.getMessage());
            status = e.status();
        }
        System.out.flush();
        System.exit(status);
    }
}
