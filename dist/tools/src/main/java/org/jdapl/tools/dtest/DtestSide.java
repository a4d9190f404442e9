package org.jdapl.tools.dtest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.dat.VaType;
import org.jdapl.tools.Events;
import org.jdapl.tools.Timings;
import org.jdapl.tools.ToolException;

/**
 * What both sides of dtest hold: the IA, a PZ, the EVDs, three LMRs (a send slot, a ring of
 * receive slots, the RDMA buffer) and the EP, with their creation measured, and the messaging
 * over the connection. Receives are posted ahead in a ring and re-posted as they are consumed, so
 * that a message never finds its peer without a receive.
 */
abstract class DtestSide implements AutoCloseable {
    /** Receive slots posted ahead. */
    static final int RECV_SLOTS = 4;
    /** Send and receive messages other than pings are this long. */
    static final int CONTROL_LEN = Wire.HEADER;

    final DatRegistry registry;
    final DtestOptions options;
    final String role;
    final Timings timings = new Timings();
    private final Arena arena = Arena.ofShared();

    InterfaceAdapter ia;
    IaAttributes iaAttributes;
    ProtectionZone pz;
    EventDispatcher requestEvd;
    EventDispatcher recvEvd;
    EventDispatcher connectEvd;
    LocalMemoryRegion sendLmr;
    LocalMemoryRegion recvLmr;
    LocalMemoryRegion rdmaLmr;
    Endpoint ep;
    int slotSize;
    int window;
    private long sendCookie;

    DtestSide(DatRegistry registry, DtestOptions options, String role) {
        this.registry = registry;
        this.options = options;
        this.role = role;
    }

    /**
     * {@code dat_ia_open} of the IA named by -P.
     *
     * @throws ToolException FAILURE if the registry cannot open it (unknown name, provider absent)
     */
    void openIa() {
        ia = IaSteps.open(registry, options, timings);
        iaAttributes = ia.query().attributes();
    }

    void createPz() {
        pz = timings.time("PZ create", ia::createPz);
    }

    EventDispatcher createEvd(Set<EvdFlag> flags, int qlen) {
        return IaSteps.evd(ia, iaAttributes.maxEvdQlen(), timings, flags, qlen);
    }

