package org.jdapl.provider.emu.evd;

import java.io.Serial;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;

/**
 * The error a thread waiting on an EVD or a CNO returns when its object is freed under it (the IA
 * closed, say): a {@link DatException} like any other, without a stack trace, whose message says what
 * happened. Closing an IA releases every waiter at once, and a trace of the provider's wait loop
 * would tell a consumer nothing while its filling, thousands of waiters over, delayed their release.
 *
 * <p>Behaviours: OBJ_11.
 */
public final class ReleasedWait extends DatException {
    @Serial
    private static final long serialVersionUID = 1L;

    private ReleasedWait(DatReturnType type, DatReturnSubtype subtype, String message) {
        super(type, subtype, message);
    }

    /** DAT_ABORT: the EVD a thread waited on was freed. */
    static ReleasedWait evdFreed() {
        return new ReleasedWait(DatReturnType.ABORT, DatReturnSubtype.NO_SUBTYPE,
                "the EVD was freed while waiting (IA closed)");
    }

    /** INVALID_STATE_CNO_DEAD: the CNO a thread waited on was freed. */
    public static ReleasedWait cnoFreed() {
        return new ReleasedWait(DatReturnType.INVALID_STATE, DatReturnSubtype.INVALID_STATE_CNO_DEAD,
                "the CNO was freed while waiting");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
