package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import org.jdapl.dat.Cno;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The poll mark of an EVD ({@link PollMark}): the progress thread takes the EVD as polled while the
 * consumers' poll counter changed within {@link PollMark#POLLING_NANOS} of its clock, and not once a
 * wait began; the clock is given to {@code polledRecently} here, as the progress thread gives its own.
 * Then on an EVD of the tcp provider: its dequeue marks it, a wait on it or on a CNO clears the mark.
 */
class PollMarkTest {
    private static final long T = 123_456_789_000L;

    @Test
    void aPollCountsForAMillisecondOfTheProgressThreadsClockFromTheLookThatSawIt() {
        PollMark m = new PollMark();
        assertFalse(m.polledRecently(T), "no consumer polled yet");
        m.polled();
        assertTrue(m.polledRecently(T), "a poll since the last look");
        assertTrue(m.polledRecently(T + PollMark.POLLING_NANOS - 1), "within the millisecond");
        assertFalse(m.polledRecently(T + PollMark.POLLING_NANOS), "no poll for a millisecond");
    }

    @Test
    void pollsThatKeepComingKeepTheEvdPolledPastTheMillisecond() {
        PollMark m = new PollMark();
        for (int i = 0; i < 10; i++) {
            m.polled();
            assertTrue(m.polledRecently(T + i * PollMark.POLLING_NANOS), "look " + i);
        }
        assertFalse(m.polledRecently(T + 10 * PollMark.POLLING_NANOS), "the polls stopped");
    }

    @Test
    void aWaitClearsTheMarkAtOnceEvenRightAfterAPollAndThePollAfterItMarksAgain() {
        PollMark m = new PollMark();
        m.polled();
        assertTrue(m.polledRecently(T));
        m.consumerSleeps();
        assertFalse(m.polledRecently(T), "the waiter depends on the progress thread");
        m.polled();
        m.polled();
        m.consumerSleeps(); // polls the progress thread has not looked at yet, then a wait
        assertFalse(m.polledRecently(T + 1), "polls before the wait do not count");
        m.polled();
        assertTrue(m.polledRecently(T + 2), "a poll after the wait");
    }

    @Test
    void aDequeueMarksTheEvdAndAWaitOnItOrOnACnoClearsTheMark() {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        try (InterfaceAdapter a = p.open(new IaSpec("a", "tcp lo", "", true, "t"), 8)) {
            Cno cno = a.createCno(null);
            OfiEvd evd = (OfiEvd) a.createEvd(16, cno, EnumSet.of(EvdFlag.DTO));
            assertFalse(evd.pollMark.pollingSinceSleep(), "a new EVD");
            assertTrue(evd.dequeue().isEmpty());
            assertTrue(evd.pollMark.pollingSinceSleep(), "a dequeue marks the EVD");
            DatException e = assertThrows(DatException.class, () -> evd.waitEvent(0, 1));
            assertEquals(DatReturnType.TIMEOUT_EXPIRED, e.type());
            assertFalse(evd.pollMark.pollingSinceSleep(), "a wait on the EVD clears the mark");
            assertTrue(evd.dequeue().isEmpty());
            assertTrue(evd.pollMark.pollingSinceSleep(), "a dequeue after the wait");
            e = assertThrows(DatException.class, () -> cno.waitCno(0));
            assertEquals(DatReturnType.TIMEOUT_EXPIRED, e.type());
            assertFalse(evd.pollMark.pollingSinceSleep(), "a wait on a CNO clears the mark");
            evd.free();
            cno.free();
        }
    }
}
