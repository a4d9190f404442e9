package org.jdapl.provider.emu;

import java.util.List;
import java.util.Set;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.RmrTriplet;

/** A posted DTO or RMR bind, waiting in an EP's receive or request queue until it completes once. */
public abstract sealed class WorkRequest {
    /** The cookie (not final: a recycled receive takes a new one, see {@link Recv#reuse}). */
    public long cookie;
    /** The completion flags as a bit set of their ordinals (no copy of the caller's set is kept). */
    private int flagBits;
    /** The sequence number of the request's last transmission on a TCP connection. */
    public long seq;
    private boolean completed;

    WorkRequest(long cookie, Set<CompletionFlag> flags) {
        this.cookie = cookie;
        this.flagBits = bitsOf(flags);
    }

    private static final CompletionFlag[] FLAGS = CompletionFlag.values();

    /** {@code flags} as a bit set of their ordinals (asked flag by flag: no iterator is made). */
    static int bitsOf(Set<CompletionFlag> flags) {
        int bits = 0;
        if (!flags.isEmpty()) {
            for (CompletionFlag f : FLAGS) {
                if (flags.contains(f)) {
                    bits |= 1 << f.ordinal();
                }
            }
        }
        return bits;
    }

    /** Whether the request was posted with {@code flag}. */
    public final boolean has(CompletionFlag flag) {
        return has(flagBits, flag);
    }

    /** Whether the flag bits {@code bits} (see {@link #flagBits()}) hold {@code flag}. */
    static boolean has(int bits, CompletionFlag flag) {
        return (bits & (1 << flag.ordinal())) != 0;
    }

    /** The completion flags as a bit set of their ordinals. */
    public final int flagBits() {
        return flagBits;
    }

    abstract DtoOperation operation();

    /** Makes the request new again with {@code bits} as its flags (a recycled request). */
    void reset(int bits) {
        this.flagBits = bits;
        this.completed = false;
        this.seq = 0;
    }

    /** Marks the request completed; a second completion is a provider bug and fails loudly. */
    public void markCompleted() {
        checkNotCompleted();
        completed = true;
    }

    /** Fails loudly if the request completed already. */
    public void checkNotCompleted() {
        if (completed) {
            throw new IllegalStateException("work request " + cookie + " completed twice");
        }
    }

    /**
     * A posted receive: the segments a message is scattered into. One that a loopback send took at
     * once and completed from the values its ring keeps was seen by no one else; its ring hands it back
     * to the EP's next post ({@link RecvRing#takeSpare}), which {@link #reuse}s it, so that a steady
     * ping-pong allocates no receive.
     */
    public static final class Recv extends WorkRequest {
        public List<LmrTriplet> iov;
        long capacity;

        Recv(List<LmrTriplet> iov, long capacity, long cookie, Set<CompletionFlag> flags) {
            super(cookie, flags);
            this.iov = iov;
            this.capacity = capacity;
        }

        /** This recycled receive as a new one (by its poster, before it is published in a ring). */
        Recv reuse(List<LmrTriplet> newIov, long newCapacity, long newCookie, Set<CompletionFlag> flags) {
            this.iov = newIov;
            this.capacity = newCapacity;
            this.cookie = newCookie;
            reset(bitsOf(flags));
            return this;
        }

        @Override
        DtoOperation operation() {
            return DtoOperation.RECEIVE;
        }
    }

    /**
     * A send, optionally invalidating an RMR context at the peer. One that completed where nothing
     * refers to it any more (answered on a tcp connection, its RNR timer not armed) is the EP's spare
     * ({@link EpQueues#recycle}), which its next post {@link #reuse}s.
     */
    public static final class Send extends WorkRequest {
        public List<LmrTriplet> iov;
        public long length;
        public boolean invalidate;
        public int rmrContext;
        public long rnrDeadline;
        public boolean rnrTimerArmed;
        /** On TCP: a receive may have been posted at the peer since the last RNR NAK; try again. */
        public boolean rnrRetry;

        Send(List<LmrTriplet> iov, long length, long cookie, Set<CompletionFlag> flags, boolean invalidate,
             int rmrContext) {
            super(cookie, flags);
            this.iov = iov;
            this.length = length;
            this.invalidate = invalidate;
            this.rmrContext = rmrContext;
        }

