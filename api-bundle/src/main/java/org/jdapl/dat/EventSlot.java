package org.jdapl.dat;

/**
 * A caller-owned, reusable DAT_EVENT: what {@code dat_evd_dequeue} and {@code dat_evd_wait} fill in
 * C. The caller allocates it once and hands it to {@link EventDispatcher#dequeue(EventSlot)},
 * {@link EventDispatcher#dequeue(EventSlot[], int)} or
 * {@link EventDispatcher#waitEvent(long, int, EventSlot)} again and again; the provider overwrites it
 * with the next event. A DTO completion, the event of the data path, is held field by field, so that
 * taking one allocates nothing, and so is an extended DTO completion ({@link EventNumber#IB_DTO}, with
 * its {@link #extensionType()}, {@link #immediateData()} and {@link #remoteAh()}); any other event (connection, asynchronous, software, RMR bind) is
 * held as its {@link DatEvent} record ({@link #event()}).
 *
 * <p>A slot is not thread-safe: one thread fills and reads it at a time.
 */
public final class EventSlot {
    private EventNumber number;
    private EventDispatcher evd;
    private Endpoint ep;
    private long cookie;
    private DtoStatus status;
    private long transferredLength;
    private DtoOperation operation;
    private int rmrContext;
    private ExtensionType extensionType;
    private int immediateData;
    private AddressHandle remoteAh;
    /** The event if it is not a DTO completion, or a DTO completion given as a record; else null. */
    private DatEvent event;

    /** An empty slot ({@link #number()} null until it is filled). */
    public EventSlot() {
    }

    /**
     * Fills the slot with a DTO completion (DAT_DTO_COMPLETION_EVENT_DATA); the arguments are those of
     * {@link DatEvent.DtoCompletion}.
     */
    public void setDtoCompletion(EventDispatcher evd, Endpoint ep, long cookie, DtoStatus status,
                                 long transferredLength, DtoOperation operation, int rmrContext) {
        // A reference field is stored only when it changes: each reference store costs the collector's
        // write barrier, and a slot refilled with completions of one EVD and EP changes none of them.
        if (this.number != EventNumber.DTO_COMPLETION) {
            // The slot held another kind of event (or none): what only that kind has goes.
            this.number = EventNumber.DTO_COMPLETION;
            this.extensionType = null;
            this.immediateData = 0;
            this.remoteAh = null;
            this.event = null;
        }
        if (this.evd != evd) {
            this.evd = evd;
        }
        if (this.ep != ep) {
            this.ep = ep;
        }
        if (this.status != status) {
            this.status = status;
        }
        if (this.operation != operation) {
            this.operation = operation;
        }
        this.cookie = cookie;
        this.transferredLength = transferredLength;
        this.rmrContext = rmrContext;
    }

    /**
     * Fills the slot with an extended DTO completion (DAT_IB_DTO_EVENT); the arguments are those of
     * {@link DatEvent.ExtendedDtoCompletion}. {@link #operation()} is then null.
     *
     * @since 1.4
     */
    public void setExtendedDtoCompletion(EventDispatcher evd, Endpoint ep, long cookie, DtoStatus status,
                                         long transferredLength, ExtensionType type, int immediateData,
                                         AddressHandle remoteAh) {
        this.number = EventNumber.IB_DTO;
        this.evd = evd;
        this.ep = ep;
        this.cookie = cookie;
        this.status = status;
        this.transferredLength = transferredLength;
        this.operation = null;
        this.rmrContext = 0;
        this.extensionType = type;
        this.immediateData = immediateData;
        this.remoteAh = remoteAh;
        this.event = null;
    }

    /** Fills the slot with {@code e}, any event; a DTO completion is copied field by field. */
    public void set(DatEvent e) {
        if (e instanceof DatEvent.DtoCompletion d) {
            setDtoCompletion(d.evd(), d.ep(), d.cookie(), d.status(), d.transferredLength(), d.operation(),
                    d.rmrContext());
            return;
        }
        if (e instanceof DatEvent.ExtendedDtoCompletion x) {
            setExtendedDtoCompletion(x.evd(), x.ep(), x.cookie(), x.status(), x.transferredLength(), x.type(),
                    x.immediateData(), x.remoteAh());
            return;
        }
        this.number = e.number();
        this.evd = e.evd();
        this.ep = null;
        this.cookie = 0;
        this.status = null;
        this.transferredLength = 0;
        this.operation = null;
        this.rmrContext = 0;
        this.extensionType = null;
        this.immediateData = 0;
        this.remoteAh = null;
        this.event = e;
    }

    /** The DAT_EVENT_NUMBER, or null for a slot never filled. */
    public EventNumber number() {
        return number;
    }

    /** Whether the slot holds a DTO completion (its fields are then the getters below). */
    public boolean isDtoCompletion() {
        return number == EventNumber.DTO_COMPLETION;
    }

    /**
     * Whether the slot holds an extended DTO completion (DAT_IB_DTO_EVENT); its fields are then the
     * getters below, with {@link #extensionType()} in place of {@link #operation()}.
     *
     * @since 1.4
     */
    public boolean isExtendedDtoCompletion() {
        return number == EventNumber.IB_DTO;
    }

    /**
     * An extended DTO completion's kind, else null.
     *
     * @since 1.4
     */
    public ExtensionType extensionType() {
        return extensionType;
    }

    /**
     * An extended DTO completion's immediate data, else 0.
     *
     * @since 1.4
     */
    public int immediateData() {
        return immediateData;
    }

    /**
     * The sender of an extended {@link ExtensionType#UD_RECV} completion, else null.
     *
     * @since 1.4
     */
    public AddressHandle remoteAh() {
        return remoteAh;
    }

    /** The EVD the event was taken from. */
    public EventDispatcher evd() {
        return evd;
    }

    /** A DTO completion's (or an extended one's) EP, else null. */
    public Endpoint ep() {
        return ep;
    }

    /** A DTO completion's DAT_DTO_COOKIE, else 0. */
    public long cookie() {
        return cookie;
    }

    /** A DTO completion's status, else null. */
    public DtoStatus status() {
        return status;
    }

    /** A DTO completion's transferred length (defined for SUCCESS only), else 0. */
    public long transferredLength() {
        return transferredLength;
    }

    /** A DTO completion's operation, else null. */
    public DtoOperation operation() {
        return operation;
    }

    /** A DTO completion's invalidated RMR context, else 0. */
    public int rmrContext() {
        return rmrContext;
    }

    /**
     * The event as a {@link DatEvent}: the record the slot holds for an event other than a DTO
     * completion; for a DTO completion a new {@link DatEvent.DtoCompletion} (this allocates).
     *
     * @throws IllegalStateException for a slot never filled
     */
    public DatEvent event() {
        if (number == null) {
            throw new IllegalStateException("the slot holds no event");
        }
        if (event != null) {
            return event;
        }
        if (number == EventNumber.IB_DTO) {
            return new DatEvent.ExtendedDtoCompletion(evd, ep, cookie, status, transferredLength, extensionType,
                    immediateData, remoteAh);
        }
        return new DatEvent.DtoCompletion(evd, ep, cookie, status, transferredLength, operation, rmrContext);
    }

    @Override
    public String toString() {
        if (isExtendedDtoCompletion()) {
            return "EventSlot[IB_DTO " + extensionType + " " + status + " cookie=" + cookie + " length="
                    + transferredLength + " immediate=" + immediateData + "]";
        }
        return isDtoCompletion() ? "EventSlot[DTO_COMPLETION " + operation + " " + status + " cookie=" + cookie
                + " length=" + transferredLength + "]" : "EventSlot[" + event + "]";
    }
}
