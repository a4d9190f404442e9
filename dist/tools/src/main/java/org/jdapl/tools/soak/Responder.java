package org.jdapl.tools.soak;

import java.lang.foreign.Arena;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.VaType;
import org.jdapl.tools.ToolException;

/**
 * The serving side of a soak run: one IA with a PSP on a fixed connection qualifier, served by one
 * thread through one event dispatcher (connection requests, connection events and DTO completions).
 * Each accepted connection gets a guarded region of its own: the first half is exposed for the
 * client's RDMA Writes and Reads (its RMR context, address and length go back in the accept's
 * private data), the second half holds {@code window} receive slots. A received message is sent
 * back from the slot it landed in (an echo), and the slot receives again once the echo completed.
 * When a connection ends the EP is freed, the canaries around its region are checked and its
 * memory released. {@link #reopen} closes the IA abruptly with whatever is in flight and opens it
 * again: the fault "IA close with DTOs in flight".
 */
final class Responder implements Stream.Target, AutoCloseable {
    /** The accept's private data: RMR context (4), address (8), length (8). */
    static final int PRIVATE_DATA = 20;

    private final DatRegistry registry;
    private final String iaName;
    private final long connQual;
    private final int window;
    private final long slot;
    /** Canaries found damaged (connections whose guard bytes changed). */
    final LongAdder canaryDamaged = new LongAdder();
    /** Connections served. */
    final LongAdder connections = new LongAdder();
    private volatile Generation current;

    Responder(DatRegistry registry, String iaName, long connQual, int window, long slot) {
        this.registry = registry;
        this.iaName = iaName;
        this.connQual = connQual;
        this.window = window;
        this.slot = slot;
        this.current = new Generation();
    }

    /** Where clients connect: the IA's address. */
    @Override
    public SocketAddress address() {
        return current.ia.query().attributes().address();
    }

    @Override
    public long connQual() {
        return connQual;
    }

    /** Closes the IA abruptly, with the connections and DTOs it has, and opens it again. */
    synchronized void reopen() {
        current.close();
        current = new Generation();
    }

    @Override
    public synchronized void close() {
        current.close();
    }

    /** The accept's private data for a region. */
    static byte[] describe(int rmrContext, long address, long length) {
        return ByteBuffer.allocate(PRIVATE_DATA).putInt(rmrContext).putLong(address).putLong(length).array();
    }

    /** One opening of the IA and the thread serving it. */
    private final class Generation {
        final InterfaceAdapter ia;
        final ProtectionZone pz;
        final EventDispatcher evd;
        final PublicServicePoint psp;
        final Map<Endpoint, Served> served = new HashMap<>();
        final Thread thread;
        volatile boolean closing;

        Generation() {
            try {
                ia = registry.open(iaName, 64);
            } catch (DatException e) {
                throw new ToolException(ToolException.FAILURE, "soak: cannot open IA '" + iaName + "': "
                        + e.getMessage(), e);
            }
            try {
                pz = ia.createPz();
                evd = ia.createEvd(Math.min(1 << 16, ia.query().attributes().maxEvdQlen()), null,
                        EnumSet.of(EvdFlag.CR, EvdFlag.CONNECTION, EvdFlag.DTO));
                psp = ia.createPsp(connQual, evd, PspFlag.CONSUMER);
            } catch (RuntimeException e) {
                ia.close();
                throw e;
            }
            thread = Thread.ofPlatform().daemon().name("soak-responder").start(this::serve);
        }

        /**
         * Serves until the IA is closed: the loop ends only when a wait fails for want of the IA, so
         * that the regions are released after the IA's connections are gone, never while one may
         * still reach them.
         */
        private void serve() {
            try {
                while (true) {
                    DatEvent event;
                    try {
                        event = evd.waitEvent(200_000);
                    } catch (DatException e) {
                        if (e.type() == org.jdapl.dat.DatReturnType.TIMEOUT_EXPIRED) {
                            continue;
                        }
                        return; // the IA was closed
                    }
                    handle(event);
                }
            } catch (DatException e) {
                if (!closing) {
                    throw e;
                }
            } finally {
                if (closing) {
                    release();
                }
            }
        }

        private void handle(DatEvent event) {
            switch (event) {
                case DatEvent.ConnectionRequest request -> accept(request);
                case DatEvent.DtoCompletion c -> {
                    Served s = served.get(c.ep());
                    if (s != null && c.status() == DtoStatus.SUCCESS) {
                        s.completed(c);
                    }
                }
                case DatEvent.Connection c -> {
                    if (c.number() != EventNumber.CONNECTION_ESTABLISHED) {
                        Served s = served.remove(c.ep());
                        if (s != null) {
                            s.free();
                        }
                    }
                }
                default -> {
                }
            }
        }

        private void accept(DatEvent.ConnectionRequest request) {
            Served s;
            try {
                s = new Served(this);
            } catch (DatException e) {
                request.request().reject(new byte[0]);
                return;
            }
            try {
                request.request().accept(s.ep, describe(s.lmr.query().rmrContext(),
                        s.lmr.query().registeredAddress(), window * slot));
                served.put(s.ep, s);
                connections.increment();
            } catch (DatException e) {
                s.free();
            }
        }

        /** After an abrupt close of the IA: its objects are gone, the memory is ours to check and release. */
        private void release() {
            for (Served s : served.values()) {
                s.release();
            }
            served.clear();
        }

        void close() {
            closing = true;
            try {
                ia.close(CloseFlag.ABRUPT);
            } catch (DatException e) {
                // closed already
            }
            try {
                thread.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** One accepted connection: its EP, region and receive slots. */
    private final class Served {
        final Arena arena = Arena.ofShared();
        final GuardedRegion memory;
        final LocalMemoryRegion lmr;
        final Endpoint ep;

        Served(Generation g) {
            try {
                memory = new GuardedRegion(arena, 2 * window * slot);
                lmr = g.ia.createLmr(g.pz, memory.region, Dat.MEM_PRIV_ALL, VaType.VA);
                EpAttributes attributes = new EpAttributes(slot, slot, Qos.BEST_EFFORT, Set.of(), Set.of(),
                        window, window, 1, 1, window, 1, Dat.WATERMARK_INFINITE);
                ep = g.ia.createEp(g.pz, g.evd, g.evd, g.evd, attributes);
                for (int i = 0; i < window; i++) {
                    receive(i);
                }
            } catch (RuntimeException e) {
                arena.close();
                throw e;
            }
        }

        private void receive(int i) {
            ep.postRecv(List.of(new LmrTriplet(lmr, (window + i) * slot, slot)), i, Dat.COMPLETION_DEFAULT);
        }

        void completed(DatEvent.DtoCompletion c) {
            int i = (int) c.cookie();
            try {
                if (c.operation() == DtoOperation.RECEIVE) {
                    ep.postSend(List.of(new LmrTriplet(lmr, (window + i) * slot, c.transferredLength())), i,
                            Dat.COMPLETION_DEFAULT);
                } else if (c.operation() == DtoOperation.SEND) {
                    receive(i);
                }
            } catch (DatException e) {
                // the connection is ending; its event follows
            }
        }

        void free() {
            try {
                ep.free();
                lmr.free();
            } catch (DatException e) {
                // the IA is closing
            }
            release();
        }

        void release() {
            if (!memory.canariesIntact()) {
                canaryDamaged.increment();
            }
            arena.close();
        }
    }
}
