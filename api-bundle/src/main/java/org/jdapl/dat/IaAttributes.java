package org.jdapl.dat;

import java.net.SocketAddress;
import java.util.Map;

/**
 * DAT_IA_ATTR: what an Interface Adapter is and what it can do.
 *
 * @param adapterName the adapter (device) name
 * @param vendorName the vendor
 * @param hardwareVersionMajor the hardware major version
 * @param hardwareVersionMinor the hardware minor version
 * @param firmwareVersionMajor the firmware major version
 * @param firmwareVersionMinor the firmware minor version
 * @param address the IA address peers connect to (DAT_IA_ADDRESS_PTR)
 * @param maxEps the most endpoints
 * @param maxDtoPerEp the most outstanding DTOs per endpoint
 * @param maxRdmaReadPerEpIn the most incoming RDMA Reads in flight per endpoint
 * @param maxRdmaReadPerEpOut the most outgoing RDMA Reads in flight per endpoint
 * @param maxEvds the most event dispatchers
 * @param maxEvdQlen the longest event dispatcher queue
 * @param maxIovSegmentsPerDto the most scatter/gather entries per DTO
 * @param maxLmrs the most LMRs
 * @param maxLmrBlockSize the largest LMR
 * @param maxPzs the most protection zones
 * @param maxMessageSize the largest message (send/receive)
 * @param maxRdmaSize the largest RDMA Read or Write
 * @param maxRmrs the most RMRs
 * @param maxSrqs the most shared receive queues
 * @param maxRecvPerSrq the most receives an SRQ holds
 * @param maxPrivateDataSize the largest private data of a connect, accept or reject
 * @param zeroBasedSupported whether zero-based (VaType.ZB) regions are supported
 * @param specific transport- and vendor-specific attributes (DAT_NAMED_ATTR lists)
 */
public record IaAttributes(
        String adapterName,
        String vendorName,
        int hardwareVersionMajor,
        int hardwareVersionMinor,
        int firmwareVersionMajor,
        int firmwareVersionMinor,
        SocketAddress address,
        int maxEps,
        int maxDtoPerEp,
        int maxRdmaReadPerEpIn,
        int maxRdmaReadPerEpOut,
        int maxEvds,
        int maxEvdQlen,
        int maxIovSegmentsPerDto,
        int maxLmrs,
        long maxLmrBlockSize,
        int maxPzs,
        long maxMessageSize,
        long maxRdmaSize,
        int maxRmrs,
        int maxSrqs,
        int maxRecvPerSrq,
        int maxPrivateDataSize,
        boolean zeroBasedSupported,
        Map<String, String> specific) {

    /** Copies the specific attributes so that the record is immutable. */
    public IaAttributes {
        specific = Map.copyOf(specific);
    }
}
