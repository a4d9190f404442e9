package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * An endpoint is bound, enabled and closed with its CQs' locks held ({@link CqReader#withLocked}):
 * on rxm a CQ read progresses every bound endpoint, and one bound but not yet enabled has no core CQ
 * (the JVM died of a SIGSEGV in libfabric.so.1 in CONN_05 on verbs;ofi_rxm, after the kit had
 * interrupted the case's thread at its time-out and the thread went on connecting EPs). An interrupt
 * must not let the task run beside a holder of the lock.
 */
class OfiCqLockTest {
    @Test
    void CONN_05_anInterruptedThreadStillWaitsForTheCqLock() throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        try (InterfaceAdapter a = p.open(new IaSpec("a", "tcp lo", "", true, "t"), 8)) {
            OfiEvd evd = (OfiEvd) a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            AtomicBoolean holding = new AtomicBoolean();
            CountDownLatch held = new CountDownLatch(1);
            Thread holder = Thread.ofPlatform().start(() -> evd.withCqLocked(() -> {
                holding.set(true);
                held.countDown();
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                holding.set(false);
            }));
            assertTrue(held.await(5, TimeUnit.SECONDS), "the holder did not take the CQ's lock");
            AtomicBoolean overlapped = new AtomicBoolean(true);
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            Thread waiter = Thread.ofPlatform().start(() -> {
                Thread.currentThread().interrupt();
                evd.withCqLocked(() -> overlapped.set(holding.get()));
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            });
            waiter.join(5000);
            holder.join(5000);
            assertFalse(overlapped.get(), "the interrupted thread ran its task while another held the CQ's lock");
            assertTrue(stillInterrupted.get(), "the waiter's interrupt was lost");
        }
    }
}
