package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

/** Posting from several threads while both sides disconnect: every DTO completes once, in order per direction. */
@Timeout(60)
class ConcurrencyTest {

    @RepeatedTest(10)
    void postersRacingSimultaneousDisconnectsCompleteEveryDtoOnceInOrder() throws Exception {
        try (Fixture f = new Fixture(100_000)) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion[] src = {f.a.lmr(f.memory(4096)), f.b.lmr(f.memory(4096))};
            LocalMemoryRegion[] sink = {f.a.lmr(f.memory(1 << 20)), f.b.lmr(f.memory(1 << 20))};
            Map<Endpoint, List<Long>> posted = new HashMap<>();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int side = 0; side < 2; side++) {
                Endpoint ep = eps[side];
                LocalMemoryRegion s = src[side];
                LocalMemoryRegion k = sink[side];
                List<Long> cookies = new ArrayList<>();
                posted.put(ep, cookies);
                threads.add(Thread.ofPlatform().start(() -> {
                    await(go);
                    try {
                        for (long i = 0; i < 2000; i++) {
                            ep.postRecv(iov(k, (i % 1000) * 512, 512), 1_000_000 + i, none());
                            cookies.add(1_000_000 + i);
                            ep.postSend(iov(s, 0, 256), i, none());
                            cookies.add(i);
                        }
                    } catch (DatException e) {
                        // the connection went away under the poster: posting stops
                    }
                }));
            }
            go.countDown();
            Thread.sleep(2);
            Thread d1 = Thread.ofPlatform().start(() -> eps[0].disconnect(CloseFlag.GRACEFUL));
            Thread d2 = Thread.ofPlatform().start(() -> eps[1].disconnect(CloseFlag.ABRUPT));
            for (Thread t : threads) {
                t.join(20_000);
            }
            d1.join(20_000);
            d2.join(20_000);
            check(f.a, eps[0], posted.get(eps[0]));
            check(f.b, eps[1], posted.get(eps[1]));
        }
    }

    private static void check(Fixture.Side side, Endpoint ep, List<Long> cookies) {
        Map<Long, DtoStatus> seen = new HashMap<>();
        long lastSend = -1;
        long lastRecv = -1;
        boolean sendFailed = false;
        boolean recvFailed = false;
        int disconnects = 0;
        while (seen.size() < cookies.size()) {
            DatEvent e = side.next();
            if (e instanceof DatEvent.Connection c) {
                assertTrue(c.number() == EventNumber.CONNECTION_DISCONNECTED, c.toString());
                disconnects++;
                continue;
            }
            DatEvent.DtoCompletion d = (DatEvent.DtoCompletion) e;
            assertEquals(null, seen.put(d.cookie(), d.status()), "completed twice: " + d.cookie());
            boolean recv = d.cookie() >= 1_000_000;
            boolean ok = d.status() == DtoStatus.SUCCESS;
            if (recv) {
                assertTrue(d.cookie() > lastRecv);
                lastRecv = d.cookie();
                assertTrue(!(recvFailed && ok), "receive success after failure");
                recvFailed |= !ok;
            } else {
                assertTrue(d.cookie() > lastSend);
                lastSend = d.cookie();
                assertTrue(!(sendFailed && ok), "send success after failure");
                sendFailed |= !ok;
            }
        }
        while (side.evd.count() > 0) {
            DatEvent e = side.evd.dequeue().orElseThrow();
            assertTrue(e instanceof DatEvent.Connection, "extra event " + e);
            disconnects++;
        }
        assertEquals(1, disconnects, "DISCONNECTED events");
        assertEquals(cookies.size(), seen.size());
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