        /** This recycled send as a new one (domain lock held, before it is queued). */
        Send reuse(List<LmrTriplet> newIov, long newLength, long newCookie, Set<CompletionFlag> flags,
                   boolean newInvalidate, int newRmrContext) {
            this.iov = newIov;
            this.length = newLength;
            this.cookie = newCookie;
            this.invalidate = newInvalidate;
            this.rmrContext = newRmrContext;
            this.rnrDeadline = 0;
            this.rnrRetry = false;
            reset(bitsOf(flags));
            return this;
        }

        @Override
        DtoOperation operation() {
            return DtoOperation.SEND;
        }
    }

    /**
     * An RDMA Write ({@code read} false) or Read. The local side is either segments of LMRs or, for
     * a read into an RMR, a triplet naming one of the local IA's own contexts. One that completed on a
     * tcp connection is the EP's spare ({@link EpQueues#recycle}), which its next post {@link #reuse}s.
     */
    public static final class Rdma extends WorkRequest {
        public boolean read;
        public List<LmrTriplet> iov;
        public RmrTriplet localTarget;
        public RmrTriplet remote;
        public long length;

        Rdma(boolean read, List<LmrTriplet> iov, RmrTriplet localTarget, RmrTriplet remote, long length, long cookie,
             Set<CompletionFlag> flags) {
            super(cookie, flags);
            this.read = read;
            this.iov = iov;
            this.localTarget = localTarget;
            this.remote = remote;
            this.length = length;
        }

        /** This recycled RDMA as a new one (domain lock held, before it is queued). */
        Rdma reuse(boolean newRead, List<LmrTriplet> newIov, RmrTriplet newLocalTarget, RmrTriplet newRemote,
                   long newLength, long newCookie, Set<CompletionFlag> flags) {
            this.read = newRead;
            this.iov = newIov;
            this.localTarget = newLocalTarget;
            this.remote = newRemote;
            this.length = newLength;
            this.cookie = newCookie;
            reset(bitsOf(flags));
            return this;
        }

        @Override
        DtoOperation operation() {
            return read ? DtoOperation.RDMA_READ : DtoOperation.RDMA_WRITE;
        }
    }

    /** An RMR bind or unbind; its completion is an RMR bind completion event. */
    public static final class Bind extends WorkRequest {
        final EmuRmr rmr;
        final EmuRmr.Binding binding;

        Bind(EmuRmr rmr, EmuRmr.Binding binding, long cookie, Set<CompletionFlag> flags) {
            super(cookie, flags);
            this.rmr = rmr;
            this.binding = binding;
        }

        @Override
        DtoOperation operation() {
            return DtoOperation.BIND_MW;
        }
    }

    /**
     * One of OFED's extended DTOs: a fetch-and-add or compare-and-swap of the 64 bits at {@code remote}
     * into the 8 local bytes {@code iov}, or an RDMA Write with immediate data. Its completion is an
     * extended one ({@link EmuEp#completeRequest}), a flush on disconnect included, once.
     *
     * <p>Behaviours: EXT_07.
     */
    public static final class Ext extends WorkRequest {
        public final ExtensionType type;
        public final List<LmrTriplet> iov;
        public final RmrTriplet remote;
        public final long length;
        /** The value added, or compared. */
        public final long operand;
        /** The value swapped in. */
        public final long swap;
        public final int immediateData;
        /** When the RNR window of an RDMA Write with immediate data ends (0: not started). */
        public long rnrDeadline;
        public boolean rnrTimerArmed;
        /** On TCP: a receive may have been posted at the peer since the last RNR NAK; try again. */
        public boolean rnrRetry;

        Ext(ExtensionType type, List<LmrTriplet> iov, RmrTriplet remote, long length, long operand, long swap,
            int immediateData, long cookie, Set<CompletionFlag> flags) {
            super(cookie, flags);
            this.type = type;
            this.iov = iov;
            this.remote = remote;
            this.length = length;
            this.operand = operand;
            this.swap = swap;
            this.immediateData = immediateData;
        }

        @Override
        DtoOperation operation() {
            return type == ExtensionType.RDMA_WRITE_IMMED ? DtoOperation.RDMA_WRITE : DtoOperation.RDMA_READ;
        }
    }
}
