package org.jdapl.dat;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/** DAT_SRQ_HANDLE: a Shared Receive Queue whose receives serve several endpoints. */
@ProviderType
public interface SharedReceiveQueue extends DatHandle {
    /**
     * {@code dat_srq_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_SRQ)
     */
    SrqParam query();

    /**
     * {@code dat_srq_free}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE (INVALID_STATE_SRQ_IN_USE) while an EP uses it
     */
    void free();

    /**
     * {@code dat_srq_post_recv}: a receive any EP of the SRQ may consume; it completes on that EP's
     * receive EVD.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER; PROTECTION_VIOLATION;
     *         INSUFFICIENT_RESOURCES when the SRQ is full
     */
    void postRecv(List<LmrTriplet> iov, long cookie);

    /**
     * {@code dat_srq_resize}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER if smaller than the receives it holds
     */
    void resize(int maxRecvDtos);

    /**
     * {@code dat_srq_set_lw}: sets the low watermark and arms it. The first time fewer receives than
     * {@code lowWatermark} remain on the SRQ (during this call, or when an EP takes one), an
     * {@link EventNumber#ASYNC_SRQ_LOW_WATERMARK} event ({@link DatEvent.AsyncError} naming this SRQ,
     * reason {@link Dat#SRQ_LOW_WATERMARK_EVENT}) arrives on the IA's asynchronous EVD, once per
     * setting; {@link Dat#SRQ_LW_DEFAULT} (0) is none.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER over max_recv_dtos or negative;
     *         MODEL_NOT_SUPPORTED if the provider has no SRQ low watermark
     */
    void setLowWatermark(int lowWatermark);

    /**
     * DAT_SRQ_PARAM.
     *
     * @param ia the IA
     * @param state the SRQ state
     * @param pz the PZ
     * @param maxRecvDtos the most receives
     * @param maxRecvIov the most segments per receive
     * @param lowWatermark the low watermark
     * @param availableDtoCount receives posted and not yet consumed
     * @param outstandingDtoCount receives consumed and not yet completed
     */
    record SrqParam(InterfaceAdapter ia, SrqState state, ProtectionZone pz, int maxRecvDtos, int maxRecvIov,
                    int lowWatermark, int availableDtoCount, int outstandingDtoCount) {
    }
}
