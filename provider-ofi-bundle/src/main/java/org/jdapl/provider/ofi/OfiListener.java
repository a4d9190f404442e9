package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.CM_ENTRY_INFO;
import static org.jdapl.provider.ofi.fabric.FiLayouts.INFO_SRC_ADDR;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiInfo;

/**
 * The listener of a service point on MSG endpoints: {@code fi_passive_ep} on the IA's address with
 * the connection qualifier's port, bound to the IA's EQ, {@code fi_listen}. Each {@code FI_CONNREQ}
 * becomes a CR ({@link MsgCr}, owning the entry's {@code fi_info}) and a CONNECTION_REQUEST event on
 * the service point's EVD. A port already listened on fails CONN_QUAL_IN_USE.
 *
 * <p>Behaviours: OBJ_06, CONN_11.
 */
final class OfiListener implements OfiServicePoint.Listener, OfiIa.CmTarget {
    private final OfiServicePoint sp;
    private final OfiIa ia;
    final long pep;
    private final long key;
    /** The CRs of this listener not yet answered or dropped. */
    private int requests;
    /** The service point is done with the listener: the passive endpoint closes with its last CR. */
    private boolean closing;
    /** The passive endpoint is closed. */
    private boolean closed;

    /** Listens for {@code sp} on the port of {@code qual[0]}; 0 there is replaced by the port chosen. */
    OfiListener(OfiServicePoint sp, long[] qual) {
        this.sp = sp;
        this.ia = sp.ia;
        long connQual = qual[0];
        key = ia.nextId();
        int port = OfiIa.port(connQual);
        Fi fi = Fi.get();
        long info = fi.dupinfo(ia.info);
        long p = 0;
        try (Arena a = Arena.ofConfined()) {
            long src = FiCalls.word(info + INFO_SRC_ADDR);
            FiInfo.putSockaddr(src, new InetSocketAddress(ia.address.getAddress(), port));
            p = FiCalls.passiveEp(ia.fabric, info, key);
            FiCalls.bind(p, ia.eq, 0);
            int rc = FiCalls.listen(p);
            if (rc == -98) {
                throw new DatException(DatReturnType.CONN_QUAL_IN_USE, "connection qualifier " + connQual + " (port "
                        + port + ") is in use");
            }
            FiException.check(rc, "fi_listen");
            if (port == 0) {
                MemorySegment sa = a.allocate(128, 8);
                MemorySegment len = a.allocate(8, 8);
                len.set(ValueLayout.JAVA_LONG, 0, 128);
                FiException.check(FiCalls.getname(p, sa.address(), len.address()), "fi_getname");
                connQual = FiInfo.sockaddr(sa.address(), len.get(ValueLayout.JAVA_LONG, 0)).getPort();
            }
        } catch (FiException e) {
            OfiIa.closeQuietly(p);
            throw e.errno() == 98 ? new DatException(DatReturnType.CONN_QUAL_IN_USE, e.getMessage()) : FiErrors.toDat(e);
        } catch (RuntimeException e) {
            OfiIa.closeQuietly(p);
            throw e;
        } finally {
            fi.freeinfo(info);
        }
        this.pep = p;
        qual[0] = connQual;
        ia.cmTargets.put(key, this);
    }

    @Override
    public void cmEvent(int event, long entry, long length) {
        long info = FiCalls.word(entry + CM_ENTRY_INFO);
        if (event != Fi.FI_CONNREQ) {
            return;
        }
        byte[] pd = OfiEp.bytes(entry + 16, length - 16);
        if (!sp.request(reserved -> new MsgCr(sp, this, info, pd, FiInfo.destAddr(info), reserved))) {
            Fi.get().freeinfo(info);
        }
    }

    @Override
    public void cmError(int err, byte[] data) {
        // A passive endpoint reports nothing the consumer could act on.
    }

    @Override
    public void stop() {
        ia.cmTargets.remove(key);
    }

    /** A request of this listener's became a CR ({@link MsgCr}). */
    synchronized void requestOpened() {
        requests++;
    }

    /** A CR of this listener's was answered or dropped; the last one closes a closing listener. */
    synchronized void requestClosed() {
        requests--;
        if (closing && requests == 0) {
            closePep();
        }
    }

    /** {@code fi_reject} of a request that came through this listener ({@code -FI_EBADF} once it is closed). */
    synchronized int reject(long handle, long param, long len) {
        return closed ? -9 : FiCalls.reject(pep, handle, param, len);
    }

    /**
     * Closes the passive endpoint once no CR of it is left: a PSP freed before its requests are
     * answered (FREE_07 rejects such a request; an IA's abrupt close frees its objects in no set
     * order) keeps it for their {@code fi_reject}, which reads the passive endpoint's ops table.
     */
    @Override
    public synchronized void close() {
        closing = true;
        if (requests == 0) {
            closePep();
        }
    }

    private void closePep() {
        if (!closed) {
            closed = true;
            OfiIa.closeQuietly(pep);
        }
    }
}
