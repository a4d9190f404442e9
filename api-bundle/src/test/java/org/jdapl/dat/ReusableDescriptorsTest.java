package org.jdapl.dat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/**
 * The API's reusable forms as every provider gets them through default methods: dequeue and wait into
 * a caller-owned {@link EventSlot} (one and a batch), and posts of a pre-built {@link LocalIov}.
 */
class ReusableDescriptorsTest {
    /** An EVD whose only abstract methods answered are dequeue() and waitEvent(timeout, threshold). */
    private static EventDispatcher evdOf(ArrayDeque<DatEvent> queue) {
        InvocationHandler h = (proxy, m, args) -> {
            if (m.isDefault()) {
                return InvocationHandler.invokeDefault(proxy, m, args);
            }
            return switch (m.getName()) {
                case "dequeue" -> Optional.ofNullable(queue.poll());
                case "waitEvent" -> {
                    if (queue.isEmpty()) {
                        throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "empty");
                    }
                    yield queue.poll();
                }
                default -> throw new UnsupportedOperationException(m.getName());
            };
        };
        return (EventDispatcher) Proxy.newProxyInstance(EventDispatcher.class.getClassLoader(),
                new Class<?>[] {EventDispatcher.class}, h);
    }

    private static DatEvent.DtoCompletion dto(EventDispatcher evd, long cookie) {
        return new DatEvent.DtoCompletion(evd, null, cookie, DtoStatus.SUCCESS, 64, DtoOperation.SEND, 0);
    }

    @Test
    void dequeueFillsTheCallersSlotFieldByFieldAndLeavesItOnEmpty() {
        ArrayDeque<DatEvent> q = new ArrayDeque<>();
        EventDispatcher evd = evdOf(q);
        q.add(dto(evd, 7));
        EventSlot slot = new EventSlot();
        assertTrue(evd.dequeue(slot));
        assertTrue(slot.isDtoCompletion());
        assertEquals(EventNumber.DTO_COMPLETION, slot.number());
        assertEquals(7, slot.cookie());
        assertEquals(DtoStatus.SUCCESS, slot.status());
        assertEquals(64, slot.transferredLength());
        assertEquals(DtoOperation.SEND, slot.operation());
        assertSame(evd, slot.evd());
        assertEquals(dto(evd, 7), slot.event());
        assertFalse(evd.dequeue(slot), "an empty queue is DAT_QUEUE_EMPTY");
        assertEquals(7, slot.cookie(), "the slot keeps its event when nothing was taken");
    }

    @Test
    void aSlotHoldsOtherEventsAsTheirRecords() {
        ArrayDeque<DatEvent> q = new ArrayDeque<>();
        EventDispatcher evd = evdOf(q);
        DatEvent.Software sw = new DatEvent.Software(evd, "x");
        q.add(sw);
        EventSlot slot = new EventSlot();
        slot.setDtoCompletion(evd, null, 1, DtoStatus.SUCCESS, 1, DtoOperation.RECEIVE, 0);
        assertTrue(evd.dequeue(slot));
        assertFalse(slot.isDtoCompletion());
        assertEquals(EventNumber.SOFTWARE, slot.number());
        assertSame(sw, slot.event());
        assertNull(slot.status());
        assertEquals(0, slot.cookie());
        assertThrows(IllegalStateException.class, () -> new EventSlot().event());
    }

    /**
     * A slot refilled with DTO completions holds the last one whole, whatever it held before (another
     * kind of event, another EVD, status or operation): it stores a field only when it changes.
     */
    @Test
    void aRefilledSlotHoldsTheLastCompletionWhole() {
        EventDispatcher a = evdOf(new ArrayDeque<>());
        EventDispatcher b = evdOf(new ArrayDeque<>());
        EventSlot slot = new EventSlot();
        slot.set(new DatEvent.Software(a, "x"));
        slot.setDtoCompletion(a, null, 1, DtoStatus.SUCCESS, 64, DtoOperation.SEND, 3);
        assertEquals(new DatEvent.DtoCompletion(a, null, 1, DtoStatus.SUCCESS, 64, DtoOperation.SEND, 3),
                slot.event(), "no trace of the software event");
        slot.setDtoCompletion(b, null, 2, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
        assertSame(b, slot.evd());
        assertEquals(new DatEvent.DtoCompletion(b, null, 2, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0),
                slot.event());
        slot.setDtoCompletion(b, null, 3, DtoStatus.SUCCESS, 8, DtoOperation.RECEIVE, 0);
        assertEquals(new DatEvent.DtoCompletion(b, null, 3, DtoStatus.SUCCESS, 8, DtoOperation.RECEIVE, 0),
                slot.event());
    }

    @Test
    void batchDequeueTakesUpToMaxInOrder() {
        ArrayDeque<DatEvent> q = new ArrayDeque<>();
        EventDispatcher evd = evdOf(q);
        for (int i = 0; i < 5; i++) {
            q.add(dto(evd, i));
        }
        EventSlot[] slots = {new EventSlot(), new EventSlot(), new EventSlot()};
        assertEquals(3, evd.dequeue(slots, 3));
        assertEquals(0, slots[0].cookie());
        assertEquals(2, slots[2].cookie());
        assertEquals(2, evd.dequeue(slots, 3));
        assertEquals(4, slots[1].cookie());
        assertEquals(0, evd.dequeue(slots, 3));
        DatException e = assertThrows(DatException.class, () -> evd.dequeue(slots, 4));
        assertEquals(DatReturnType.INVALID_PARAMETER, e.type());
        assertEquals(DatReturnType.INVALID_PARAMETER,
                assertThrows(DatException.class, () -> evd.dequeue(slots, 0)).type());
        assertEquals(DatReturnType.INVALID_PARAMETER,
                assertThrows(DatException.class, () -> evd.dequeue((EventSlot) null)).type());
    }

    @Test
    void waitFillsTheSlot() {
        ArrayDeque<DatEvent> q = new ArrayDeque<>();
        EventDispatcher evd = evdOf(q);
        q.add(dto(evd, 9));
        EventSlot slot = new EventSlot();
        evd.waitEvent(0, 1, slot);
        assertEquals(9, slot.cookie());
        assertEquals(DatReturnType.TIMEOUT_EXPIRED,
                assertThrows(DatException.class, () -> evd.waitEvent(0, 1, slot)).type());
        assertEquals(DatReturnType.INVALID_PARAMETER,
                assertThrows(DatException.class, () -> evd.waitEvent(0, 1, null)).type());
    }

    @Test
    void postsOfALocalIovPassTheSameTripletListEveryTime() {
        List<Object[]> posted = new ArrayList<>();
        InvocationHandler h = (proxy, m, args) -> {
            if (m.isDefault()) {
                return InvocationHandler.invokeDefault(proxy, m, args);
            }
            posted.add(new Object[] {m.getName(), args[0]});
            return null;
        };
        Endpoint ep = (Endpoint) Proxy.newProxyInstance(Endpoint.class.getClassLoader(),
                new Class<?>[] {Endpoint.class}, h);
        LocalIov iov = LocalIov.of(new LmrTriplet(null, 0, 0), new LmrTriplet(null, 0, 0));
        RmrTriplet remote = new RmrTriplet(1, 0, 0);
        ep.postSend(iov, 1, Dat.COMPLETION_DEFAULT);
        ep.postRecv(iov, 1, Dat.COMPLETION_DEFAULT);
        ep.postRdmaWrite(iov, 1, remote, Dat.COMPLETION_DEFAULT);
        ep.postRdmaRead(iov, 1, remote, Dat.COMPLETION_DEFAULT);
        assertEquals(List.of("postSend", "postRecv", "postRdmaWrite", "postRdmaRead"),
                posted.stream().map(p -> p[0]).toList());
        for (Object[] p : posted) {
            assertSame(iov.triplets(), p[1]);
        }
        assertEquals(2, iov.size());
        assertEquals(0, iov.totalLength());
        assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class,
                () -> ep.postSend((LocalIov) null, 1, Dat.COMPLETION_DEFAULT)).type());
    }
}
