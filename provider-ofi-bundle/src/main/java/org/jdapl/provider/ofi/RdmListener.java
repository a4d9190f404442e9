package org.jdapl.provider.ofi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.ServicePoint;

/**
 * A service point over RDM endpoints: a control endpoint ({@link RdmChannel}) of its own whose name
 * follows from the connection qualifier (shm: {@code fi_shm://jdapl_psp_<port>}; a socket-address
 * provider: the IA's address and the port), so that a connect finds it. Each REQ becomes a CR
 * ({@link RdmCr}) and a CONNECTION_REQUEST event. On shm, a host-wide lock file per port says which
 * ports are listened on (CONN_QUAL_IN_USE; a connect to a port nobody listens on is refused at once,
 * as TCP's RST); it goes with the process that holds it.
 *
 * <p>Behaviours: OBJ_06, CONN_11.
 */
abstract class RdmListener extends OfiObject implements ServicePoint, RdmChannel.Owner {
    private static final Path LOCKS = Path.of(System.getProperty("java.io.tmpdir"),
            "jdapl-ofi-shm-" + System.getProperty("user.name", "user"));
    private static final Map<Integer, FileLock> HELD = new ConcurrentHashMap<>();

    final OfiEvd evd;
    final long connQual;
    final RdmChannel channel;
    private final int port;

    RdmListener(OfiIa ia, HandleType type, long connQual, OfiEvd evd) {
        super(ia, type);
        this.evd = evd;
        int p = OfiIa.port(connQual);
        if (ia.rdm.named) {
            if (p == 0) {
                p = anyPort();
                connQual = p;
            } else if (!lock(p)) {
                throw new DatException(DatReturnType.CONN_QUAL_IN_USE, "connection qualifier " + connQual
                        + " (shm port " + p + ") is in use");
            }
        }
        RdmChannel c;
        try {
            c = new RdmChannel(ia, ia.rdm.pspAddress(ia.address.getAddress(), p), this);
        } catch (DatException e) {
            unlock(p);
            throw e.type() == DatReturnType.CONN_QUAL_IN_USE || e.getMessage().contains("in use")
                    ? new DatException(DatReturnType.CONN_QUAL_IN_USE, "connection qualifier " + connQual + ": "
                    + e.getMessage()) : e;
        }
        if (p == 0) {
            p = ia.rdm.portOf(c.name);
            connQual = p;
        }
        this.port = p;
        this.channel = c;
        this.connQual = connQual;
        evd.users.incrementAndGet();
        ia.added(this);
    }

    /** Whether a PSP listens on shm port {@code port} in any process of the host. */
    static boolean listening(int port) {
        if (HELD.containsKey(port)) {
            return true;
        }
        Path f = LOCKS.resolve("psp-" + port + ".lock");
        if (!Files.exists(f)) {
            return false;
        }
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
            FileLock l = ch.tryLock();
            if (l == null) {
                return true;
            }
            l.release();
            return false;
        } catch (OverlappingFileLockException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean lock(int port) {
        try {
            Files.createDirectories(LOCKS);
            FileChannel ch = FileChannel.open(LOCKS.resolve("psp-" + port + ".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
            FileLock l;
            try {
                l = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                l = null;
            }
            if (l == null) {
                ch.close();
                return false;
            }
            if (HELD.putIfAbsent(port, l) != null) {
                l.release();
                ch.close();
                return false;
            }
            return true;
        } catch (IOException e) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, "the shm port lock: " + e.getMessage());
        }
    }

    private static void unlock(int port) {
        FileLock l = HELD.remove(port);
        if (l != null) {
            try {
                l.release();
                l.channel().close();
            } catch (IOException e) {
                // the lock goes with the channel
            }
        }
    }

    private static int anyPort() {
        for (int i = 0; i < 20000; i++) {
            int p = 40000 + (int) ((System.nanoTime() + i * 7919L) % 20000);
            if (lock(p)) {
                return p;
            }
        }
        throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, "no free shm port");
    }

    @Override
    public void received(RdmChannel ch, RdmMessage m) {
        if (m.type() != RdmMessage.REQ) {
            return;
        }
        synchronized (this) {
            if (freed) {
                refuse(m);
                return;
            }
            RdmCr cr = new RdmCr(this, m, reservedEp());
            consumed();
            InetAddress peer;
            try {
                byte[] b = {(byte) (m.ip() >>> 24), (byte) (m.ip() >>> 16), (byte) (m.ip() >>> 8), (byte) m.ip()};
                peer = InetAddress.getByAddress(b);
            } catch (UnknownHostException e) {
                throw new AssertionError(e);
            }
            cr.peer = new java.net.InetSocketAddress(peer, m.port());
            evd.enqueue(new DatEvent.ConnectionRequest(evd, this, ia.address, connQual, cr, false));
        }
    }

