package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.ExtensionType;
import org.jdapl.provider.ofa.UdAddressing.OfaAh;
import org.jdapl.provider.ofa.verbs.Structs.IbvMr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSge;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * The outstanding work requests of a datagram endpoint and what their completions become: each
 * request's {@code wr_id} (sends tagged), and each receive's slot in the endpoint's registered GRH
 * area, which goes first in the receive's scatter list so that the 40-byte GRH the device writes
 * ahead of a datagram never lands in the consumer's buffer. A completion becomes UD_SEND, or UD_RECV
 * with the payload's length (the bytes after the GRH) and the sender ({@code src_qp} and the GRH's
 * source address, through {@link UdAddressing}). Guarded by the endpoint's lock.
 *
 * <p>Behaviours: EXT_08, EXT_11.
 */
final class UdWorkRequests {
    /** The bytes of a GRH, which the device writes ahead of every datagram received. */
    static final int GRH = 40;
    private static final long SEND_TAG = 1L << 62;

    /** The endpoint the completion events name. */
    private final DatagramEndpoint ep;
    private final UdAddressing addressing;
    private final Counts counts;
    /** The GRH slots of the receives, one per receive the queue holds, registered with {@link #grhMr}. */
    private final MemorySegment grhArea;
    private final MemorySegment grhMr;
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    /** Outstanding work requests by {@code wr_id}. */
    private final Map<Long, Posted> posted = new HashMap<>();
    private long nextWrId;

    private record Posted(long cookie, long length, boolean report, int slot) {
    }

    /**
     * Allocates {@code depth} GRH slots in {@code arena} and registers them with {@code pd};
     * RESOURCE_MEMORY if the registration fails.
     */
    UdWorkRequests(DatagramEndpoint ep, UdAddressing addressing, Counts counts, Arena arena, MemorySegment pd,
                   int depth) {
        this.ep = ep;
        this.addressing = addressing;
        this.counts = counts;
        grhArea = arena.allocate((long) GRH * depth, 64);
        for (int i = 0; i < depth; i++) {
            freeSlots.add(i);
        }
        try {
            grhMr = Verbs.get().regMr(pd, grhArea, grhArea.byteSize(), Verbs.ACCESS_LOCAL_WRITE)
                    .reinterpret(IbvMr.S.size());
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_MEMORY, "dat_ep_create (UD: ibv_reg_mr)", e);
        }
    }

    /** A free GRH slot for a receive, or -1 if the receive queue is full. */
    int takeSlot() {
        Integer slot = freeSlots.poll();
        return slot == null ? -1 : slot;
    }

    /** A slot whose receive was not posted after all. */
    void giveBack(int slot) {
        freeSlots.addFirst(slot);
    }

    /** Writes the SGE of GRH slot {@code slot} at the start of {@code sges}. */
    void grhSge(MemorySegment sges, int slot) {
        sges.set(ValueLayout.JAVA_LONG, IbvSge.ADDR.offset(), grhArea.address() + (long) GRH * slot);
        sges.set(ValueLayout.JAVA_INT, IbvSge.LENGTH.offset(), GRH);
        sges.set(ValueLayout.JAVA_INT, IbvSge.LKEY.offset(), IbvMr.LKEY.getInt(grhMr));
    }

    /** The {@code wr_id} of the next send. */
    long nextSend() {
        return SEND_TAG | nextWrId++;
    }

    /** The {@code wr_id} of the next receive. */
    long nextRecv() {
        return nextWrId++;
    }

    /** A send posted: {@code report} false for a suppressed successful completion. */
    void sent(long wrId, long cookie, long length, boolean report) {
        posted.put(wrId, new Posted(cookie, length, report, -1));
    }

    /** A receive posted into GRH slot {@code slot}. */
    void received(long wrId, long cookie, long length, int slot) {
        posted.put(wrId, new Posted(cookie, length, true, slot));
    }

    /** Whether the completion of work request {@code wrId} is still to come. */
    boolean outstanding(long wrId) {
        return posted.containsKey(wrId);
    }

    /**
     * The event the work completion at {@code wc} (already known to be outstanding) becomes on
     * {@code evd}; null for a suppressed successful send.
     */
    DatEvent completed(EventDispatcher evd, long wc) {
        long wrId = WorkCompletion.wrId(wc);
        Posted p = posted.remove(wrId);
        boolean receive = (wrId & SEND_TAG) == 0;
        DtoStatus st = Completions.status(WorkCompletion.status(wc), receive, false);
        if (!receive) {
            if (st == DtoStatus.SUCCESS && !p.report) {
                return null;
            }
            return new DatEvent.ExtendedDtoCompletion(evd, ep, p.cookie, st,
                    st == DtoStatus.SUCCESS ? p.length : 0, ExtensionType.UD_SEND, 0, null);
        }
        MemorySegment grh = grhArea.asSlice((long) GRH * p.slot, GRH);
        freeSlots.add(p.slot);
        OfaAh sender = null;
        long length = 0;
        if (st == DtoStatus.SUCCESS) {
            length = Math.max(0, WorkCompletion.byteLen(wc) - GRH);
            sender = addressing.sender(WorkCompletion.srcQp(wc), grh);
            counts.incWithData(EpCounter.RECV, length);
        }
        return new DatEvent.ExtendedDtoCompletion(evd, ep, p.cookie, st, length, ExtensionType.UD_RECV, 0, sender);
    }

    /** Whether no send ({@code sends} true) or no receive is outstanding. */
    boolean idle(boolean sends) {
        for (long id : posted.keySet()) {
            if (((id & SEND_TAG) != 0) == sends) {
                return false;
            }
        }
        return true;
    }

    /** Forgets every outstanding request (the queue pair is gone); returns {sends, receives} forgotten. */
    int[] clear() {
        int sends = 0;
        int recvs = 0;
        for (long id : posted.keySet()) {
            if ((id & SEND_TAG) != 0) {
                sends++;
            } else {
                recvs++;
            }
        }
        posted.clear();
        return new int[] {sends, recvs};
    }

    /** Deregisters the GRH area (after the queue pair is destroyed). */
    void destroy() {
        NativeErrors.quietly("ibv_dereg_mr", () -> Verbs.get().deregMr(grhMr));
    }
}
