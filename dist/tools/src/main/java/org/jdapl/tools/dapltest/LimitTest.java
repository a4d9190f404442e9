package org.jdapl.tools.dapltest;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.dat.VaType;
import org.jdapl.tools.Table;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.Units;

/**
 * dapltest {@code -T L}: for each kind of object (IAs, PZs, EVDs, EPs, LMRs, RMRs, receives posted
 * on one EP) creates as many as the provider gives, up to DAT_INSUFFICIENT_RESOURCES or the
 * maximum ({@code -m}), then frees them all; every free must succeed and, at the end, the IA must
 * close gracefully (nothing left behind). {@code -w} repeats the whole run, which shows that what
 * was freed can be had again.
 */
final class LimitTest {
    private static final long LMR_BYTES = 4096;

    private final DatRegistry registry;
    private final DapltestOptions options;
    private final PrintStream out;

    LimitTest(DatRegistry registry, DapltestOptions options, PrintStream out) {
        this.registry = registry;
        this.options = options;
        this.out = out;
    }

    /** What one kind reached. */
    private record Reached(String kind, int created, String stoppedBy, long nanos, String note) {
        Reached(String kind, int created, String stoppedBy, long nanos) {
            this(kind, created, stoppedBy, nanos, null);
        }
    }

    void run() {
        InterfaceAdapter ia = Dapltest.open(registry, options.iaName());
        try {
            IaAttributes a = ia.query().attributes();
            var p = ia.query().provider();
            out.printf("dapltest -T L: IA %s (provider %s %d.%d), maximum %d per kind, %d run(s)%n", options.iaName(),
                    p.providerName(), p.providerVersionMajor(), p.providerVersionMinor(), options.maximum(),
                    options.width());
            out.printf("dapltest -T L: the IA says: max_pzs %d, max_evds %d, max_eps %d, max_lmrs %d, max_rmrs %d,"
                    + " max_dto_per_ep %d%n", a.maxPzs(), a.maxEvds(), a.maxEps(), a.maxLmrs(), a.maxRmrs(), a.maxDtoPerEp());
            out.flush();
            for (int round = 1; round <= options.width(); round++) {
                List<Reached> rows = new ArrayList<>();
                rows.add(limit("IA", () -> registry.open(options.iaName(), 16), x -> x.close(CloseFlag.GRACEFUL)));
                rows.add(limit("PZ", ia::createPz, ProtectionZone::free));
                rows.add(limit("EVD", () -> ia.createEvd(16, null, EnumSet.of(EvdFlag.DTO)), EventDispatcher::free));
                rows.add(endpoints(ia));
                rows.add(lmrs(ia));
                rows.add(rmrs(ia));
                rows.add(receives(ia, a));
                Table table = new Table().column("object").numeric("created").column("stopped by")
                        .numeric("create + free");
                for (Reached r : rows) {
                    table.row(r.kind(), r.created(), r.stoppedBy(), r.note() == null ? Units.duration(r.nanos()) : null);
                }
                out.println();
                if (options.width() > 1) {
                    out.println("run " + round + ":");
                }
                table.print(out, "");
                rows.stream().filter(r -> r.note() != null).forEach(r -> out.println(r.kind() + ": " + r.note()));
                out.flush();
            }
            ia.close(CloseFlag.GRACEFUL);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "dapltest -T L: " + e.getMessage(), e);
        } finally {
            if (!ia.isFreed()) {
                ia.close();
            }
        }
        out.println();
        out.println("dapltest -T L: every object freed, the IA closed gracefully (nothing left behind)");
        out.println("dapltest: PASSED");
    }

    private interface Free<T> {
        void free(T object);
    }

    /** Creates up to the maximum or DAT_INSUFFICIENT_RESOURCES, then frees in reverse order. */
    private <T> Reached limit(String kind, Supplier<T> create, Free<T> free) {
        List<T> objects = new ArrayList<>();
        String stoppedBy = "maximum " + options.maximum();
        long start = System.nanoTime();
        try {
            while (objects.size() < options.maximum()) {
                try {
                    objects.add(create.get());
                } catch (DatException e) {
                    if (e.type() != DatReturnType.INSUFFICIENT_RESOURCES) {
                        throw new ToolException(ToolException.FAILURE, "dapltest -T L: creating " + kind + " "
                                + (objects.size() + 1) + ": " + e.getMessage() + " (expected DAT_SUCCESS or"
                                + " DAT_INSUFFICIENT_RESOURCES)", e);
                    }
                    stoppedBy = e.type().datName() + (e.subtype() == null ? "" : " " + e.subtype());
                    break;
                }
            }
        } finally {
            for (int i = objects.size() - 1; i >= 0; i--) {
                try {
                    free.free(objects.get(i));
                } catch (DatException e) {
                    throw new ToolException(ToolException.FAILURE, "dapltest -T L: freeing " + kind + " " + (i + 1)
                            + ": " + e.getMessage(), e);
                }
            }
        }
        if (objects.isEmpty()) {
            throw ToolException.failure("dapltest -T L: not even one " + kind + " could be created (" + stoppedBy + ")");
        }
        return new Reached(kind, objects.size(), stoppedBy, System.nanoTime() - start);
    }

    private Reached endpoints(InterfaceAdapter ia) {
        ProtectionZone pz = ia.createPz();
        EventDispatcher evd = ia.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
        Reached r = limit("EP", () -> ia.createEp(pz, evd, evd, null, EpAttributes.defaults().withQueueDepths(1, 1)),
                Endpoint::free);
        evd.free();
        pz.free();
        return r;
    }

    private Reached lmrs(InterfaceAdapter ia) {
        ProtectionZone pz = ia.createPz();
        try (Arena arena = Arena.ofShared()) {
            Reached r = limit("LMR (" + LMR_BYTES + " B)",
                    () -> ia.createLmr(pz, arena.allocate(LMR_BYTES, 4096), Dat.MEM_PRIV_ALL, VaType.VA),
                    LocalMemoryRegion::free);
            pz.free();
            return r;
        }
    }

    private Reached rmrs(InterfaceAdapter ia) {
        ProtectionZone pz = ia.createPz();
        try {
            pz.createRmr().free();
        } catch (DatException e) {
            if (e.type() != DatReturnType.MODEL_NOT_SUPPORTED && e.type() != DatReturnType.NOT_IMPLEMENTED) {
                throw e;
            }
            pz.free();
            // The manual pages let a provider offer no RMRs; there is no limit to reach then.
            return new Reached("RMR", 0, "does not apply", 0, "the provider offers none: " + e.getMessage());
        }
        Reached r = limit("RMR", pz::createRmr, x -> x.free());
        pz.free();
        return r;
    }

    /** Receives posted on one EP whose receive queue is as deep as the maximum (or the IA's limit). */
    private Reached receives(InterfaceAdapter ia, IaAttributes a) {
        ProtectionZone pz = ia.createPz();
        int depth = Math.max(1, Math.min(options.maximum(), a.maxDtoPerEp()));
        EventDispatcher evd = ia.createEvd(Math.min(a.maxEvdQlen(), depth + 16), null, EnumSet.of(EvdFlag.DTO));
        Endpoint ep = ia.createEp(pz, evd, evd, null, new EpAttributes(64, 64, Qos.BEST_EFFORT, Set.of(), Set.of(),
                depth, 1, 1, 1, 0, 0, Dat.WATERMARK_INFINITE));
        Reached r;
        try (Arena arena = Arena.ofShared()) {
            LocalMemoryRegion lmr = ia.createLmr(pz, arena.allocate(64, 64), Dat.MEM_PRIV_ALL, VaType.VA);
            long[] cookie = {0};
            List<LmrTriplet> iov = List.of(new LmrTriplet(lmr, 0, 64));
            r = limit("posted receives (queue " + depth + ")", () -> {
                ep.postRecv(iov, cookie[0], Dat.COMPLETION_DEFAULT);
                return cookie[0]++;
            }, x -> { });
            ep.free();
            lmr.free();
        }
        evd.free();
        pz.free();
        return r;
    }
}
