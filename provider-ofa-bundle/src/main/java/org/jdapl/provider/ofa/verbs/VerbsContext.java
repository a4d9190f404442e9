package org.jdapl.provider.ofa.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.jdapl.provider.ofa.verbs.Structs.IbvContext;
import org.jdapl.provider.ofa.verbs.Structs.IbvContextOps;

/**
 * An open {@code struct ibv_context} with the verbs that verbs.h defines static inline: they call
 * the provider's function pointers in {@code ibv_context.ops}, and so do these, through downcall
 * handles made once when the context is wrapped.
 */
public final class VerbsContext {
    private static final FunctionDescriptor POST = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor POLL_CQ = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    private static final FunctionDescriptor REQ_NOTIFY_CQ = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor ALLOC_MW = FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor DEALLOC_MW = FunctionDescriptor.of(JAVA_INT, ADDRESS);

    /*
     * The data-path verbs through downcall handles that take the function pointer as their first
     * argument: one constant handle per signature, which the JIT links like a direct call. Their
     * pointer arguments are passed as 64-bit integers, as the C calling conventions of the 64-bit
     * platforms pass pointers: a MemorySegment argument is checked and its arena acquired and
     * released around every call, which the data path does not need (the memory's owner frees it
     * only after its last call, and its lock orders the two).
     */
    private static final MethodHandle POST_CALL = NativeLibrary.dataPath(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle POLL_CQ_CALL = NativeLibrary.dataPath(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG));

    private final MemorySegment context;
    private final MemorySegment postSend;
    private final MemorySegment postRecv;
    private final MemorySegment pollCq;
    private final MethodHandle reqNotifyCq;
    private final MethodHandle allocMw;
    private final MethodHandle deallocMw;
    private final MethodHandle bindMw;
    private final MemorySegment postSrqRecv;

    /** Wraps an open context and reads its ops. */
    public VerbsContext(MemorySegment context) {
        this.context = context.reinterpret(IbvContext.S.size());
        MemorySegment ops = IbvContext.OPS.slice(this.context, IbvContextOps.S.size());
        postSend = dataPath(IbvContextOps.POST_SEND.getPointer(ops));
        postRecv = dataPath(IbvContextOps.POST_RECV.getPointer(ops));
        pollCq = dataPath(IbvContextOps.POLL_CQ.getPointer(ops));
        reqNotifyCq = handle(IbvContextOps.REQ_NOTIFY_CQ.getPointer(ops), REQ_NOTIFY_CQ);
        allocMw = handle(IbvContextOps.ALLOC_MW.getPointer(ops), ALLOC_MW);
        deallocMw = handle(IbvContextOps.DEALLOC_MW.getPointer(ops), DEALLOC_MW);
        bindMw = handle(IbvContextOps.BIND_MW.getPointer(ops), POST);
        postSrqRecv = dataPath(IbvContextOps.POST_SRQ_RECV.getPointer(ops));
    }

    /**
     * A data-path buffer (work requests, gather lists, work completions) seen without its arena, so
     * that its accesses skip the arena's liveness check. Only for buffers whose owner orders every
     * access before the arena's close under its own lock.
     */
    public static MemorySegment dataPathView(MemorySegment allocated) {
        return MemorySegment.ofAddress(allocated.address()).reinterpret(allocated.byteSize());
    }

    private static MemorySegment dataPath(MemorySegment function) {
        return function.equals(MemorySegment.NULL) ? null : function;
    }

    private static MethodHandle handle(MemorySegment function, FunctionDescriptor descriptor) {
        return function.equals(MemorySegment.NULL) ? null : NativeLibrary.pointer(function, descriptor);
    }

    /** The {@code struct ibv_context *}. */
    public MemorySegment pointer() {
        return context;
    }

    /** {@code ibv_context.async_fd}. */
    public int asyncFd() {
        return IbvContext.ASYNC_FD.getInt(context);
    }

