package org.jdapl.dat;

import java.net.SocketAddress;

/**
 * DAT_EVENT: one event taken from an {@link EventDispatcher}. The records hold what the matching
 * member of the C union DAT_EVENT_DATA holds.
 */
public sealed interface DatEvent {
    /** The DAT_EVENT_NUMBER. */
    EventNumber number();

    /** The EVD the event was dequeued from. */
    EventDispatcher evd();

    /**
     * DAT_DTO_COMPLETION_EVENT (DAT_DTO_COMPLETION_EVENT_DATA).
     *
     * @param evd the EVD
     * @param ep the EP the DTO was posted to
     * @param cookie the DAT_DTO_COOKIE given at post
     * @param status how it completed
     * @param transferredLength the bytes moved (defined for SUCCESS only)
     * @param operation what kind of DTO it was
     * @param rmrContext the RMR invalidated by a receive with invalidate, else 0
     */
    record DtoCompletion(EventDispatcher evd, Endpoint ep, long cookie, DtoStatus status, long transferredLength,
                         DtoOperation operation, int rmrContext) implements DatEvent {
        @Override
        public EventNumber number() {
            return EventNumber.DTO_COMPLETION;
        }
    }

    /**
     * DAT_IB_DTO_EVENT: the completion of one of OFED's extended DTOs (DAT_DTO_COMPLETION_EVENT_DATA with
     * DAT_IB_EXTENSION_EVENT_DATA).
     *
     * @param evd the EVD
     * @param ep the EP the DTO was posted to (at a data sink, the EP whose receive was consumed)
     * @param cookie the DAT_DTO_COOKIE given at post (at a data sink, the consumed receive's)
     * @param status how it completed (an atomic or write refused by the remote RMR: REMOTE_ACCESS)
     * @param transferredLength the bytes moved (defined for SUCCESS only; 8 for an atomic)
     * @param type which extended operation completed
     * @param immediateData the 32-bit immediate data of {@link ExtensionType#RDMA_WRITE_IMMED_DATA} and
     *        {@link ExtensionType#RECV_IMMED_DATA}, else 0
     * @param remoteAh the sender of a {@link ExtensionType#UD_RECV}, else null
     * @since 1.4
     */
    record ExtendedDtoCompletion(EventDispatcher evd, Endpoint ep, long cookie, DtoStatus status,
                                 long transferredLength, ExtensionType type, int immediateData,
                                 AddressHandle remoteAh) implements DatEvent {
        @Override
        public EventNumber number() {
            return EventNumber.IB_DTO;
        }
    }

    /**
     * A DAT_IB_UD_CONNECTION_* event: an address handle exchange of a {@link DatagramEndpoint}.
     *
     * @param evd the EVD
     * @param number which UD connection event
     * @param ep the datagram endpoint it concerns (null for {@link EventNumber#IB_UD_CONNECTION_REQUEST})
     * @param type {@link ExtensionType#UD_CONNECT_REQUEST}, {@link ExtensionType#UD_REMOTE_AH},
     *        {@link ExtensionType#UD_PASSIVE_REMOTE_AH}, {@link ExtensionType#UD_CONNECT_REJECT} or
     *        {@link ExtensionType#UD_CONNECT_ERROR}
     * @param remoteAh the remote endpoint's address handle for ESTABLISHED, else null
     * @param request the request to accept (with a datagram endpoint) or reject, for
     *        {@link EventNumber#IB_UD_CONNECTION_REQUEST}, else null
     * @param privateData the peer's private data (empty if none)
     * @since 1.4
     */
    record UdConnection(EventDispatcher evd, EventNumber number, Endpoint ep, ExtensionType type,
                        AddressHandle remoteAh, org.jdapl.dat.ConnectionRequest request, byte[] privateData)
            implements DatEvent {
        /**
         * Checks that the number is a UD connection event.
         *
         * @throws IllegalArgumentException otherwise
         */
        public UdConnection {
            if (!number.isExtensionEvent() || number == EventNumber.IB_DTO) {
                throw new IllegalArgumentException(number + " is not a UD connection event");
            }
            privateData = privateData == null ? new byte[0] : privateData;
        }
    }

    /**
     * DAT_RMR_BIND_COMPLETION_EVENT (DAT_RMR_BIND_COMPLETION_EVENT_DATA).
     *
     * @param evd the EVD
     * @param rmr the RMR bound or unbound
     * @param cookie the DAT_RMR_COOKIE given at bind
     * @param status how the bind completed
     */
    record RmrBindCompletion(EventDispatcher evd, RemoteMemoryRegion rmr, long cookie, DtoStatus status)
            implements DatEvent {
        @Override
        public EventNumber number() {
            return EventNumber.RMR_BIND_COMPLETION;
        }
    }

    /**
     * DAT_CONNECTION_REQUEST_EVENT (DAT_CR_ARRIVAL_EVENT_DATA).
     *
     * @param evd the EVD
     * @param servicePoint the PSP or CSP the request arrived at, or null for an RSP (which is
     *        destroyed by the arrival, as in DAT)
     * @param localAddress the address of the IA the request arrived on
     * @param connQual the connection qualifier it arrived on
     * @param request the connection request to accept or reject
     * @param truncated whether the private data was truncated
     */
    record ConnectionRequest(EventDispatcher evd, ServicePoint servicePoint, SocketAddress localAddress,
                             long connQual, org.jdapl.dat.ConnectionRequest request, boolean truncated)
            implements DatEvent {
        @Override
        public EventNumber number() {
            return EventNumber.CONNECTION_REQUEST;
        }
    }

    /**
     * A DAT_CONNECTION_EVENT_* (DAT_CONNECTION_EVENT_DATA).
     *
     * @param evd the EVD
     * @param number which connection event
     * @param ep the EP it concerns
     * @param privateData the peer's accept or reject private data (empty if none)
     */
    record Connection(EventDispatcher evd, EventNumber number, Endpoint ep, byte[] privateData) implements DatEvent {
        /**
         * Checks that the number is a connection event.
         *
         * @throws IllegalArgumentException otherwise
         */
        public Connection {
            if (!number.isConnectionEvent()) {
                throw new IllegalArgumentException(number + " is not a connection event");
            }
            privateData = privateData == null ? new byte[0] : privateData;
        }
    }

    /**
     * A DAT_ASYNC_ERROR_* (DAT_ASYNCH_ERROR_EVENT_DATA).
     *
     * @param evd the EVD
     * @param number which asynchronous error
     * @param handle the IA, EP, EVD, SRQ, LMR, RMR or PZ affected
     * @param reason the object-specific reason (e.g. DAT_IA_CATASTROPHIC_ERROR = 0)
     * @param detail a text saying what happened, for logs
     */
    record AsyncError(EventDispatcher evd, EventNumber number, DatHandle handle, int reason, String detail)
            implements DatEvent {
        /**
         * Checks that the number is an asynchronous event.
         *
         * @throws IllegalArgumentException otherwise
         */
        public AsyncError {
            if (!number.isAsyncEvent()) {
                throw new IllegalArgumentException(number + " is not an asynchronous event");
            }
        }
    }

    /**
     * DAT_SOFTWARE_EVENT (DAT_SOFTWARE_EVENT_DATA).
     *
     * @param evd the EVD
     * @param pointer what the consumer posted
     */
    record Software(EventDispatcher evd, Object pointer) implements DatEvent {
        @Override
        public EventNumber number() {
            return EventNumber.SOFTWARE;
        }
    }
}
