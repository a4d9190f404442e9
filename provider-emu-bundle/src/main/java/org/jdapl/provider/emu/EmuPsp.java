package org.jdapl.provider.emu;

import org.jdapl.dat.HandleType;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;

/**
 * An emulated Public Service Point: many connection requests on one qualifier, at most
 * {@link EmuLimits#PSP_BACKLOG} of them unanswered at once.
 */
final class EmuPsp extends EmuObject implements PublicServicePoint {
    private final EmuIa ia;
    private final long connQual;
    private final EmuEvd evd;
    private final PspFlag flag;
    private int unanswered;

    EmuPsp(EmuIa ia, long connQual, EmuEvd evd, PspFlag flag) {
        super(HandleType.PSP);
        this.ia = ia;
        this.connQual = connQual;
        this.evd = evd;
        this.flag = flag;
        evd.use();
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    EmuEvd evd() {
        return evd;
    }

    PspFlag flag() {
        return flag;
    }

    boolean backlogFull() {
        return unanswered >= EmuLimits.PSP_BACKLOG;
    }

    void requestArrived() {
        unanswered++;
    }

    void requestAnswered() {
        unanswered--;
    }

    @Override
    public PspParam query() {
        checkLive();
        return new PspParam(ia, connQual, evd, flag);
    }

    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            destroy();
            ia.forget(this);
        });
    }

    void destroy() {
        markFreed();
        ia.listeners().stop(connQual, this);
        evd.unuse();
    }
}
