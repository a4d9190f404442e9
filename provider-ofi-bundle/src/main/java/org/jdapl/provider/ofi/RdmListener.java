package org.jdapl.provider.ofi;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;

/**
 * The listener of a service point on RDM endpoints: a control endpoint ({@link RdmChannel}) of its own that a
 * connect finds from the connection qualifier (a socket-address provider: the IA's address and the
 * port; shm: a unique name written into the port's lock file, {@link #pspName}). Each REQ becomes a CR
 * ({@link RdmCr}) and a CONNECTION_REQUEST event. On shm, a host-wide lock file per port says which
 * ports are listened on (CONN_QUAL_IN_USE; a connect to a port nobody listens on is refused at once,
 * as TCP's RST); it goes with the process that holds it.
 *
 * <p>Behaviours: OBJ_06, CONN_11.
 */
final class RdmListener implements OfiServicePoint.Listener, RdmChannel.Owner {
    private static final Path LOCKS = Path.of(System.getProperty("java.io.tmpdir"),
            "jdapl-ofi-shm-" + System.getProperty("user.name", "user"));
    private static final Map<Integer, FileLock> HELD = new ConcurrentHashMap<>();
    /** The shm names of this process's PSPs, by port. */
    private static final Map<Integer, byte[]> NAMES = new ConcurrentHashMap<>();

    private final OfiServicePoint sp;
    private final OfiIa ia;
    final RdmChannel channel;
    private final int port;

    /** Listens for {@code sp} on the port of {@code qual[0]}; 0 there is replaced by the port chosen. */
    RdmListener(OfiServicePoint sp, long[] qual) {
        this.sp = sp;
        this.ia = sp.ia;
        long connQual = qual[0];
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
            // shm: a name of its own, published in the port's lock file (a name is never used twice).
            c = new RdmChannel(ia, ia.rdm.named ? null : ia.rdm.pspAddress(ia.address.getAddress(), p), this);
            if (ia.rdm.named) {
                publish(p, c);
            }
        } catch (DatException e) {
            unlock(p);
            // rxm over verbs: the core fi_getinfo of an endpoint binds its address through the RDMA CM and
            // finds nothing (fi_endpoint -FI_ENODATA) where the port is taken.
            boolean taken = !ia.rdm.named && p != 0 && e.type() == DatReturnType.PROVIDER_NOT_FOUND;
            throw taken || e.type() == DatReturnType.CONN_QUAL_IN_USE || e.getMessage().contains("in use")
                    ? new DatException(DatReturnType.CONN_QUAL_IN_USE, "connection qualifier " + connQual + ": "
                    + e.getMessage()) : e;
        }
        if (p == 0) {
            p = ia.rdm.portOf(c.name);
            connQual = p;
        }
        this.port = p;
        this.channel = c;
        qual[0] = connQual;
    }

    /**
     * Writes the name of the PSP's endpoint into the port's lock file (held by this process), where a
     * connect of any process on the host reads it ({@link #pspName}).
     */
    private static void publish(int port, RdmChannel c) {
        FileLock l = HELD.get(port);
        try {
            l.channel().truncate(0);
            l.channel().write(java.nio.ByteBuffer.wrap(c.name), 0);
            l.channel().force(false);
        } catch (IOException e) {
            c.close();
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, "the shm port lock: " + e.getMessage());
        }
        NAMES.put(port, c.name);
    }

    /**
     * The shm name of the PSP listening on {@code port} of this host, or null when nobody listens.
     * The name is unique (libfabric 1.17's shm keeps the region of every endpoint its process ever
     * closed under the endpoint's name, so a name used again in a process would map the old, unmapped
     * region): a PSP's name is read from the port's lock file rather than computed from the port.
     */
    static byte[] pspName(int port) {
        byte[] own = NAMES.get(port);
        if (own != null) {
            return own;
        }
        if (!listening(port)) {
            return null;
        }
        try {
            byte[] n = Files.readAllBytes(LOCKS.resolve("psp-" + port + ".lock"));
            return n.length > 1 && n[n.length - 1] == 0 ? n : null;
        } catch (IOException e) {
            return null;
        }
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
        NAMES.remove(port);
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
        if (!sp.request(reserved -> new RdmCr(sp, this, m, reserved))) {
            refuse(m);
        }
    }

    /** Answers a request nobody takes: REJECT without the consumer's flag (NON_PEER_REJECTED). */
    void refuse(RdmMessage m) {
        reply(m, 0, null);
    }

    /**
     * Sends a REJECT for the request {@code m} from the IA's hub to the requesting IA's hub: the
     * listener's own endpoint may be closed by then (an RSP is used up by its request, a PSP freed).
     */
    void reply(RdmMessage m, int flags, byte[] pd) {
        try {
            RdmHub hub = ia.rdm.hub();
            hub.send(m.from(), new RdmMessage(RdmMessage.REJECT, flags, 0, m.src(), 0, 0, hub.channel.name, new byte[0],
                    pd == null ? new byte[0] : pd, hub.channel.name));
        } catch (DatException e) {
            // the requester is gone, or the IA closes
        }
    }

    @Override
    public void sendFailed(RdmChannel ch, int err, long src) {
        // a REJECT that does not arrive: the requester is gone or times out
    }

    @Override
    public void stop() {
        // the channel answers the open request until it is closed
    }

    @Override
    public void close() {
        channel.close();
        if (ia.rdm.named) {
            unlock(port);
        }
    }
}
