package org.jdapl.conformance.cases;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import org.jdapl.conformance.Conformance;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.RmrTriplet;

/** EXT_01..EXT_04: remote atomics, and the refusal of what a provider does not offer. */
public final class AtomicCases {
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
    private static final int THREADS = 4;

    /** One atomic, its completion checked: SUCCESS, its type, length 8. */
    private static void complete(EventDispatcher evd, long cookie, ExtensionType type, Rig rig) {
        DatEvent.ExtendedDtoCompletion x = Extended.completion(evd, rig.eventTimeout(), "for " + type);
        Checks.equal(cookie, x.cookie(), "the cookie of the " + type + " completion");
        Checks.equal(DtoStatus.SUCCESS, x.status(), "the status of the " + type + " completion");
        Checks.equal(type, x.type(), "the extension type");
        Checks.equal(8L, x.transferredLength(), "the length of the " + type + " completion");
    }

    @Conformance("EXT_01")
    public void atomicsFetchTheOldValueAndLeaveTheNewOne(Rig rig) {
        Side[] s = rig.pair();
        Extended.require(s[0], ProviderAttributes.DAT_IB_FETCH_AND_ADD);
        Extended.require(s[0], ProviderAttributes.DAT_IB_CMP_AND_SWAP);
        Link link = Link.connect(s[0], s[1]);
        MemorySegment targetBytes = rig.segment(64, (byte) 0);
        LocalMemoryRegion target = s[1].lmr(targetBytes, java.util.EnumSet.allOf(org.jdapl.dat.MemPriv.class));
        targetBytes.set(U64, 8, 40);
        MemorySegment localBytes = rig.segment(16, (byte) 0x5a);
        LocalMemoryRegion local = s[0].lmr(localBytes, Dat.MEM_PRIV_ALL);
        RmrTriplet remote = Link.remote(target, 8, 8);
        Endpoint ep = link.epA();

        ep.postFetchAndAdd(2, Link.local(local, 0, 8), 1, remote, Set.of());
        complete(s[0].reqEvd, 1, ExtensionType.FETCH_AND_ADD, rig);
        Checks.equal(40L, localBytes.get(U64, 0), "the value fetch-and-add fetched");
        Checks.equal(42L, targetBytes.get(U64, 8), "the target after fetch-and-add");

        ep.postCompareAndSwap(41, 7, Link.local(local, 8, 8), 2, remote, Set.of());
        complete(s[0].reqEvd, 2, ExtensionType.CMP_AND_SWAP, rig);
        Checks.equal(42L, localBytes.get(U64, 8), "the value a compare-and-swap that did not match fetched");
        Checks.equal(42L, targetBytes.get(U64, 8), "the target after a compare-and-swap that did not match");

        ep.postCompareAndSwap(42, 7, Link.local(local, 0, 8), 3, remote, Set.of());
        complete(s[0].reqEvd, 3, ExtensionType.CMP_AND_SWAP, rig);
        Checks.equal(42L, localBytes.get(U64, 0), "the value a matching compare-and-swap fetched");
        Checks.equal(7L, targetBytes.get(U64, 8), "the target after a matching compare-and-swap");
        Checks.equal(0L, targetBytes.get(U64, 0), "the target's neighbour bytes");

        ep.postRdmaRead(List.of(Link.local(local, 8, 8)), 4, remote, Set.of());
        DatEvent read = Events.next(s[0].reqEvd, rig.eventTimeout(), "for the RDMA Read");
        Checks.equal(DtoStatus.SUCCESS, Events.status(read), "the RDMA Read of the target");
        Checks.equal(7L, localBytes.get(U64, 8), "the target as an RDMA Read sees it");

        LocalMemoryRegion plain = s[1].lmr(64, (byte) 0);
        ep.postFetchAndAdd(1, Link.local(local, 0, 8), 5, Link.remote(plain, 0, 8), Set.of());
        DatEvent.ExtendedDtoCompletion refused = Extended.completion(s[0].reqEvd, rig.eventTimeout(),
                "for a fetch-and-add on a region without REMOTE_ATOMIC");
        Checks.equal(DtoStatus.REMOTE_ACCESS, refused.status(), "a fetch-and-add on a region without REMOTE_ATOMIC");
    }

