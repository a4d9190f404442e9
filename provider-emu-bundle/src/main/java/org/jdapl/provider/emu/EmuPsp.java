package org.jdapl.provider.emu;

import org.jdapl.dat.HandleType;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;

/**
 * An emulated Public Service Point: many connection requests on one qualifier, at most
 * {@link EmuLimits#PSP_BACKLOG} of them unanswered at once.
 */
final class EmuPsp extends EmuListener implements PublicServicePoint {
    private final PspFlag flag;
    private int unanswered;

    EmuPsp(EmuIa ia, long connQual, EmuEvd evd, PspFlag flag) {
        super(HandleType.PSP, ia, evd, connQual);
        this.flag = flag;
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
        return new PspParam(ia(), qual, evd(), flag);
    }

    @Override
    public void free() {
        freeWith(this::destroy);
    }
}
