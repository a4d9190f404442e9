package org.jdapl.tools.soak;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.tools.Patterns;

/**
 * One connection of a soak run, driven by one thread: it connects to the responder, keeps
 * {@code window} operations in flight (an echo: a receive and a send whose message comes back;
 * or an RDMA Write of a pattern followed by an RDMA Read of the same range), checks every byte that
 * comes back, and when the connection ends (a fault, or the end of the run) waits for every
 * outstanding cookie, frees the EP and connects again.
 *
 * <p>Local memory, one guarded LMR: {@code window} slots each of send/write source, read
 * destination and echo receive.
 */
final class Stream implements Runnable {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;
    /** How long a connection with DTOs outstanding may stay silent before it counts as a stall. */
    private static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long CONNECT_TIMEOUT_MICROS = 5_000_000;

    /** What an outstanding cookie stands for. */
    private record Pending(Endpoint ep, int slot, Kind kind, long seed, int length) {
    }

    private enum Kind { RECV, SEND, WRITE, READ }

    /** A fault another thread asks this stream to suffer. */
    enum Fault { EP_FREE, ABRUPT, GRACEFUL }

    private final int index;
    private final InterfaceAdapter ia;
    private final ProtectionZone pz;
    private final Ledger ledger;
    private final SoakOptions options;
    private final Target target;
    private final BooleanSupplier more;
    private final Random random;
    private final Arena arena = Arena.ofShared();
    private final GuardedRegion memory;
    private final LocalMemoryRegion lmr;
    private final EventDispatcher evd;
    private final int window;
    private final long slotSize;
    private final Map<Long, Pending> pending = new HashMap<>();
    /** Per slot: DTOs of its operation still to complete (0: free). */
    private final int[] busy;
    private final boolean[] failedSlot;
    private final ArrayDeque<Long> echoSeeds = new ArrayDeque<>();
    private volatile Endpoint ep;
    private volatile Fault fault;
    private volatile CountDownLatch faultDone;
    private int rmrContext;
    private long remoteAddress;
    private long seedCounter;

    /** Where the responder is now (it moves when it is reopened on port 0 or restarted). */
    interface Target {
        java.net.SocketAddress address();

        long connQual();
    }

