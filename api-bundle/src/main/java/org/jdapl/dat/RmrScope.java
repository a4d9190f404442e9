package org.jdapl.dat;

/** DAT_RMR_SCOPE: what an RMR is bound to. */
public enum RmrScope {
    /** DAT_RMR_SCOPE_EP: bound to at most one EP at a time ({@code dat_rmr_create_for_ep}). */
    EP,
    /** DAT_RMR_SCOPE_PZ: bound to a protection zone ({@code dat_rmr_create}). */
    PZ,
    /** DAT_RMR_SCOPE_ANY: supports all scopes. */
    ANY
}
