package org.jdapl.provider.ofi.fabric;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The {@code static inline} calls of libfabric's headers ({@code fi_domain}, {@code fi_endpoint},
 * {@code fi_send}, {@code fi_cq_read}, {@code fi_close}, ...) made as the headers make them: read the
 * object's ops table, check that the table is large enough to hold the function and that it is set
 * ({@code FI_CHECK_OP}: {@code ops->size > offsetof(ops, op) && ops->op}), and call the function
 * pointer through one constant downcall handle per C signature. Pointers go as 64-bit addresses; a
 * function the provider lacks throws {@link FiException} with {@code -FI_ENOSYS}, never crashes.
 */
public final class FiCalls {
    private FiCalls() {
    }

    /** The whole address space, to read and write native structs by address. */
    public static final MemorySegment MEM = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static final Linker L = Linker.nativeLinker();
    private static final Linker.Option CRITICAL = Linker.Option.critical(false);

    private static MethodHandle h(FunctionDescriptor d) {
        return L.downcallHandle(d);
    }

    private static MethodHandle hc(FunctionDescriptor d) {
        return L.downcallHandle(d, CRITICAL);
    }

    // One handle per C signature (J = pointer or 64-bit integer, I = int).
    private static final MethodHandle I_J = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
    private static final MethodHandle I_JJ = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle I_JJJ = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle I_JJJJ = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle I_JIJ = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG));
    private static final MethodHandle I_JIIJJ = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT,
            JAVA_LONG, JAVA_LONG));
    private static final MethodHandle J_JJ = h(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle I_JJI = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle I_MR_REG = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    // The data path: critical calls (no thread state transition), as the verbs provider's posts.
    private static final MethodHandle J_JJJJJJ = hc(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle J_JJJJJJJJ = hc(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle J_JJJJJJJ = hc(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle J_JJJ = hc(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle J_JJJJJ = h(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG));

    /** Reads a pointer or 64-bit member. */
    public static long word(long addr) {
        return MEM.get(JAVA_LONG, addr);
    }

    /** Reads a 32-bit member. */
    public static int i32(long addr) {
        return MEM.get(JAVA_INT, addr);
    }

    /**
     * {@code FI_CHECK_OP}: the function at {@code offset} of the ops table at {@code ops}, after
     * checking that the table holds it ({@code size}) and that it is set.
     */
    public static MemorySegment op(long ops, long offset, String name) {
        if (ops == 0 || word(ops + OPS_SIZE) <= offset) {
            throw new FiException(-38, name + " (the provider's ops table has no such function)");
        }
        long fn = word(ops + offset);
        if (fn == 0) {
            throw new FiException(-38, name + " (not offered by the provider)");
        }
        return MemorySegment.ofAddress(fn);
    }

    private static long fidOps(long fid) {
        return word(fid + FID_OPS);
    }

    /**
     * What a failed call throws: a missing function's {@link FiException} as it is (the caller maps it
     * to a DatException), an Error as it is; a downcall throws nothing else.
     */
    private static RuntimeException fail(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    /** {@code fi_close(fid)}. */
    public static void close(long fid) {
        int rc;
        try {
            rc = (int) I_J.invokeExact(op(fidOps(fid), OPS_CLOSE, "fi_close"), fid);
        } catch (Throwable t) {
            throw fail(t);
        }
        FiException.check(rc, "fi_close");
    }

    /** {@code fi_[ep_]bind(fid, bfid, flags)}. */
    public static void bind(long fid, long bfid, long flags) {
        int rc;
        try {
            rc = (int) I_JJJ.invokeExact(op(fidOps(fid), OPS_BIND, "fi_bind"), fid, bfid, flags);
        } catch (Throwable t) {
            throw fail(t);
        }
        FiException.check(rc, "fi_bind");
    }

    /** {@code fi_control(fid, command, arg)}; see {@link #enable}. */
    public static int control(long fid, int command, long arg) {
        try {
            return (int) I_JIJ.invokeExact(op(fidOps(fid), OPS_CONTROL, "fi_control"), fid, command, arg);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_enable(ep)}: {@code fi_control(ep, FI_ENABLE, NULL)}. */
    public static void enable(long ep) {
        FiException.check(control(ep, Fi.FI_ENABLE, 0), "fi_enable");
    }

    private static long create4(long ops, long offset, String name, long obj, long arg, long context) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) I_JJJJ.invokeExact(op(ops, offset, name), obj, arg, out.address(), context);
            FiException.check(rc, name);
            return out.get(JAVA_LONG, 0);
        } catch (FiException e) {
            throw e;
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_domain(fabric, info, &domain, context)}. */
    public static long domain(long fabric, long info, long context) {
        return create4(word(fabric + FABRIC_OPS), OPS_FABRIC_DOMAIN, "fi_domain", fabric, info, context);
    }

    /** {@code fi_passive_ep(fabric, info, &pep, context)}. */
    public static long passiveEp(long fabric, long info, long context) {
        return create4(word(fabric + FABRIC_OPS), OPS_FABRIC_PASSIVE_EP, "fi_passive_ep", fabric, info, context);
    }

    /** {@code fi_eq_open(fabric, attr, &eq, context)}. */
    public static long eqOpen(long fabric, long attr, long context) {
        return create4(word(fabric + FABRIC_OPS), OPS_FABRIC_EQ_OPEN, "fi_eq_open", fabric, attr, context);
    }

    /** {@code fi_trywait(fabric, fids, count)}: 0 when the fids' wait objects may be waited on. */
    public static int trywait(long fabric, long fids, int count) {
        return trywait(trywaitFn(fabric), fabric, fids, count);
    }

    /**
     * The fabric's {@code fi_trywait}, resolved once: an object's ops table never changes, and a call
     * through the resolved function allocates nothing in any compilation tier (a progress thread that
     * idles runs its loop too seldom for the JIT to remove {@link #op}'s segment).
     */
    public static MemorySegment trywaitFn(long fabric) {
        return op(word(fabric + FABRIC_OPS), OPS_FABRIC_TRYWAIT, "fi_trywait");
    }

    /** {@code fi_trywait} through its function {@code fn} ({@link #trywaitFn}). */
    public static int trywait(MemorySegment fn, long fabric, long fids, int count) {
        try {
            return (int) I_JJI.invokeExact(fn, fabric, fids, count);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_cq_open(domain, attr, &cq, context)}. */
    public static long cqOpen(long domain, long attr, long context) {
        return create4(word(domain + DOMAIN_OPS), OPS_DOMAIN_CQ_OPEN, "fi_cq_open", domain, attr, context);
    }

    /** {@code fi_srx_context(domain, rx_attr, &rx_ep, context)}: a shared receive context. */
    public static long srxContext(long domain, long attr, long context) {
        return create4(word(domain + DOMAIN_OPS), OPS_DOMAIN_SRX_CTX, "fi_srx_context", domain, attr, context);
    }

    /** {@code fi_endpoint(domain, info, &ep, context)}. */
    public static long endpoint(long domain, long info, long context) {
        return create4(word(domain + DOMAIN_OPS), OPS_DOMAIN_ENDPOINT, "fi_endpoint", domain, info, context);
    }

    /** {@code fi_mr_reg(domain, buf, len, access, offset, requested_key, flags, &mr, context)}. */
    public static long mrReg(long domain, long buf, long len, long access, long offset, long key, long context) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) I_MR_REG.invokeExact(op(word(domain + DOMAIN_MR), OPS_MR_REG, "fi_mr_reg"), domain, buf, len,
                    access, offset, key, 0L, out.address(), context);
            FiException.check(rc, "fi_mr_reg");
            return out.get(JAVA_LONG, 0);
        } catch (FiException e) {
            throw e;
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_getopt(fid, level, optname, optval, optlen)} of an EP or PEP. */
    public static int getopt(long ep, int level, int name, long optval, long optlen) {
        try {
            return (int) I_JIIJJ.invokeExact(op(word(ep + EP_OPS), OPS_EP_GETOPT, "fi_getopt"), ep, level, name,
                    optval, optlen);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_cancel(fid, context)} of an EP: its operation of {@code context} completes {@code FI_ECANCELED}. */
    public static long cancel(long ep, long context) {
        try {
            return (long) J_JJ.invokeExact(op(word(ep + EP_OPS), OPS_EP_CANCEL, "fi_cancel"), ep, context);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    private static long cm(long fid) {
        return word(fid + EP_CM);
    }

    /** {@code fi_getname(fid, addr, &addrlen)} of an EP or PEP (both have cm at the same offset). */
    public static int getname(long fid, long addr, long addrlen) {
        try {
            return (int) I_JJJ.invokeExact(op(cm(fid), OPS_CM_GETNAME, "fi_getname"), fid, addr, addrlen);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_getpeer(ep, addr, &addrlen)}. */
    public static int getpeer(long ep, long addr, long addrlen) {
        try {
            return (int) I_JJJ.invokeExact(op(cm(ep), OPS_CM_GETPEER, "fi_getpeer"), ep, addr, addrlen);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_connect(ep, addr, param, paramlen)}. */
    public static int connect(long ep, long addr, long param, long len) {
        try {
            return (int) I_JJJJ.invokeExact(op(cm(ep), OPS_CM_CONNECT, "fi_connect"), ep, addr, param, len);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_listen(pep)}. */
    public static int listen(long pep) {
        try {
            return (int) I_J.invokeExact(op(word(pep + PEP_CM), OPS_CM_LISTEN, "fi_listen"), pep);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_accept(ep, param, paramlen)}. */
    public static int accept(long ep, long param, long len) {
        try {
            return (int) I_JJJ.invokeExact(op(cm(ep), OPS_CM_ACCEPT, "fi_accept"), ep, param, len);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_reject(pep, handle, param, paramlen)}. */
    public static int reject(long pep, long handle, long param, long len) {
        try {
            return (int) I_JJJJ.invokeExact(op(word(pep + PEP_CM), OPS_CM_REJECT, "fi_reject"), pep, handle, param, len);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_shutdown(ep, flags)}. */
    public static int shutdown(long ep, long flags) {
        try {
            return (int) I_JJ.invokeExact(op(cm(ep), OPS_CM_SHUTDOWN, "fi_shutdown"), ep, flags);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_sendv(ep, iov, desc, count, dest_addr, context)}; -FI_EAGAIN when the queue is full. */
    public static long sendv(long ep, long iov, long desc, long count, long context) {
        try {
            return (long) J_JJJJJJ.invokeExact(op(word(ep + EP_MSG), OPS_MSG_SENDV, "fi_sendv"), ep, iov, desc, count,
                    0L, context);
        } catch (Throwable t) {
            throw fail(t);
        }
    }


    /** {@code fi_senddata(ep, buf, len, desc, data, dest_addr, context)}: a message with remote CQ data. */
    /**
     * A MSG endpoint's data-path functions ({@code fi_sendmsg}, {@code fi_recvv}, {@code fi_writemsg},
     * {@code fi_readmsg}), resolved once from its ops tables (checked as {@code FI_CHECK_OP} does): a
     * call through them reads no table and allocates nothing. A function the provider lacks fails
     * when it is called, not when it is resolved.
     */
    public static final class EpFunctions {
        /** The endpoint. */
        public final long ep;
        private final MemorySegment sendmsg;
        private final MemorySegment recvv;
        private final MemorySegment writemsg;
        private final MemorySegment readmsg;

        /** {@code cached} if it is the endpoint {@code ep}'s, else its functions resolved now. */
        public static EpFunctions of(EpFunctions cached, long ep) {
            return cached != null && cached.ep == ep ? cached : new EpFunctions(ep);
        }

        public EpFunctions(long ep) {
            this.ep = ep;
            sendmsg = resolve(word(ep + EP_MSG), OPS_MSG_SENDMSG, "fi_sendmsg");
            recvv = resolve(word(ep + EP_MSG), OPS_MSG_RECVV, "fi_recvv");
            writemsg = resolve(word(ep + EP_RMA), OPS_RMA_WRITEMSG, "fi_writemsg");
            readmsg = resolve(word(ep + EP_RMA), OPS_RMA_READMSG, "fi_readmsg");
        }

        private static MemorySegment resolve(long ops, long offset, String name) {
            try {
                return op(ops, offset, name);
            } catch (FiException e) {
                return MemorySegment.NULL;
            }
        }

        private static MemorySegment present(MemorySegment fn, String name) {
            if (fn.address() == 0) {
                throw new FiException(-38, name + " (not offered by the provider)");
            }
            return fn;
        }

        /** {@code fi_sendmsg(ep, msg, flags)}; -FI_EAGAIN when the queue is full. */
        public long sendmsg(long msg, long flags) {
            try {
                return (long) J_JJJ.invokeExact(present(sendmsg, "fi_sendmsg"), ep, msg, flags);
            } catch (Throwable t) {
                throw fail(t);
            }
        }

        /** {@code fi_recvv(ep, iov, desc, count, 0, context)}. */
        public long recvv(long iov, long desc, long count, long context) {
            try {
                return (long) J_JJJJJJ.invokeExact(present(recvv, "fi_recvv"), ep, iov, desc, count, 0L, context);
            } catch (Throwable t) {
                throw fail(t);
            }
        }

        /** {@code fi_writemsg(ep, msg, flags)}. */
        public long writemsg(long msg, long flags) {
            try {
                return (long) J_JJJ.invokeExact(present(writemsg, "fi_writemsg"), ep, msg, flags);
            } catch (Throwable t) {
                throw fail(t);
            }
        }

        /** {@code fi_readmsg(ep, msg, flags)}. */
        public long readmsg(long msg, long flags) {
            try {
                return (long) J_JJJ.invokeExact(present(readmsg, "fi_readmsg"), ep, msg, flags);
            } catch (Throwable t) {
                throw fail(t);
            }
        }
    }

    public static long senddata(long ep, long buf, long len, long desc, long data, long context) {
        try {
            return (long) J_JJJJJJJ.invokeExact(op(word(ep + EP_MSG), OPS_MSG_SENDDATA, "fi_senddata"), ep, buf, len,
                    desc, data, 0L, context);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_recvv(ep, iov, desc, count, src_addr, context)}. */
    public static long recvv(long ep, long iov, long desc, long count, long context) {
        try {
            return (long) J_JJJJJJ.invokeExact(op(word(ep + EP_MSG), OPS_MSG_RECVV, "fi_recvv"), ep, iov, desc, count,
                    0L, context);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_writev(ep, iov, desc, count, dest_addr, addr, key, context)}. */
    public static long writev(long ep, long iov, long desc, long count, long addr, long key, long context) {
        try {
            return (long) J_JJJJJJJJ.invokeExact(op(word(ep + EP_RMA), OPS_RMA_WRITEV, "fi_writev"), ep, iov, desc,
                    count, 0L, addr, key, context);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_writemsg(ep, msg, flags)}. */
    public static long writemsg(long ep, long msg, long flags) {
        try {
            return (long) J_JJJ.invokeExact(op(word(ep + EP_RMA), OPS_RMA_WRITEMSG, "fi_writemsg"), ep, msg, flags);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_readv(ep, iov, desc, count, src_addr, addr, key, context)}. */
    public static long readv(long ep, long iov, long desc, long count, long addr, long key, long context) {
        try {
            return (long) J_JJJJJJJJ.invokeExact(op(word(ep + EP_RMA), OPS_RMA_READV, "fi_readv"), ep, iov, desc,
                    count, 0L, addr, key, context);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_cq_read(cq, buf, count)}: entries read, -FI_EAGAIN when empty, -FI_EAVAIL for an error. */
    public static long cqRead(long cq, long buf, long count) {
        return cqRead(cqReadFn(cq), cq, buf, count);
    }

    /** The CQ's {@code fi_cq_read}, resolved once (as {@link #trywaitFn}). */
    public static MemorySegment cqReadFn(long cq) {
        return op(word(cq + CQ_OPS), OPS_CQ_READ, "fi_cq_read");
    }

    /** {@code fi_cq_read} through its function {@code fn} ({@link #cqReadFn}). */
    public static long cqRead(MemorySegment fn, long cq, long buf, long count) {
        try {
            return (long) J_JJJ.invokeExact(fn, cq, buf, count);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_cq_readerr(cq, buf, flags)}. */
    public static long cqReaderr(long cq, long buf, long flags) {
        try {
            return (long) J_JJJ.invokeExact(op(word(cq + CQ_OPS), OPS_CQ_READERR, "fi_cq_readerr"), cq, buf, flags);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_eq_read(eq, &event, buf, len, flags)}. */
    public static long eqRead(long eq, long event, long buf, long len, long flags) {
        return eqRead(eqReadFn(eq), eq, event, buf, len, flags);
    }

    /** The EQ's {@code fi_eq_read}, resolved once (as {@link #trywaitFn}). */
    public static MemorySegment eqReadFn(long eq) {
        return op(word(eq + EQ_OPS), OPS_EQ_READ, "fi_eq_read");
    }

    /** {@code fi_eq_read} through its function {@code fn} ({@link #eqReadFn}). */
    public static long eqRead(MemorySegment fn, long eq, long event, long buf, long len, long flags) {
        try {
            return (long) J_JJJJJ.invokeExact(fn, eq, event, buf, len, flags);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /** {@code fi_eq_readerr(eq, buf, flags)}. */
    public static long eqReaderr(long eq, long buf, long flags) {
        try {
            return (long) J_JJJ.invokeExact(op(word(eq + EQ_OPS), OPS_EQ_READERR, "fi_eq_readerr"), eq, buf, flags);
        } catch (Throwable t) {
            throw fail(t);
        }
    }
}
