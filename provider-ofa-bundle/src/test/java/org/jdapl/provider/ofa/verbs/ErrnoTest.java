package org.jdapl.provider.ofa.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/**
 * The errno capture buffers: one per thread, and nothing of a thread kept once it has ended (REG_06:
 * a provider that goes away leaks nothing, and its threads end with it).
 */
class ErrnoTest {
    @Test
    void eachThreadHasABufferOfItsOwnAndKeepsItAcrossCalls() throws Exception {
        MemorySegment mine = Errno.capture();
        AtomicReference<MemorySegment> other = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> other.set(Errno.capture()));
        t.join(10_000);
        assertNotEquals(mine.address(), other.get().address(), "two threads share a capture buffer");
        assertEquals(mine.address(), Errno.capture().address(), "a thread's buffer changed between calls");
    }

    @Test
    void REG_06_theBufferOfAThreadThatAskedLastIsFreedOnceTheThreadHasEnded() throws Exception {
        System.gc();
        long before = directMemory();
        AtomicReference<WeakReference<Thread>> asked = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            Errno.capture();
            asked.set(new WeakReference<>(Thread.currentThread()));
        });
        t.join(10_000);
        t = null;
        // No other thread asks after it: the buffer goes only if nothing of the ended thread is kept.
        long deadline = System.nanoTime() + 10_000_000_000L;
        while ((directMemory() > before || asked.get().get() != null) && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
        assertNull(asked.get().get(), "the ended thread is still reachable");
        assertTrue(directMemory() <= before, "its capture buffer was not freed: direct memory "
                + before + " -> " + directMemory() + " bytes");
    }

    /** The bytes of native memory the JVM accounts as direct (arena allocations included). */
    private static long directMemory() {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        throw new IllegalStateException("no direct buffer pool");
    }
}
