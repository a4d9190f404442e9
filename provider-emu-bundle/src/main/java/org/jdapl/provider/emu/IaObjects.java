package org.jdapl.provider.emu;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jdapl.dat.HandleType;

/**
 * The objects an IA owns (its asynchronous EVD included), and the order they are destroyed in when
 * the IA closes: EPs first (their connections closed or broken, their DTOs flushed), then requests
 * and service points, RMRs and SRQs, LMRs and CNOs, last EVDs and PZs, so that no object is destroyed
 * while another still refers to it. Used under the IA's domain lock.
 *
 * <p>Behaviours: OBJ_01: ABRUPT close frees every object.
 */
final class IaObjects {
    private final Set<EmuObject> objects = new LinkedHashSet<>();
    private final IaCounts counts = new IaCounts();

    <T extends EmuObject> T add(T object) {
        objects.add(object);
        counts.created(object);
        return object;
    }

    void remove(EmuObject object) {
        if (objects.remove(object)) {
            counts.freed(object);
        }
    }

    /** The IA's counters (DAT_COUNTERS). */
    IaCounts counts() {
        return counts;
    }

    /** The live EVDs, in creation order (a copy). */
    List<EmuEvd> evds() {
        List<EmuEvd> evds = new ArrayList<>();
        for (EmuObject o : objects) {
            if (o instanceof EmuEvd evd && !evd.isFreed()) {
                evds.add(evd);
            }
        }
        return evds;
    }

    int size() {
        return objects.size();
    }

    /** The live EPs, in creation order (a copy: the caller may change the table meanwhile). */
    List<EmuEp> endpoints() {
        List<EmuEp> eps = new ArrayList<>();
        for (EmuObject o : objects) {
            if (o instanceof EmuEp ep && !ep.isFreed()) {
                eps.add(ep);
            }
        }
        return eps;
    }

    /** Revokes the RMRs bound through {@code ep} (the EP is freed). */
    void revokeEpScopeRmrs(EmuEp ep) {
        for (EmuObject o : objects) {
            if (o instanceof EmuRmr rmr) {
                rmr.revokeIfBoundTo(ep);
            }
        }
    }

    /** Adds one count per object kind to {@code counts}. */
    void countInto(Map<HandleType, Integer> counts) {
        for (EmuObject o : objects) {
            counts.merge(o.kind(), 1, Integer::sum);
        }
    }

    /**
     * Destroys every object in the close order; {@code catastrophic}: the peers of connected EPs see
     * BROKEN rather than DISCONNECTED. The table is empty afterwards.
     */
    void destroyAll(boolean catastrophic) {
        List<EmuObject> all = new ArrayList<>(objects);
        for (EmuObject o : all) {
            if (o instanceof EmuEp ep && !ep.isFreed()) {
                ep.teardown(catastrophic);
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuCr cr when !cr.isFreed() -> cr.destroy();
                case EmuPsp psp when !psp.isFreed() -> psp.destroy();
                case EmuRsp rsp when !rsp.isFreed() -> rsp.destroy();
                case EmuCsp csp when !csp.isFreed() -> csp.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuRmr rmr when !rmr.isFreed() -> rmr.destroy();
                case EmuSrq srq when !srq.isFreed() -> srq.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuLmr lmr when !lmr.isFreed() -> lmr.destroy();
                case EmuCno cno when !cno.isFreed() -> cno.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuEvd evd when !evd.isFreed() -> evd.destroy();
                case EmuPz pz -> pz.markFreed();
                default -> {
                }
            }
        }
        objects.clear();
    }
}
