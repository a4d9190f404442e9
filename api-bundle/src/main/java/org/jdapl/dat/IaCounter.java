package org.jdapl.dat;

/**
 * DAT_IA_COUNTERS: what an IA counts ({@link InterfaceAdapter#queryCounters}), in the order and with
 * the names of OFED's {@code dat_ib_extensions.h} ({@code DCNT_IA_PZ_CREATE} ...).
 *
 * @since 1.4
 */
public enum IaCounter {
    PZ_CREATE, PZ_FREE, LMR_CREATE, LMR_FREE, RMR_CREATE, RMR_FREE, PSP_CREATE, PSP_CREATE_ANY, PSP_FREE,
    RSP_CREATE, RSP_FREE, EVD_CREATE, EVD_FREE, EP_CREATE, EP_FREE, SRQ_CREATE, SRQ_FREE,
    /** Connection requests that arrived at the IA's service points. */
    SP_CR,
    SP_CR_ACCEPTED, SP_CR_REJECTED, MEM_ALLOC, MEM_ALLOC_DATA, MEM_FREE,
    /** Asynchronous events of the IA. */
    ASYNC_ERROR,
    ASYNC_QP_ERROR, ASYNC_CQ_ERROR;

    /** The OFED name, e.g. {@code DCNT_IA_PZ_CREATE}. */
    public String datName() {
        return "DCNT_IA_" + name();
    }
}
