package org.jdapl.provider.ofa;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.Qos;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Verbs;

/** What {@code dat_ia_query} reports of an IA: the device's attributes and the provider's. Behaviours: OBJ_10. */
final class IaAttributesOf {
    private IaAttributesOf() {
    }

    static IaAttributes ia(OfaIa ia) {
        OfaDevice d = ia.device();
        return new IaAttributes(d.name, vendor(d.vendorId), d.hwVer, 0,
                firmwarePart(d.firmware, 0), firmwarePart(d.firmware, 1), ia.address(),
                d.maxQp, d.maxQpWr, d.maxQpRdAtom, d.maxQpInitRdAtom, d.maxCq, d.maxCqe, d.maxSge, d.maxMr,
                d.maxMrSize, d.maxPd, d.maxMsgSize, d.maxMsgSize, d.maxMw, d.maxSrq, d.maxSrqWr,
                ia.wire.max, Verbs.get().hasRegMrIova(), d.specific());
    }

    /** The provider's attributes: PSPs create EPs ({@code PspFlag.PROVIDER}), SRQs if the device has them. */
    static ProviderAttributes provider(OfaIa ia) {
        String[] ver = OfaProvider.VERSION.split("\\.");
        Map<String, String> specific = new HashMap<>();
        specific.put("connections", "rdma_cm RDMA_PS_TCP; connection qualifier = port (OFED's SID_TO_PORT: above"
                + " 0xffff qual % 32001 + 33534)");
        specific.put("private_data", ia.wire == PrivateData.OFED
                ? ia.wire.max + " bytes, OFED uDAPL's wire (no header; the receiver gets rdma_cm's whole buffer)"
                : ia.wire.max + " bytes (rdma_cm REQ " + PrivateData.TRANSPORT_MAX + " less 1 length byte)");
        specific.put("rmr", ia.device().windowsRefused() != null
                ? "registrations of the bound range (" + ia.device().windowsRefused() + ")"
                : "memory windows where the device has them, else registrations of the bound range");
        specific.put("libibverbs", Verbs.SONAME);
        OfaExtensions.advertise(ia.device(), specific);
        specific.put("librdmacm", RdmaCm.unavailableReason() == null ? RdmaCm.SONAME : RdmaCm.unavailableReason());
        return new ProviderAttributes(OfaProvider.NAME, Integer.parseInt(ver[0]), Integer.parseInt(ver[1]),
                Dat.VERSION_MAJOR, Dat.VERSION_MINOR, true, Set.of(Qos.BEST_EFFORT),
                EnumSet.of(CompletionFlag.SUPPRESS, CompletionFlag.SOLICITED_WAIT, CompletionFlag.BARRIER_FENCE), true,
                ia.wire.max, 64, true, ia.device().maxSrq > 0, specific);
    }

    private static String vendor(int vendorId) {
        return switch (vendorId) {
            case 0x02c9 -> "Mellanox";
            case 0x1077 -> "QLogic";
            case 0x8086 -> "Intel";
            case 0x14e4 -> "Broadcom";
            case 0x15b3 -> "Mellanox";
            case 0 -> "none (software device)";
            case OfaDevice.RXE_VENDOR_ID -> "none (rdma_rxe, Soft-RoCE)";
            default -> "vendor 0x" + Integer.toHexString(vendorId);
        };
    }

    private static int firmwarePart(String fw, int index) {
        String[] p = fw.split("\\.");
        try {
            return index < p.length ? Integer.parseInt(p[index].trim()) : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
