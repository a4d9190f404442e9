package org.jdapl.provider.ofa.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The few libc calls the event loop needs: {@code poll}, {@code eventfd}, {@code read},
 * {@code write}, {@code close} and {@code fcntl} (to make the verbs and rdma_cm file descriptors
 * non-blocking).
 */
public final class Libc {
    /** POLLIN. */
    public static final int POLLIN = 0x001;
    /** POLLERR | POLLHUP | POLLNVAL. */
    public static final int POLLERRS = 0x008 | 0x010 | 0x020;

    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 0x800;
    private static final int EFD_CLOEXEC = 0x80000;

    private static final NativeLibrary LIBC = NativeLibrary.libc();
    private static final MethodHandle POLL = LIBC.function("poll",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle EVENTFD = LIBC.function("eventfd",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle READ = LIBC.function("read",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle WRITE = LIBC.function("write",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = LIBC.function("close",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FCNTL = LIBC.function("fcntl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));

    private Libc() {
    }

    /**
     * {@code poll}: waits until one of the descriptors of {@code fds} (an array of struct pollfd) is
     * ready or {@code timeoutMillis} passed (-1: no limit). An interrupted poll returns 0.
     */
    public static int poll(MemorySegment fds, int count, int timeoutMillis) {
        int r;
        try {
            // invokeExact on the constant handle: the event loop polls once per wake-up.
            r = (int) POLL.invokeExact(Errno.capture(), fds, (long) count, timeoutMillis);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
        if (r < 0) {
            int e = Errno.last();
            if (e == Errno.EINTR) {
                return 0;
            }
            throw new VerbsException("poll", e);
        }
        return r;
    }

    /** {@code eventfd(0, EFD_CLOEXEC)}: a descriptor another thread can make readable to wake a poll. */
    public static int eventfd() {
        int fd = (int) Errno.invoke(EVENTFD, 0, EFD_CLOEXEC);
        if (fd < 0) {
            throw new VerbsException("eventfd", Errno.last());
        }
        return fd;
    }

    /** Adds 1 to an eventfd counter. */
    public static void signal(int eventFd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment one = a.allocate(ValueLayout.JAVA_LONG);
            one.set(ValueLayout.JAVA_LONG, 0, 1L);
            long n = (long) WRITE.invokeExact(Errno.capture(), eventFd, one, 8L);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
    }

    /** Reads (and so resets) an eventfd counter. */
    public static void drain(int eventFd) {
        try (Arena a = Arena.ofConfined()) {
            long n = (long) READ.invokeExact(Errno.capture(), eventFd, a.allocate(ValueLayout.JAVA_LONG), 8L);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
    }

    /** {@code close}. */
    public static void close(int fd) {
        Errno.invoke(CLOSE, fd);
    }

    /**
     * Sets O_NONBLOCK on a descriptor.
     *
     * @throws VerbsException if fcntl fails
     */
    public static void setNonBlocking(int fd) {
        int flags = (int) Errno.invoke(FCNTL, fd, F_GETFL, 0);
        if (flags < 0 || (int) Errno.invoke(FCNTL, fd, F_SETFL, flags | O_NONBLOCK) < 0) {
            throw new VerbsException("fcntl(O_NONBLOCK)", Errno.last());
        }
    }
}