    /** Runs {@code body(i)} on {@link #THREADS} threads and rethrows the first failure. */
    private static void onThreads(Rig rig, java.util.function.IntConsumer body) {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int i = t;
            threads.add(Thread.ofPlatform().daemon().name("ext-" + rig.caseId() + "-" + t).start(() -> {
                try {
                    body.accept(i);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        long deadline = System.nanoTime() + rig.eventTimeout().multipliedBy(4).toNanos();
        for (Thread t : threads) {
            try {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted");
            }
            Checks.check(!t.isAlive(), "a thread of the case did not end within " + rig.eventTimeout().multipliedBy(4));
        }
        if (failure.get() instanceof AssertionError a) {
            throw a;
        } else if (failure.get() != null) {
            throw new AssertionError(failure.get().toString(), failure.get());
        }
    }

    /** {@link #THREADS} EPs of side 0, each with an EVD of its own, connected to fresh EPs of side 1. */
    private static Endpoint[] endpoints(Side[] s) {
        Endpoint[] eps = new Endpoint[THREADS];
        for (int t = 0; t < THREADS; t++) {
            EventDispatcher evd = s[0].evd(EvdFlag.DTO, EvdFlag.CONNECTION);
            eps[t] = Link.connect(s[0], s[1], s[0].ep(evd), s[1].ep()).epA();
        }
        return eps;
    }

    @Conformance("EXT_02")
    public void concurrentFetchAndAddsSumExactly(Rig rig) {
        Side[] s = rig.pair();
        Extended.require(s[0], ProviderAttributes.DAT_IB_FETCH_AND_ADD);
        int perThread = 250;
        Endpoint[] eps = endpoints(s);
        MemorySegment targetBytes = rig.segment(8, (byte) 0);
        RmrTriplet remote = Link.remote(s[1].lmr(targetBytes,
                java.util.EnumSet.allOf(org.jdapl.dat.MemPriv.class)), 0, 8);
        MemorySegment fetched = rig.segment(THREADS * perThread * 8L, (byte) 0);
        LocalMemoryRegion local = s[0].lmr(fetched, Dat.MEM_PRIV_ALL);
        onThreads(rig, t -> {
            EventDispatcher evd = eps[t].query().requestEvd();
            for (int i = 0; i < perThread; i++) {
                eps[t].postFetchAndAdd(1, Link.local(local, (t * perThread + i) * 8L, 8), i, remote, Set.of());
            }
            for (int i = 0; i < perThread; i++) {
                DatEvent.ExtendedDtoCompletion x = Extended.completion(evd, rig.eventTimeout(), "for a fetch-and-add");
                Checks.equal(DtoStatus.SUCCESS, x.status(), "fetch-and-add " + x.cookie());
            }
        });
        int total = THREADS * perThread;
        Checks.equal((long) total, targetBytes.get(U64, 0), "the target after " + total + " fetch-and-adds of 1");
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < total; i++) {
            long v = fetched.get(U64, i * 8L);
            Checks.check(v >= 0 && v < total && seen.add(v), "fetch-and-add " + i + " fetched " + v
                    + ", which another fetched too or which is out of 0.." + (total - 1));
        }
    }

    @Conformance("EXT_03")
    public void compareAndSwapContentionLosesNoIncrement(Rig rig) {
        Side[] s = rig.pair();
        Extended.require(s[0], ProviderAttributes.DAT_IB_CMP_AND_SWAP);
        int perThread = 50;
        Endpoint[] eps = endpoints(s);
        MemorySegment targetBytes = rig.segment(8, (byte) 0);
        RmrTriplet remote = Link.remote(s[1].lmr(targetBytes,
                java.util.EnumSet.allOf(org.jdapl.dat.MemPriv.class)), 0, 8);
        MemorySegment fetched = rig.segment(THREADS * 8L, (byte) 0);
        LocalMemoryRegion local = s[0].lmr(fetched, Dat.MEM_PRIV_ALL);
        List<Long> won = new CopyOnWriteArrayList<>();
        onThreads(rig, t -> {
            EventDispatcher evd = eps[t].query().requestEvd();
            long expect = 0;
            int wins = 0;
            for (int tries = 0; wins < perThread; tries++) {
                Checks.check(tries < 100_000, "thread " + t + " won only " + wins + " swaps in 100,000 tries");
                eps[t].postCompareAndSwap(expect, expect + 1, Link.local(local, t * 8L, 8), tries, remote, Set.of());
                DatEvent.ExtendedDtoCompletion x = Extended.completion(evd, rig.eventTimeout(), "for a compare-and-swap");
                Checks.equal(DtoStatus.SUCCESS, x.status(), "compare-and-swap " + tries);
                long got = fetched.get(U64, t * 8L);
                if (got == expect) {
                    won.add(got);
                    wins++;
                    expect++;
                } else {
                    expect = got;
                }
            }
        });
        int total = THREADS * perThread;
        Checks.equal((long) total, targetBytes.get(U64, 0), "the target after " + total + " successful swaps");
        Checks.equal(total, new HashSet<>(won).size(), "distinct values the successful swaps fetched");
    }

    @Conformance("EXT_04")
    public void whatIsNotOfferedFailsModelNotSupported(Rig rig) {
        Side[] s = rig.pair();
        ProviderAttributes pa = s[0].ia.query().provider();
        Endpoint ep = s[0].ep();
        LocalMemoryRegion lmr = s[0].lmr(64, (byte) 0);
        RmrTriplet remote = new RmrTriplet(0, 0, 8);
        List<String> offered = new ArrayList<>();
        record Probe(String attribute, String what, Checks.Call call) {
        }
        List<Probe> probes = List.of(
                new Probe(ProviderAttributes.DAT_IB_FETCH_AND_ADD, "dat_ib_post_fetch_and_add",
                        () -> ep.postFetchAndAdd(1, Link.local(lmr, 0, 8), 1, remote, Set.of())),
                new Probe(ProviderAttributes.DAT_IB_CMP_AND_SWAP, "dat_ib_post_cmp_and_swap",
                        () -> ep.postCompareAndSwap(0, 1, Link.local(lmr, 0, 8), 1, remote, Set.of())),
                new Probe(ProviderAttributes.DAT_IB_IMMED_DATA, "dat_ib_post_rdma_write_immed",
                        () -> ep.postRdmaWriteWithImmediate(List.of(Link.local(lmr, 0, 8)), 1, remote, 1, Set.of())),
                new Probe(ProviderAttributes.DAT_IB_UD, "dat_ep_create (UD)", () -> Extended.udEp(s[0])),
                new Probe(ProviderAttributes.DAT_COUNTERS, "dat_query_counters (IA)", () -> s[0].ia.queryCounters(false)),
                new Probe(ProviderAttributes.DAT_COUNTERS, "dat_query_counters (EP)", () -> ep.queryCounters(false)),
                new Probe(ProviderAttributes.DAT_COUNTERS, "dat_query_counters (EVD)",
                        () -> s[0].recvEvd.queryCounters(false)));
        for (Probe p : probes) {
            if (pa.offers(p.attribute())) {
                offered.add(p.what());
            } else {
                Checks.fails(DatReturnType.MODEL_NOT_SUPPORTED, null, p.what() + " of a provider without "
                        + p.attribute(), p.call());
            }
        }
        if (!offered.isEmpty()) {
            rig.note("offered, checked by the other EXT cases: " + String.join(", ", offered));
        }
    }
}
