package org.jdapl.provider.ofa;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.ofa.verbs.Verbs;

/**
 * OFED's DAT extensions ({@code dat_ib_extensions.h}) on verbs: which of them the device offers, as
 * the provider attributes name them, and the extended requests of an EP, posted on its send queue
 * ({@link SendQueue#postExtended}) as {@code dapl/openib_common/ib_extensions.c} posts them:
 * {@code IBV_WR_ATOMIC_FETCH_AND_ADD}, {@code IBV_WR_ATOMIC_CMP_AND_SWP} (64 bits, the original value
 * in the local segment; the target's memory needs {@code IBV_ACCESS_REMOTE_ATOMIC}, which
 * {@code MemPriv.REMOTE_ATOMIC} gives) and {@code IBV_WR_RDMA_WRITE_WITH_IMM} (the sink's receive
 * completes with {@code IBV_WC_WITH_IMM}, {@link WorkQueue#immediate}). Their completions are
 * {@code DatEvent.ExtendedDtoCompletion}s of the EP's request EVD ({@link WorkRing#KIND_EXT}).
 * Behaviours: EXT_01, EXT_02, EXT_03, EXT_05, EXT_06, EXT_07.
 */
final class OfaExtensions {
    private OfaExtensions() {
    }

    /**
     * The extension attributes: atomics where the device has them ({@code ibv_device_attr.atomic_cap}
     * not IBV_ATOMIC_NONE), immediate data, unreliable
     * datagrams ({@link OfaUdEp}) and counters ({@link Counts}) always.
     */
    static void advertise(OfaDevice device, Map<String, String> specific) {
        String atomics = device.atomicCap != 0 ? "TRUE" : "FALSE";
        specific.put(ProviderAttributes.DAT_IB_FETCH_AND_ADD, atomics);
        specific.put(ProviderAttributes.DAT_IB_CMP_AND_SWAP, atomics);
        specific.put(ProviderAttributes.DAT_IB_IMMED_DATA, "TRUE");
        specific.put(ProviderAttributes.DAT_IB_UD, "TRUE");
        specific.put(ProviderAttributes.DAT_COUNTERS, "TRUE");
    }

    /** {@code dat_ib_post_fetch_and_add}. */
    static void fetchAndAdd(SendQueue sends, OfaDevice device, long addValue, LmrTriplet local, long cookie,
                            RmrTriplet remote, Set<CompletionFlag> flags) {
        atomics(device, "dat_ib_post_fetch_and_add");
        sends.postExtended(Verbs.WR_ATOMIC_FETCH_AND_ADD, ExtensionType.FETCH_AND_ADD, single(local), cookie,
                remote, addValue, 0, 0, flags);
    }

    /** {@code dat_ib_post_cmp_and_swap}. */
    static void compareAndSwap(SendQueue sends, OfaDevice device, long compareValue, long swapValue,
                               LmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        atomics(device, "dat_ib_post_cmp_and_swap");
        sends.postExtended(Verbs.WR_ATOMIC_CMP_AND_SWP, ExtensionType.CMP_AND_SWAP, single(local), cookie,
                remote, compareValue, swapValue, 0, flags);
    }

    /** {@code dat_ib_post_rdma_write_immed}. */
    static void rdmaWriteWithImmediate(SendQueue sends, List<LmrTriplet> iov, long cookie, RmrTriplet remote,
                                       int immediateData, Set<CompletionFlag> flags) {
        sends.postExtended(Verbs.WR_RDMA_WRITE_WITH_IMM, ExtensionType.RDMA_WRITE_IMMED, iov, cookie, remote,
                0, 0, immediateData, flags);
    }

    /** MODEL_NOT_SUPPORTED where the device has no atomics (the EP's handle checked first). Behaviours: EXT_04. */
    private static void atomics(OfaDevice device, String operation) {
        if (device.atomicCap == 0) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                    operation + ": device " + device.name + " has no remote atomics");
        }
    }

    private static List<LmrTriplet> single(LmrTriplet local) {
        return local == null ? null : List.of(local);
    }
}