    /** Answers a request nobody takes: REJECT without the consumer's flag (NON_PEER_REJECTED). */
    void refuse(RdmMessage m) {
        reply(m, 0, null);
    }

    /** Sends a REJECT for the request {@code m} from this listener's endpoint. */
    void reply(RdmMessage m, int flags, byte[] pd) {
        try {
            long to = channel.insert(m.ctl());
            channel.send(to, new RdmMessage(RdmMessage.REJECT, flags, 0, m.src(), 0, 0, channel.name, new byte[0],
                    pd == null ? new byte[0] : pd));
        } catch (DatException e) {
            // the requester is gone
        }
    }

    @Override
    public void sendFailed(RdmChannel ch, int err) {
        // a REJECT that does not arrive: the requester is gone or times out
    }

    /** The EP an RSP reserves, or a PSP's provider-created EP, or null. */
    OfiEp reservedEp() {
        return null;
    }

    /** After a request: an RSP is used up. */
    void consumed() {
    }

    /** A request of this listener was accepted, rejected or dropped. */
    void requestDone() {
    }

    @Override
    public void free() {
        live();
        destroy();
        ia.removed(this);
    }

    @Override
    synchronized void destroy() {
        if (freed) {
            return;
        }
        freed = true;
        evd.users.decrementAndGet();
        closeChannel();
    }

    void closeChannel() {
        channel.close();
        if (ia.rdm.named) {
            unlock(port);
        }
    }

    /** A PSP over RDM. Behaviours: DISC_11, FREE_02, FREE_07. */
    static final class Psp extends RdmListener implements PublicServicePoint {
        private final PspFlag flag;

        Psp(OfiIa ia, long connQual, OfiEvd evd, PspFlag flag) {
            super(ia, HandleType.PSP, connQual, evd);
            this.flag = flag;
        }

        static Psp create(OfiIa ia, long connQual, OfiEvd evd, PspFlag flag) {
            if (flag == null) {
                throw DatException.invalidParameter(3, "null PSP flag");
            }
            return new Psp(ia, connQual, evd, flag);
        }

        @Override
        OfiEp reservedEp() {
            if (flag != PspFlag.PROVIDER) {
                return null;
            }
            OfiEp ep = new OfiEp(ia, null, null, null, evd.has(EvdFlag.CONNECTION) ? evd : null, EpAttributes.defaults());
            ep.conn.setState(EpState.TENTATIVE_CONNECTION_PENDING);
            return ep;
        }

        @Override
        public PspParam query() {
            live();
            return new PspParam(ia, connQual, evd, flag);
        }
    }

    /** An RSP over RDM: a listener for one request, on the EP it reserves. */
    static final class Rsp extends RdmListener implements ReservedServicePoint {
        private final OfiEp ep;

        Rsp(OfiIa ia, long connQual, OfiEp ep, OfiEvd evd) {
            super(ia, HandleType.RSP, connQual, evd);
            this.ep = ep;
        }

        static ReservedServicePoint create(OfiIa ia, long connQual, OfiEp ep, OfiEvd evd) {
            synchronized (ep) {
                if (ep.conn.state() != EpState.UNCONNECTED) {
                    throw DatException.invalidState(EpConnection.subtype(ep.conn.state()), "dat_rsp_create on an EP in "
                            + ep.conn.state());
                }
                Rsp r = new Rsp(ia, connQual, ep, evd);
                ep.conn.setState(EpState.RESERVED);
                return r;
            }
        }

        @Override
        OfiEp reservedEp() {
            synchronized (ep) {
                ep.conn.setState(EpState.PASSIVE_CONNECTION_PENDING);
            }
            return ep;
        }

        /** The RSP is used up by its request: its handle is freed at once, its endpoint when the CR is done. */
        @Override
        void consumed() {
            freed = true;
            evd.users.decrementAndGet();
            ia.removed(this);
        }

        @Override
        void requestDone() {
            closeChannel();
        }

        @Override
        public RspParam query() {
            live();
            return new RspParam(ia, connQual, evd, ep);
        }

        @Override
        synchronized void destroy() {
            boolean was = freed;
            super.destroy();
            if (!was) {
                synchronized (ep) {
                    if (ep.conn.state() == EpState.RESERVED) {
                        ep.conn.setState(EpState.UNCONNECTED);
                    }
                }
            }
        }
    }
}
