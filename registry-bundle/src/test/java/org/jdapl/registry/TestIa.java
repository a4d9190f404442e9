package org.jdapl.registry;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.IaQuery;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.VaType;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.spi.IaSpec;

/**
 * An in-memory IA of the registry's test provider: an async EVD, EVDs, and one "progress" thread
 * standing for the resources a real IA holds, so that leak checks have something to find. Data
 * transfer objects are outside what the registry tests need and fail NOT_IMPLEMENTED.
 */
final class TestIa implements InterfaceAdapter {
    private final TestProvider provider;
    private final IaSpec spec;
    private final TestEvd asyncEvd;
    private final List<TestEvd> evds = new ArrayList<>();
    private final CountDownLatch stop = new CountDownLatch(1);
    private final Thread progress;
    private boolean freed;
    private Object context;

    TestIa(TestProvider provider, IaSpec spec, int asyncQlen) {
        this.provider = provider;
        this.spec = spec;
        this.asyncEvd = new TestEvd(this, asyncQlen, Set.of());
        this.progress = Thread.ofPlatform().daemon().name(TestProvider.THREAD_PREFIX + provider.name() + "-"
                + spec.iaName()).start(() -> {
                    try {
                        stop.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
    }

    IaSpec spec() {
        return spec;
    }

    TestEvd asyncEvd() {
        return asyncEvd;
    }

    /** Frees the IA and everything it made, and stops its thread; false if already freed. */
    boolean tearDown() {
        List<TestEvd> toFree;
        synchronized (this) {
            if (freed) {
                return false;
            }
            freed = true;
            toFree = List.copyOf(evds);
            evds.clear();
        }
        toFree.forEach(TestEvd::markFreed);
        asyncEvd.markFreed();
        stop.countDown();
        try {
            progress.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        provider.closed(this);
        return true;
    }

    synchronized int evdCount() {
        return evds.size() + (freed ? 0 : 1);
    }

    private synchronized void check() {
        if (freed) {
            throw HandleType.IA.invalid("IA " + spec.iaName() + " is closed");
        }
    }

    @Override
    public String name() {
        check();
        return spec.iaName();
    }

    @Override
    public IaQuery query() {
        check();
        IaAttributes attributes = new IaAttributes(spec.iaParams(), "jdapl test", 1, 0, 1, 0,
                new InetSocketAddress(0), 16, 16, 1, 1, 16, 64, 1, 16, 1L << 20, 16, 1L << 20, 1L << 20, 16, 0, 0, 64,
                false, Map.of());
        ProviderAttributes providerAttributes = new ProviderAttributes(provider.name(), 1, 0, Dat.VERSION_MAJOR,
                Dat.VERSION_MINOR, provider.threadSafe(), Set.of(), Set.of(), false, 64, 8, true, false, Map.of());
        return new IaQuery(asyncEvd, attributes, providerAttributes);
    }

    @Override
    public void close(CloseFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(2, "no close flag");
        }
        synchronized (this) {
            check();
            if (flag == CloseFlag.GRACEFUL && !evds.isEmpty()) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_IA_IN_USE, "EVDs are live");
            }
        }
        tearDown();
    }

    @Override
    public void close() {
        tearDown();
    }

    @Override
    public EventDispatcher createEvd(int minQlen, Cno cno, Set<EvdFlag> flags) {
        check();
        if (minQlen < 1 || flags == null || flags.isEmpty()) {
            throw DatException.invalidParameter(1, "bad EVD length or flags");
        }
        if (cno != null) {
            throw new DatException(DatReturnType.NOT_IMPLEMENTED, "the registry's test IA has no CNO");
        }
        TestEvd evd = new TestEvd(this, minQlen, flags);
        synchronized (this) {
            evds.add(evd);
        }
        return evd;
    }

    private DatException notHere(String what) {
        check();
        return new DatException(DatReturnType.NOT_IMPLEMENTED, what + " is outside the registry's test IA");
    }

    @Override
    public ProtectionZone createPz() {
        throw notHere("dat_pz_create");
    }

    @Override
    public Cno createCno(Consumer<EventDispatcher> waitAgent) {
        throw notHere("dat_cno_create");
    }

    @Override
    public Endpoint createEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                             EventDispatcher connectEvd, EpAttributes attributes) {
        throw notHere("dat_ep_create");
    }

    @Override
    public Endpoint createEpWithSrq(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                    EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes) {
        throw notHere("dat_ep_create_with_srq");
    }

    @Override
    public PublicServicePoint createPsp(long connQual, EventDispatcher crEvd, PspFlag flag) {
        throw notHere("dat_psp_create");
    }

    @Override
    public PublicServicePoint createPspAny(EventDispatcher crEvd, PspFlag flag) {
        throw notHere("dat_psp_create_any");
    }

    @Override
    public ReservedServicePoint createRsp(long connQual, Endpoint ep, EventDispatcher crEvd) {
        throw notHere("dat_rsp_create");
    }

    @Override
    public CommonServicePoint createCsp(SocketAddress address, EventDispatcher crEvd) {
        throw notHere("dat_csp_create");
    }

    @Override
    public LocalMemoryRegion createLmr(ProtectionZone pz, MemorySegment region, Set<MemPriv> privileges,
                                       VaType vaType) {
        throw notHere("dat_lmr_create");
    }

    @Override
    public SharedReceiveQueue createSrq(ProtectionZone pz, SrqAttributes attributes) {
        throw notHere("dat_srq_create");
    }

    @Override
    public void lmrSyncRdmaRead(List<LmrTriplet> segments) {
        throw notHere("dat_lmr_sync_rdma_read");
    }

    @Override
    public void lmrSyncRdmaWrite(List<LmrTriplet> segments) {
        throw notHere("dat_lmr_sync_rdma_write");
    }

    @Override
    public HandleType handleType() {
        check();
        return HandleType.IA;
    }

    @Override
    public synchronized void setConsumerContext(Object context) {
        check();
        this.context = context;
    }

    @Override
    public synchronized Object consumerContext() {
        check();
        return context;
    }

    @Override
    public synchronized boolean isFreed() {
        return freed;
    }
}
