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
 * @param specific provider-specific attributes (DAT_NAMED_ATTR list)
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

    /** Copies the collections so that the record is immutable. */
    public ProviderAttributes {
        qosSupported = Set.copyOf(qosSupported);
        completionFlagsSupported = Set.copyOf(completionFlagsSupported);
        specific = Map.copyOf(specific);
    }
}
