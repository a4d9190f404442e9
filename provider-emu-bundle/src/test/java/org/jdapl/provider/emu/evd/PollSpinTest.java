package org.jdapl.provider.emu.evd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The spin of a consumer polling an EVD of the tcp fabric before its dequeues block in the sockets. */
class PollSpinTest {
    private static final long US = TimeUnit.MICROSECONDS.toNanos(1);

    @Test
    void answersWithinTheFixedSpinKeepIt() {
        PollSpin spin = new PollSpin();
        assertEquals(PollSpin.MIN_NANOS, spin.spinNanos());
        for (int i = 0; i < 100; i++) {
            spin.episodeEnded(3 * US);
        }
        assertEquals(PollSpin.MIN_NANOS, spin.spinNanos());
    }

    @Test
    void slowerAnswersLengthenTheSpinBeyondThem() {
        PollSpin spin = new PollSpin();
        for (int i = 0; i < 100; i++) {
            spin.episodeEnded(200 * US);
        }
        long s = spin.spinNanos();
        assertTrue(s > 250 * US && s <= 300 * US, "spin " + s / US + " us after answers of 200 us");
        for (int i = 0; i < 100; i++) {
            spin.episodeEnded(PollSpin.MAX_NANOS);
        }
        assertEquals(PollSpin.MAX_NANOS, spin.spinNanos(), "the spin is bounded");
    }

    @Test
    void anEpisodeLongerThanTheMaximumSetsTheSpinBack() {
        PollSpin spin = new PollSpin();
        for (int i = 0; i < 100; i++) {
            spin.episodeEnded(200 * US);
        }
        spin.episodeEnded(PollSpin.MAX_NANOS + 1);
        assertEquals(PollSpin.MIN_NANOS, spin.spinNanos(), "a consumer waiting for input that is not coming sleeps");
    }

    @Test
    void oneSlowAnswerMovesTheSpinPartly() {
        PollSpin spin = new PollSpin();
        spin.episodeEnded(400 * US);
        assertEquals(150 * US, spin.spinNanos(), "a quarter of the way to 400 us, times 1.5");
    }
}
