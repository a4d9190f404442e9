package org.jdapl.dat;

import java.util.Set;

/**
 * DAT_EP_ATTR: the attributes of an endpoint ({@link InterfaceAdapter#createEp}, {@link Endpoint#modify}).
 *
 * @param maxMessageSize the largest send or receive, 1 or more
 * @param maxRdmaSize the largest RDMA Read or Write, 0 or more
 * @param qos the quality of service
 * @param recvCompletionFlags the completion flags allowed on receives
 * @param requestCompletionFlags the completion flags allowed on requests
 * @param maxRecvDtos the most outstanding receives, 1 or more (0 with an SRQ)
 * @param maxRequestDtos the most outstanding requests, 1 or more
 * @param maxRecvIov the most segments of a receive, 1 or more
 * @param maxRequestIov the most segments of a request, 1 or more
 * @param maxRdmaReadIn the most incoming RDMA Reads in flight, 0 or more
 * @param maxRdmaReadOut the most outgoing RDMA Reads in flight, 0 or more
 * @param srqSoftHighWatermark the SRQ soft high watermark ({@link Dat#WATERMARK_INFINITE})
 */
public record EpAttributes(
        long maxMessageSize,
        long maxRdmaSize,
        Qos qos,
        Set<CompletionFlag> recvCompletionFlags,
        Set<CompletionFlag> requestCompletionFlags,
        int maxRecvDtos,
        int maxRequestDtos,
        int maxRecvIov,
        int maxRequestIov,
        int maxRdmaReadIn,
        int maxRdmaReadOut,
        int srqSoftHighWatermark) {

    /**
     * Checks the values that do not depend on a provider.
     *
     * @throws DatException INVALID_PARAMETER for a null or out-of-range value
     */
    public EpAttributes {
        if (qos == null || recvCompletionFlags == null || requestCompletionFlags == null) {
            throw new DatException(DatReturnType.INVALID_PARAMETER, "EP attributes need a QoS and completion flags");
        }
        if (maxMessageSize < 1 || maxRdmaSize < 0 || maxRecvDtos < 0 || maxRequestDtos < 1
                || maxRecvIov < 1 || maxRequestIov < 1 || maxRdmaReadIn < 0 || maxRdmaReadOut < 0) {
            throw new DatException(DatReturnType.INVALID_PARAMETER, "EP attribute out of range: " + this);
        }
        recvCompletionFlags = Set.copyOf(recvCompletionFlags);
        requestCompletionFlags = Set.copyOf(requestCompletionFlags);
    }

    /** Attributes fit for most uses: 1 MiB messages, 16 MiB RDMA, 256 outstanding DTOs each way, 4 segments. */
    public static EpAttributes defaults() {
        return new EpAttributes(1 << 20, 16 << 20, Qos.BEST_EFFORT, Set.of(), Set.of(),
                256, 256, 4, 4, 4, 4, Dat.WATERMARK_INFINITE);
    }

    /** A copy with other queue depths. */
    public EpAttributes withQueueDepths(int recvDtos, int requestDtos) {
        return new EpAttributes(maxMessageSize, maxRdmaSize, qos, recvCompletionFlags, requestCompletionFlags,
                recvDtos, requestDtos, maxRecvIov, maxRequestIov, maxRdmaReadIn, maxRdmaReadOut, srqSoftHighWatermark);
    }

    /** A copy with another QoS. */
    public EpAttributes withQos(Qos newQos) {
        return new EpAttributes(maxMessageSize, maxRdmaSize, newQos, recvCompletionFlags, requestCompletionFlags,
                maxRecvDtos, maxRequestDtos, maxRecvIov, maxRequestIov, maxRdmaReadIn, maxRdmaReadOut,
                srqSoftHighWatermark);
    }
}
