package org.jdapl.provider.ofi;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.HandleType;

/**
 * What every DAT object of the provider has: its IA, its handle type, the consumer's context and
 * whether it is freed. Each subclass creates and closes its own libfabric objects.
 */
abstract class OfiObject implements DatHandle {
    final OfiIa ia;
    private final HandleType type;
    private volatile Object consumerContext;
    volatile boolean freed;

    OfiObject(OfiIa ia, HandleType type) {
        this.ia = ia;
        this.type = type;
    }

    @Override
    public final HandleType handleType() {
        live();
        return type;
    }

    @Override
    public final void setConsumerContext(Object context) {
        live();
        consumerContext = context;
    }

    @Override
    public final Object consumerContext() {
        live();
        return consumerContext;
    }

    /** The handle type, without the liveness check of {@link #handleType}. */
    final HandleType kind() {
        return type;
    }

    @Override
    public final boolean isFreed() {
        return freed;
    }

    /** Throws INVALID_HANDLE of this object's kind if it (or its IA) is freed. */
    final void live() {
        if (freed || (ia != null && ia.closed)) {
            throw DatException.invalidHandle(subtype(type), type + " handle is freed");
        }
    }

    static DatReturnSubtype subtype(HandleType t) {
        return switch (t) {
            case IA -> DatReturnSubtype.INVALID_HANDLE_IA;
            case EP -> DatReturnSubtype.INVALID_HANDLE_EP;
            case LMR -> DatReturnSubtype.INVALID_HANDLE_LMR;
            case RMR -> DatReturnSubtype.INVALID_HANDLE_RMR;
            case PZ -> DatReturnSubtype.INVALID_HANDLE_PZ;
            case PSP -> DatReturnSubtype.INVALID_HANDLE_PSP;
            case RSP -> DatReturnSubtype.INVALID_HANDLE_RSP;
            case CR -> DatReturnSubtype.INVALID_HANDLE_CR;
            case CNO -> DatReturnSubtype.INVALID_HANDLE_CNO;
            case SRQ -> DatReturnSubtype.INVALID_HANDLE_SRQ;
            case CSP -> DatReturnSubtype.INVALID_HANDLE_CSP;
            default -> DatReturnSubtype.NO_SUBTYPE;
        };
    }

    /** Frees the object and its native resources as part of an abrupt IA close (no checks). */
    abstract void destroy();
}
