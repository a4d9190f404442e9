package org.jdapl.provider.ofa.rxe;

import java.util.List;
import org.jdapl.dat.DatRegistry;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.dtest.Dtest;

/**
 * jdapl's {@code dtest} in plain Java for the Soft-RoCE guest (which has no framework): the
 * registry finds this provider by ServiceLoader and offers its default IAs ({@code ofa-v2-rxe0-1}).
 * Exits with dtest's status.
 */
public final class DtestMain {
    private DtestMain() {
    }

    public static void main(String[] args) {
        int status = 0;
        try {
            new Dtest(DatRegistry.standalone(), System.out).run(List.of(args));
        } catch (ToolException e) {
            System.out.flush();
            System.err.println("dtest: " + e.getMessage());
            status = e.status();
        }
        System.out.flush();
        System.exit(status);
    }
}
