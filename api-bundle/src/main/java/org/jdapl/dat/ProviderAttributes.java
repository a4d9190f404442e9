package org.jdapl.dat;

import java.util.Map;
import java.util.Set;

/**
 * DAT_PROVIDER_ATTR: what the provider behind an IA supports.
 *
 * @param providerName the provider's name (the {@code dat.provider} service property, e.g. {@code emu})
 * @param providerVersionMajor the provider's major version
 * @param providerVersionMinor the provider's minor version
 * @param datVersionMajor the DAT API major version (2)
 * @param datVersionMinor the DAT API minor version (0)
 * @param threadSafe whether the provider is thread safe
 * @param qosSupported the QoS values a connect may ask for
 * @param completionFlagsSupported the completion flags DTOs may carry
 * @param pspCreatesEp whether a PSP can be created with {@link PspFlag#PROVIDER}
 * @param maxPrivateDataSize the largest private data of a connect, accept or reject
 * @param optimalBufferAlignment the buffer alignment that moves data fastest
 * @param evdStreamMergingSupported whether one EVD can serve every stream of an EP
 * @param srqSupported whether shared receive queues are supported
 * @param specific provider-specific attributes (DAT_NAMED_ATTR list); a provider offering one of
 *        OFED's DAT extensions names it here with the value {@code "TRUE"} ({@link #offers})
 */
public record ProviderAttributes(
        String providerName,
        int providerVersionMajor,
        int providerVersionMinor,
        int datVersionMajor,
        int datVersionMinor,
        boolean threadSafe,
        Set<Qos> qosSupported,
        Set<CompletionFlag> completionFlagsSupported,
        boolean pspCreatesEp,
        int maxPrivateDataSize,
        int optimalBufferAlignment,
        boolean evdStreamMergingSupported,
        boolean srqSupported,
        Map<String, String> specific) {

    /**
     * DAT_IB_ATTR_COUNTERS: the provider counts ({@link InterfaceAdapter#queryCounters},
     * {@link Endpoint#queryCounters}, {@link EventDispatcher#queryCounters}).
     *
     * @since 1.4
     */
    public static final String DAT_COUNTERS = "DAT_COUNTERS";
    /**
     * DAT_IB_ATTR_FETCH_AND_ADD: {@link Endpoint#postFetchAndAdd} is offered.
     *
     * @since 1.4
     */
    public static final String DAT_IB_FETCH_AND_ADD = "DAT_IB_FETCH_AND_ADD";
    /**
     * DAT_IB_ATTR_CMP_AND_SWAP: {@link Endpoint#postCompareAndSwap} is offered.
     *
     * @since 1.4
     */
    public static final String DAT_IB_CMP_AND_SWAP = "DAT_IB_CMP_AND_SWAP";
    /**
     * DAT_IB_ATTR_IMMED_DATA: {@link Endpoint#postRdmaWriteWithImmediate} is offered.
     *
     * @since 1.4
     */
    public static final String DAT_IB_IMMED_DATA = "DAT_IB_IMMED_DATA";
    /**
     * DAT_IB_ATTR_UD: unreliable datagram endpoints ({@link InterfaceAdapter#createDatagramEp}) are offered.
     *
     * @since 1.4
     */
    public static final String DAT_IB_UD = "DAT_IB_UD";

    /** Copies the collections so that the record is immutable. */
    public ProviderAttributes {
        qosSupported = Set.copyOf(qosSupported);
        completionFlagsSupported = Set.copyOf(completionFlagsSupported);
        specific = Map.copyOf(specific);
    }

    /**
     * Whether the provider offers the extension named by {@code attribute} (one of the
     * {@code DAT_*} names of this class): its named attribute is {@code "TRUE"}, as OFED's
     * {@code dat_ia_query} lists it.
     *
     * @since 1.4
     */
    public boolean offers(String attribute) {
        return "TRUE".equalsIgnoreCase(specific.get(attribute));
    }
}
