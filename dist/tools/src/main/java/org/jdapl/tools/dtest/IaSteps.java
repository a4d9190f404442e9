package org.jdapl.tools.dtest;

import java.util.Set;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.tools.Timings;
import org.jdapl.tools.ToolException;

/** The steps both of dtest's wires (jdapl's and OFED's) take the same way, each timed. */
final class IaSteps {
    private IaSteps() {
    }

    /**
     * {@code dat_ia_open} of the IA named by -P.
     *
     * @throws ToolException FAILURE if the registry cannot open it (unknown name, provider absent)
     */
    static InterfaceAdapter open(DatRegistry registry, DtestOptions options, Timings timings) {
        long start = System.nanoTime();
        InterfaceAdapter ia;
        try {
            ia = registry.open(options.iaName(), 16);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "cannot open IA '" + options.iaName() + "': "
                    + e.getMessage(), e);
        }
        timings.add("IA open", 1, System.nanoTime() - start);
        return ia;
    }

    /** An EVD of {@code qlen} events, within the IA's maximum. */
    static EventDispatcher evd(InterfaceAdapter ia, int maxQlen, Timings timings, Set<EvdFlag> flags, int qlen) {
        int len = Math.max(1, Math.min(qlen, maxQlen));
        return timings.time("EVD create", () -> ia.createEvd(len, null, flags));
    }

    /**
     * The server's PSP on -q.
     *
     * @throws ToolException FAILURE if the qualifier cannot be listened on
     */
    static PublicServicePoint listen(InterfaceAdapter ia, DtestOptions options, EventDispatcher crEvd, Timings timings) {
        return timings.time("PSP create", () -> {
            try {
                return ia.createPsp(options.connQual(), crEvd, PspFlag.CONSUMER);
            } catch (DatException e) {
                throw new ToolException(ToolException.FAILURE, "server: cannot listen on conn_qual "
                        + options.connQual() + ": " + e.getMessage(), e);
            }
        });
    }
}