    /** The request EVD, the receive EVD and (unless merged into the receive EVD) the connect EVD. */
    void createEvds(int bufLen, int burst, boolean mergeConnectIntoRecv) {
        window = Math.max(1, Math.min(Math.min(burst, 32), iaAttributes.maxDtoPerEp() - RECV_SLOTS));
        requestEvd = createEvd(EnumSet.of(EvdFlag.DTO), window + 8);
        if (mergeConnectIntoRecv) {
            recvEvd = createEvd(EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION), RECV_SLOTS + 8);
            connectEvd = recvEvd;
        } else {
            recvEvd = createEvd(EnumSet.of(EvdFlag.DTO), RECV_SLOTS + 8);
            connectEvd = createEvd(EnumSet.of(EvdFlag.CONNECTION), 8);
        }
    }

    /**
     * The send slot, the receive ring and the RDMA buffer, checked against the IA's limits.
     *
     * @throws ToolException USAGE if a length is over what the IA supports
     */
    void createLmrs(int bufLen, int msgLen) {
        slotSize = Math.max(msgLen, CONTROL_LEN);
        if (slotSize > iaAttributes.maxMessageSize()) {
            throw ToolException.usage("dtest: message length " + msgLen + " is over the IA's maximum message size "
                    + iaAttributes.maxMessageSize());
        }
        if (bufLen > iaAttributes.maxRdmaSize() || bufLen > iaAttributes.maxLmrBlockSize()) {
            throw ToolException.usage("dtest: buffer length " + bufLen + " is over the IA's maximum RDMA size "
                    + iaAttributes.maxRdmaSize() + " or LMR size " + iaAttributes.maxLmrBlockSize());
        }
        long align = 4096;
        MemorySegment send = arena.allocate(slotSize, align);
        MemorySegment recv = arena.allocate((long) slotSize * RECV_SLOTS, align);
        MemorySegment rdma = arena.allocate(bufLen, align);
        sendLmr = timings.time("LMR create", () -> ia.createLmr(pz, send, Dat.MEM_PRIV_ALL, VaType.VA));
        recvLmr = timings.time("LMR create", () -> ia.createLmr(pz, recv, Dat.MEM_PRIV_ALL, VaType.VA));
        rdmaLmr = timings.time("LMR create", () -> ia.createLmr(pz, rdma, Dat.MEM_PRIV_ALL, VaType.VA));
    }

    void createEp(int bufLen) {
        int readsOut = Math.max(1, iaAttributes.maxRdmaReadPerEpOut());
        int readsIn = Math.max(1, iaAttributes.maxRdmaReadPerEpIn());
        EpAttributes attributes = new EpAttributes(slotSize, bufLen, Qos.BEST_EFFORT, Set.of(), Set.of(),
                RECV_SLOTS, window + 1, 1, 1, readsIn, readsOut, Dat.WATERMARK_INFINITE);
        ep = timings.time("EP create", () -> ia.createEp(pz, recvEvd, requestEvd, connectEvd, attributes));
    }

    /** Posts every receive slot (before connect or accept). */
    void postReceives() {
        for (int slot = 0; slot < RECV_SLOTS; slot++) {
            postReceive(slot);
        }
    }

    private void postReceive(int slot) {
        ep.postRecv(List.of(new LmrTriplet(recvLmr, (long) slot * slotSize, slotSize)), slot, Dat.COMPLETION_DEFAULT);
    }

    /** Sends one message of {@code length} bytes and waits for its completion. */
    void send(int type, long value, long value2, long value3, int length) {
        Wire.write(sendLmr.segment(), type, value, value2, value3);
        long cookie = ++sendCookie;
        ep.postSend(List.of(new LmrTriplet(sendLmr, 0, length)), cookie, Dat.COMPLETION_DEFAULT);
        DatEvent.DtoCompletion done = Events.dto(requestEvd, options.timeoutMicros(), DtoOperation.SEND,
                role + "'s send of " + Wire.typeName(type));
        if (done.cookie() != cookie) {
            throw ToolException.failure(role + ": send completion with cookie " + done.cookie() + ", expected " + cookie);
        }
    }

    /**
     * Takes a successful receive completion: reads its message, re-posts its slot.
     *
     * @throws ToolException FAILURE for a message of another type
     */
    Wire.Message consume(DatEvent.DtoCompletion completion, int expectedType) {
        Events.checkSuccess(completion, DtoOperation.RECEIVE, role + "'s receive");
        int slot = (int) completion.cookie();
        if (slot < 0 || slot >= RECV_SLOTS) {
            throw ToolException.failure(role + ": receive completion with unknown cookie " + completion.cookie());
        }
        MemorySegment data = recvLmr.segment().asSlice((long) slot * slotSize, slotSize);
        Wire.Message message = Wire.read(data, completion.transferredLength());
        if (expectedType != 0 && message.type() != expectedType) {
            throw ToolException.failure(role + " expected " + Wire.typeName(expectedType) + ", received "
                    + Wire.typeName(message.type()));
        }
        postReceive(slot);
        return message;
    }

    /** Waits for the next message, which must be of {@code expectedType} (0: any). */
    Wire.Message receive(int expectedType) {
        DatEvent event = Events.next(recvEvd, options.timeoutMicros(), role + "'s receive of "
                + (expectedType == 0 ? "a message" : Wire.typeName(expectedType)));
        if (!(event instanceof DatEvent.DtoCompletion completion)) {
            throw ToolException.failure(role + " waiting for a message got " + Events.describe(event));
        }
        return consume(completion, expectedType);
    }

    /**
     * Frees every object and closes the IA gracefully, which fails if anything was left behind.
     *
     * @throws ToolException FAILURE if a free or the graceful close fails
     */
    void teardown() {
        long start = System.nanoTime();
        try {
            ep.free();
            ep = null;
            for (LocalMemoryRegion lmr : List.of(sendLmr, recvLmr, rdmaLmr)) {
                lmr.free();
            }
            freeExtra();
            requestEvd.free();
            recvEvd.free();
            if (connectEvd != recvEvd) {
                connectEvd.free();
            }
            pz.free();
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, role + ": freeing objects failed: " + e.getMessage(), e);
        }
        timings.add("free objects", 1, System.nanoTime() - start);
        long closeStart = System.nanoTime();
        try {
            ia.close(CloseFlag.GRACEFUL);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, role + ": graceful IA close failed: " + e.getMessage(), e);
        }
        timings.add("IA close", 1, System.nanoTime() - closeStart);
    }

    /** Frees objects a side adds (the server's PSP and CR EVD); before the EVDs are freed. */
    void freeExtra() {
    }

    /** Closes the IA abruptly if it is open: every wait of this side ends, every connection breaks. */
    void abort() {
        InterfaceAdapter open = ia;
        if (open != null && !open.isFreed()) {
            try {
                open.close();
            } catch (DatException e) {
                // closed concurrently: nothing left to do
            }
        }
    }

    /** Closes the IA abruptly if teardown did not run, and releases the memory (once). */
    @Override
    public synchronized void close() {
        try {
            abort();
        } finally {
            if (arena.scope().isAlive()) {
                arena.close();
            }
        }
    }
}