    Stream(int index, InterfaceAdapter ia, ProtectionZone pz, Ledger ledger, SoakOptions options, Target target,
           BooleanSupplier more) {
        this.index = index;
        this.ia = ia;
        this.pz = pz;
        this.ledger = ledger;
        this.options = options;
        this.target = target;
        this.more = more;
        this.random = new Random(options.seed() * 1_000_003L + index);
        this.window = options.window();
        this.slotSize = options.maxSize();
        this.busy = new int[window];
        this.failedSlot = new boolean[window];
        this.memory = new GuardedRegion(arena, 3L * window * slotSize);
        this.lmr = ia.createLmr(pz, memory.region, Dat.MEM_PRIV_ALL, VaType.VA);
        this.evd = ia.createEvd(8 * window + 16, null, EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION));
    }

    /**
     * Makes the stream's thread suffer {@code f} on its current connection, from this (another)
     * thread, racing the stream's posts; returns once it is done (at most 10 s), false if the stream
     * had no connection.
     */
    boolean inflict(Fault f) {
        Endpoint current = ep;
        if (current == null) {
            return false;
        }
        try {
            switch (f) {
                case EP_FREE -> {
                    CountDownLatch done = new CountDownLatch(1);
                    faultDone = done;
                    fault = f;
                    return done.await(10, TimeUnit.SECONDS);
                }
                case ABRUPT -> current.disconnect(CloseFlag.ABRUPT);
                case GRACEFUL -> current.disconnect(CloseFlag.GRACEFUL);
            }
            return true;
        } catch (DatException e) {
            return false; // already disconnected or freed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void run() {
        try {
            boolean first = true;
            while (more.getAsBoolean()) {
                if (!connect()) {
                    sleep(50 + random.nextInt(100));
                    continue;
                }
                if (!first) {
                    ledger.reconnections.increment();
                }
                first = false;
                stream();
                end();
            }
        } finally {
            if (!memory.canariesIntact()) {
                ledger.canaryDamaged.increment();
            }
            try {
                lmr.free();
                evd.free();
            } catch (DatException e) {
                // the IA is closing
            }
            arena.close();
        }
    }

    private boolean connect() {
        EpAttributes attributes = new EpAttributes(slotSize, slotSize, Qos.BEST_EFFORT, Set.of(), Set.of(),
                window, 3 * window, 1, 1, 1, window, Dat.WATERMARK_INFINITE);
        Endpoint e = ia.createEp(pz, evd, evd, evd, attributes);
        try {
            e.connect(target.address(), target.connQual(), CONNECT_TIMEOUT_MICROS, new byte[0]);
        } catch (DatException x) {
            e.free();
            return false;
        }
        long deadline = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(CONNECT_TIMEOUT_MICROS) * 2;
        while (System.nanoTime() < deadline) {
            DatEvent event = next(100_000);
            if (event instanceof DatEvent.Connection c && c.ep() == e) {
                if (c.number() == EventNumber.CONNECTION_ESTABLISHED && c.privateData() != null
                        && c.privateData().length >= Responder.PRIVATE_DATA) {
                    ByteBuffer pd = ByteBuffer.wrap(c.privateData());
                    rmrContext = pd.getInt();
                    remoteAddress = pd.getLong();
                    ep = e;
                    return true;
                }
                break;
            } else if (event instanceof DatEvent.DtoCompletion c) {
                settle(c);
            }
        }
        free(e);
        return false;
    }

    /** Posts and completes operations until the connection ends or the run does. */
    private void stream() {
        long lastProgress = System.nanoTime();
        while (true) {
            Fault f = fault;
            if (f != null) {
                fault = null;
                free(ep);
                ep = null;
                faultDone.countDown();
                return;
            }
            if (more.getAsBoolean()) {
                for (int s = 0; s < window; s++) {
                    if (busy[s] == 0 && !post(s)) {
                        break;
                    }
                }
            } else if (pending.isEmpty()) {
                return;
            }
            DatEvent event = next(50_000);
            if (event == null) {
                if (!pending.isEmpty() && System.nanoTime() - lastProgress > STALL_NANOS) {
                    ledger.stalls.increment();
                    return;
                }
                continue;
            }
            lastProgress = System.nanoTime();
            if (event instanceof DatEvent.DtoCompletion c) {
                settle(c);
                if (c.status() != DtoStatus.SUCCESS) {
                    return;
                }
            } else if (event instanceof DatEvent.Connection c && c.ep() == ep) {
                return; // DISCONNECTED or BROKEN
            }
        }
    }

    /** Ends the connection: every outstanding cookie completes (the EP free flushes what is left). */
    private void end() {
        Endpoint e = ep;
        ep = null;
        if (e != null) {
            try {
                if (e.query().state() == EpState.CONNECTED) {
                    e.disconnect(CloseFlag.GRACEFUL);
                }
            } catch (DatException x) {
                // ended meanwhile
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (hasPending(e) && System.nanoTime() < deadline) {
                DatEvent event = next(50_000);
                if (event instanceof DatEvent.DtoCompletion c) {
                    settle(c);
                }
            }
            free(e);
        }
        for (Long cookie : pending.keySet()) {
            ledger.lost(cookie);
        }
        pending.clear();
        java.util.Arrays.fill(busy, 0);
        java.util.Arrays.fill(failedSlot, false);
        echoSeeds.clear();
    }

    private boolean hasPending(Endpoint e) {
        for (Pending p : pending.values()) {
            if (p.ep == e) {
                return true;
            }
        }
        return false;
    }

    /** Frees {@code e} (its DTOs are flushed to the EVD) and settles what the free flushed. */
    private void free(Endpoint e) {
        try {
            e.free();
        } catch (DatException x) {
            // freed already
        }
        DatEvent event;
        while ((event = next(0)) != null) {
            if (event instanceof DatEvent.DtoCompletion c) {
                settle(c);
            }
        }
        for (var it = pending.entrySet().iterator(); it.hasNext(); ) {
            var entry = it.next();
            if (entry.getValue().ep == e) {
                ledger.lost(entry.getKey());
                it.remove();
                release(entry.getValue().slot);
            }
        }
    }

    private DatEvent next(long timeoutMicros) {
        try {
            if (timeoutMicros == 0) {
                return evd.dequeue().orElse(null);
            }
            return evd.waitEvent(timeoutMicros);
        } catch (DatException e) {
            if (e.type() == DatReturnType.TIMEOUT_EXPIRED || e.type() == DatReturnType.QUEUE_EMPTY) {
                return null;
            }
            throw e;
        }
    }

    private long nextSeed() {
        return options.seed() ^ ((long) index << 40) ^ ++seedCounter * 0x9E3779B97F4A7C15L;
    }

    private MemorySegment local(int s, int part, long length) {
        return memory.region.asSlice((3L * s + part) * slotSize, length);
    }

    private LmrTriplet triplet(int s, int part, long length) {
        return new LmrTriplet(lmr, (3L * s + part) * slotSize, length);
    }

    /** Posts one operation into free slot {@code s}; false if the connection no longer takes posts. */
    private boolean post(int s) {
        int length = size();
        long seed = nextSeed();
        Endpoint e = ep;
        if (random.nextBoolean()) {
            int l = Math.max(16, length);
            MemorySegment message = local(s, 0, l);
            message.set(WORD, 0, seed);
            message.set(WORD, 8, l);
            Patterns.fill(message.asSlice(16), seed);
            if (!post(e, new Pending(e, s, Kind.RECV, 0, 0), c -> e.postRecv(List.of(triplet(s, 2, slotSize)), c,
                    Dat.COMPLETION_DEFAULT))) {
                return false;
            }
            if (!post(e, new Pending(e, s, Kind.SEND, seed, l), c -> e.postSend(List.of(triplet(s, 0, l)), c,
                    Dat.COMPLETION_DEFAULT))) {
                return false;
            }
            echoSeeds.add(seed);
            return true;
        }
        long offset = random.nextLong(slotSize - length + 1);
        Patterns.fill(local(s, 0, length), seed);
        local(s, 1, length).fill((byte) 0x5A);
        RmrTriplet remote = new RmrTriplet(rmrContext, remoteAddress + s * slotSize + offset, length);
        if (!post(e, new Pending(e, s, Kind.WRITE, seed, length),
                c -> e.postRdmaWrite(List.of(triplet(s, 0, length)), c, remote, Dat.COMPLETION_DEFAULT))) {
            return false;
        }
        return post(e, new Pending(e, s, Kind.READ, seed, length),
                c -> e.postRdmaRead(List.of(triplet(s, 1, length)), c, remote, Dat.COMPLETION_DEFAULT));
    }

    private interface Poster {
        void post(long cookie);
    }

    private boolean post(Endpoint e, Pending p, Poster poster) {
        long cookie = ledger.open(p);
        try {
            poster.post(cookie);
        } catch (DatException x) {
            ledger.unpost(cookie);
            return false;
        }
        ledger.posted();
        pending.put(cookie, p);
        busy[p.slot]++;
        return true;
    }

    /** A random size: mostly small, sometimes up to the slot size. */
    private int size() {
        int max = (int) slotSize;
        return switch (random.nextInt(4)) {
            case 0 -> 1 + random.nextInt(Math.min(64, max));
            case 1 -> 1 + random.nextInt(Math.min(1024, max));
            case 2 -> 1 + random.nextInt(Math.min(8192, max));
            default -> 1 + random.nextInt(max);
        };
    }

    private void settle(DatEvent.DtoCompletion c) {
        Pending p = pending.remove(c.cookie());
        Object what = ledger.settle(c.cookie(), c.status());
        if (p == null || what == null) {
            return;
        }
        if (c.status() == DtoStatus.SUCCESS) {
            verify(p, c);
        } else {
            failedSlot[p.slot] = true;
        }
        release(p.slot);
    }

    private void release(int s) {
        if (busy[s] > 0 && --busy[s] == 0) {
            failedSlot[s] = false;
        }
    }

    private void verify(Pending p, DatEvent.DtoCompletion c) {
        switch (p.kind) {
            case READ -> {
                long bad = Patterns.mismatch(local(p.slot, 1, p.length), p.seed);
                if (c.transferredLength() != p.length || bad >= 0) {
                    ledger.corrupt.increment();
                    ledger.corruptReads.increment();
                } else {
                    ledger.bytesVerified.add(p.length);
                }
            }
            case RECV -> {
                MemorySegment m = local(p.slot, 2, slotSize);
                long seed = m.get(WORD, 0);
                long l = m.get(WORD, 8);
                if (l != c.transferredLength() || l < 16 || l > slotSize
                        || Patterns.mismatch(m.asSlice(16, l - 16), seed) >= 0 || !echoSeeds.contains(seed)) {
                    ledger.corrupt.increment();
                    ledger.corruptEchoes.increment();
                    return;
                }
                if (echoSeeds.peekFirst() != seed) {
                    // Out of order: the echoes of the messages sent before it were lost or overtaken.
                    ledger.corrupt.increment();
                    ledger.corruptEchoes.increment();
                    while (echoSeeds.peekFirst() != seed) {
                        echoSeeds.pollFirst();
                    }
                }
                echoSeeds.pollFirst();
                ledger.bytesVerified.add(l);
            }
            default -> {
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