    /** Whether the provider has {@code ops.alloc_mw} (memory windows). */
    public boolean hasMemoryWindows() {
        return allocMw != null && deallocMw != null;
    }

    /** Whether the data-path verbs are all present (every real provider has them). */
    public boolean hasDataPath() {
        return postSend != null && postRecv != null && pollCq != null && reqNotifyCq != null;
    }

    /**
     * {@code ibv_poll_cq}: up to {@code max} completions into {@code wcs} (an array of
     * {@code struct ibv_wc}); returns how many.
     */
    public int pollCq(long cq, int max, long wcs) {
        int r;
        try {
            r = (int) POLL_CQ_CALL.invokeExact(pollCq, cq, max, wcs);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
        if (r < 0) {
            throw new VerbsException("ibv_poll_cq", -r);
        }
        return r;
    }

    /** {@code ibv_req_notify_cq}: arms the CQ for the next completion (solicited ones only if asked). */
    public void reqNotifyCq(MemorySegment cq, boolean solicitedOnly) {
        int r;
        try {
            r = (int) reqNotifyCq.invokeExact(Errno.capture(), cq, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
        Verbs.check("ibv_req_notify_cq", r);
    }

    /**
     * {@code ibv_post_send}: posts a chain of {@code struct ibv_send_wr}; on failure
     * {@code badWr} (a pointer slot) names the first work request not posted.
     *
     * @return 0 or the errno
     */
    public int postSend(long qp, long wr, long badWr) {
        try {
            return (int) POST_CALL.invokeExact(postSend, qp, wr, badWr);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
    }

    /**
     * {@code ibv_post_recv}: posts a chain of {@code struct ibv_recv_wr}.
     *
     * @return 0 or the errno
     */
    public int postRecv(long qp, long wr, long badWr) {
        try {
            return (int) POST_CALL.invokeExact(postRecv, qp, wr, badWr);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
    }

    /**
     * {@code ibv_post_srq_recv}: posts a chain of {@code struct ibv_recv_wr} to a shared receive queue.
     *
     * @return 0 or the errno
     */
    public int postSrqRecv(long srq, long wr, long badWr) {
        if (postSrqRecv == null) {
            return Errno.EOPNOTSUPP;
        }
        try {
            return (int) POST_CALL.invokeExact(postSrqRecv, srq, wr, badWr);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
    }

    /**
     * {@code ibv_bind_mw} of a type 1 window: posts the bind ({@code struct ibv_mw_bind}) on the send
     * queue of {@code qp}; the provider updates {@code mw->rkey} at once.
     *
     * @return 0 or the errno
     */
    public int bindMw(MemorySegment qp, MemorySegment mw, MemorySegment bind) {
        if (bindMw == null) {
            return Errno.EOPNOTSUPP;
        }
        try {
            return (int) bindMw.invokeExact(Errno.capture(), qp, mw, bind);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
    }

    /**
     * {@code ibv_alloc_mw} of IBV_MW_TYPE_1 (1) or IBV_MW_TYPE_2 (2).
     *
     * @throws VerbsException EOPNOTSUPP if the provider has no memory windows
     */
    public MemorySegment allocMw(MemorySegment pd, int type) {
        if (allocMw == null) {
            throw new VerbsException("ibv_alloc_mw", Errno.EOPNOTSUPP);
        }
        MemorySegment mw;
        try {
            mw = (MemorySegment) allocMw.invokeExact(Errno.capture(), pd, type);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
        return Verbs.notNull("ibv_alloc_mw", mw);
    }

    /** {@code ibv_dealloc_mw}. */
    public void deallocMw(MemorySegment mw) {
        int r;
        try {
            r = (int) deallocMw.invokeExact(Errno.capture(), mw);
        } catch (Throwable t) {
            throw Downcalls.unchecked(t);
        }
        Verbs.check("ibv_dealloc_mw", r);
    }
}
