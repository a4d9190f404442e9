package org.jdapl.dat;

/** DAT_EP_STATE: the states of an {@link Endpoint}, with the INVALID_STATE subtype that names each. */
public enum EpState {
    /** DAT_EP_STATE_UNCONNECTED: quiescent, ready to connect. */
    UNCONNECTED(DatReturnSubtype.INVALID_STATE_EP_UNCONNECTED),
    /** DAT_EP_STATE_UNCONFIGURED_UNCONNECTED. */
    UNCONFIGURED_UNCONNECTED(DatReturnSubtype.INVALID_STATE_EP_UNCONFIGURED),
    /** DAT_EP_STATE_RESERVED: held by a reserved service point. */
    RESERVED(DatReturnSubtype.INVALID_STATE_EP_RESERVED),
    /** DAT_EP_STATE_UNCONFIGURED_RESERVED. */
    UNCONFIGURED_RESERVED(DatReturnSubtype.INVALID_STATE_EP_UNCONFRESERVED),
    /** DAT_EP_STATE_PASSIVE_CONNECTION_PENDING: a connection request waits for the consumer's answer. */
    PASSIVE_CONNECTION_PENDING(DatReturnSubtype.INVALID_STATE_EP_PASSCONNPENDING),
    /** DAT_EP_STATE_UNCONFIGURED_PASSIVE. */
    UNCONFIGURED_PASSIVE(DatReturnSubtype.INVALID_STATE_EP_UNCONFPASSIVE),
    /** DAT_EP_STATE_ACTIVE_CONNECTION_PENDING: a connect was requested and is not answered yet. */
    ACTIVE_CONNECTION_PENDING(DatReturnSubtype.INVALID_STATE_EP_ACTCONNPENDING),
    /** DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING: a provider-created EP waits for accept or reject. */
    TENTATIVE_CONNECTION_PENDING(DatReturnSubtype.INVALID_STATE_EP_TENTCONNPENDING),
    /** DAT_EP_STATE_UNCONFIGURED_TENTATIVE. */
    UNCONFIGURED_TENTATIVE(DatReturnSubtype.INVALID_STATE_EP_UNCONFTENTATIVE),
    /** DAT_EP_STATE_CONNECTED: data can move. */
    CONNECTED(DatReturnSubtype.INVALID_STATE_EP_CONNECTED),
    /** DAT_EP_STATE_DISCONNECT_PENDING: a graceful disconnect waits for outstanding request DTOs. */
    DISCONNECT_PENDING(DatReturnSubtype.INVALID_STATE_EP_DISCPENDING),
    /** DAT_EP_STATE_DISCONNECTED: the connection is gone; reset or free the EP. */
    DISCONNECTED(DatReturnSubtype.INVALID_STATE_EP_DISCONNECTED),
    /** DAT_EP_STATE_COMPLETION_PENDING: the passive side accepted and waits for the transport. */
    COMPLETION_PENDING(DatReturnSubtype.INVALID_STATE_EP_COMPLPENDING),
    /** DAT_EP_STATE_CONNECTED_SINGLE_PATH. */
    CONNECTED_SINGLE_PATH(DatReturnSubtype.INVALID_STATE_EP_CONNECTED),
    /** DAT_EP_STATE_CONNECTED_MULTI_PATH. */
    CONNECTED_MULTI_PATH(DatReturnSubtype.INVALID_STATE_EP_CONNECTED);

    private final DatReturnSubtype invalidStateSubtype;

    EpState(DatReturnSubtype invalidStateSubtype) {
        this.invalidStateSubtype = invalidStateSubtype;
    }

    /** The INVALID_STATE subtype that names this state, e.g. INVALID_STATE_EP_CONNECTED. */
    public DatReturnSubtype invalidStateSubtype() {
        return invalidStateSubtype;
    }

    /** The DAT_EP_STATE value (the position in {@code dat.h}). */
    public int value() {
        return ordinal();
    }

    /** The INVALID_STATE exception a call raises when it finds the EP in this state. */
    public DatException invalid(String operation) {
        return DatException.invalidState(invalidStateSubtype, operation + " is not allowed in EP state " + this);
    }
}
