package org.jdapl.dat;

/** DAT_SRQ_STATE: the state of a {@link SharedReceiveQueue}. */
public enum SrqState {
    /** DAT_SRQ_STATE_OPERATIONAL. */
    OPERATIONAL,
    /** DAT_SRQ_STATE_ERROR. */
    ERROR
}
