package org.jdapl.tools.soak;

import java.util.List;
import org.jdapl.dat.DatRegistry;
import org.jdapl.tools.ToolException;

/**
 * {@code soak} in plain Java, outside a framework: the registry finds its providers by
 * {@code ServiceLoader} and reads dat.conf from {@code -Ddat.conf} or {@code DAT_OVERRIDE}. A
 * serving process of a run across processes or namespaces is started this way.
 */
public final class SoakMain {
    private SoakMain() {
    }

    /** Runs soak with {@code args}; exits with its status. */
    public static void main(String[] args) {
        int status = 0;
        try {
            new Soak(DatRegistry.standalone(), System.out, System.in).run(List.of(args));
        } catch (ToolException e) {
            System.out.flush();
            System.err.println(e.getMessage());
            status = e.status();
        }
        System.out.flush();
        System.exit(status);
    }
}
