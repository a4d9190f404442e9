package org.jdapl.provider.emu.tcp;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.provider.emu.ConnectAttempt;
import org.jdapl.provider.emu.EmuIa;
import org.jdapl.provider.emu.Fabric;
import org.jdapl.provider.emu.LockDomain;
import org.jdapl.provider.emu.RemoteAddresses;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code tcp} fabric of one emulated IA: a listening socket on the IA's address (one for all
 * connection qualifiers; the qualifier travels in the connect request), one TCP connection per EP
 * connection, and one I/O thread ({@code jdapl-emu-<ia>-io}) that waits on a selector for every
 * socket of the IA. The thread never blocks on a single connection; it wakes at least every
 * {@link #TICK_MILLIS} ms for keepalives and silence checks, and it ends when the IA closes.
 *
 * <p>A connection that carries no frame for {@link #IDLE_TIMEOUT_NANOS} (default 3000 ms, system
 * property {@code jdapl.emu.tcp.idleTimeoutMillis}) is broken; each side sends a keepalive after a
 * third of that without output, so a live peer is never idle that long.
 *
 * <p>Over 500 lines: the fabric's sockets (listeners, accepted and connecting channels), the I/O
 * thread's dispatch of ready keys and the polling consumer's hooks belong together, as they share the
 * selector and the connection set under the domain lock. What a connection does is in
 * {@link TcpConnection}, its handshake in {@link TcpHandshake}, the UD exchanges in
 * {@link TcpDatagrams.Exchanges}, who reads the sockets in {@link TcpPoller}.
 */
public final class TcpFabric implements Fabric {
    private static final Logger LOG = LoggerFactory.getLogger(TcpFabric.class);
    /** How long a connection may carry nothing from the peer before it counts as broken. */
    static final long IDLE_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(
            Math.max(300, Long.getLong("jdapl.emu.tcp.idleTimeoutMillis", 3000L)));
    /** Output silence after which a keepalive is sent. */
    static final long KEEPALIVE_NANOS = IDLE_TIMEOUT_NANOS / 3;
    /** The selector's wake-up period for the checks. */
    static final long TICK_MILLIS = Math.max(50, TimeUnit.NANOSECONDS.toMillis(IDLE_TIMEOUT_NANOS) / 12);
    /**
     * How long a thread waiting on an EVD polls the sockets without blocking before it sleeps in the
     * selector (system property {@code jdapl.emu.tcp.busyPollMicros}, default 0: never). An answer that
     * comes within it costs no wake-up, but the spinning takes a core from the peer's threads; it pays
     * only with cores to spare.
     */
    static final long BUSY_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(
            Math.max(0, Long.getLong("jdapl.emu.tcp.busyPollMicros", 0L)));
    /** While EVD waiters polled this recently, the I/O thread only looks for what they leave behind. */
    static final long WAITER_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /** The most accepted connections that have not yet sent a connect request. */
    static final int MAX_UNIDENTIFIED = 1024;

    private final LockDomain domain = new LockDomain();
    /** The lock of {@link #domain}: a tcp IA's domain is never merged with another. */
    private final ReentrantLock lock = domain.unmergedLock();
    private final InetSocketAddress bindAddress;
    private EmuIa ia;
    /** Who reads the sockets: the I/O thread or a consumer (set by {@link #attach}). */
    private volatile TcpPoller poller;
    private Selector selector;
    private ServerSocketChannel server;
    private InetSocketAddress address;
    private final Map<Integer, ServerSocketChannel> commonServers = new HashMap<>();
    private final Set<TcpConnection> connections = new LinkedHashSet<>();
    /** The UD exchanges, each on a connection of its own. */
    private final TcpDatagrams.Exchanges datagrams = new TcpDatagrams.Exchanges(this);
    /** The array {@link #tick} copies the connections into (domain lock held). */
    private TcpConnection[] ticking = new TcpConnection[8];
    /** The only connection, while there is exactly one (domain lock held). */
    private TcpConnection sole;
    private volatile boolean running;
    /** The last payload received on a connection of the IA was large ({@link #largeInput()}). */
    private volatile boolean largeInput;

    public TcpFabric(InetSocketAddress bindAddress) {
        this.bindAddress = bindAddress;
    }

    @Override
    public String name() {
        return "tcp";
    }

    @Override
    public LockDomain lockDomain() {
        return domain;
    }

    EmuIa ia() {
        return ia;
    }

    /** The coarse clock of the IA's I/O ({@link TcpPoller#clock}). */
    long clock() {
        return poller.clock();
    }

    /** Sends {@code c}'s answers later ({@link TcpPoller#flushLater}). */
    void flushLater(TcpConnection c) {
        poller.flushLater(c);
    }

    /** {@code c} has written everything it had ({@link TcpPoller#answered}). */
    void answered(TcpConnection c) {
        poller.answered(c);
    }

    /** Whether the thread reading the sockets now is a consumer's, not the I/O thread ({@link TcpPoller#consumerReads}). */
    boolean consumerReads() {
        return poller.consumerReads();
    }

    /** Output waits on a socket: the selecting thread is to look for writability. */
    void wakeup() {
        poller.wakeup();
    }

    boolean running() {
        return running;
    }

    @Override
    public boolean canPoll() {
        return running;
    }

    /**
     * A consumer's thread reading a socket beside the peer's one gathering write of a large frame
     * slows that write more than the early reads gain: in a 1 MiB ping-pong on loopback, consumers
     * polling without blocking took 1.4 to 1.5 times as long per round trip as waiters, which sleep
     * until the first piece wakes them and then read the rest as it comes ({@link TcpInput}). The
     * flag is the IA's, as the consumer's poll is: on an IA whose connections carry large and small
     * frames at once, the last payload received decides, and a small answer then reaches a polling
     * consumer as fast as a waiter, not faster.
     */
    @Override
    public boolean largeInput() {
        return largeInput;
    }

    /** The last payload received on a connection of the IA was large, or was not (domain lock held). */
    void largeInput(boolean large) {
        if (largeInput != large) {
            largeInput = large;
        }
    }

    @Override
    public void announcePoll() {
        poller.announcePoll();
    }

    @Override
    public boolean pollWhileWaiting(long maxNanos) {
        return poller.pollWhileWaiting(maxNanos);
    }

    @Override
    public void pollNow() {
        if (running) {
            poller.pollNow();
        }
    }

    @Override
    public void pollBriefly(long maxNanos, java.util.function.BooleanSupplier done) {
        if (running) {
            poller.pollBriefly(maxNanos, done);
        }
    }

    @Override
    public void wakePoller() {
        poller.wakePoller();
    }

    /**
     * Keepalive, silence and linger checks of every connection (domain lock held), over a copy of the
     * set (a check may close a connection) made into a kept array: a tick allocates nothing.
     */
    void tick(long now) {
        if (running) {
            TcpConnection[] all = connections.toArray(ticking);
            ticking = all;
            int n = connections.size();
            try {
                for (int i = 0; i < n; i++) {
                    all[i].tick(now);
                }
            } finally {
                Arrays.fill(all, 0, n, null);
            }
        }
    }

    InetSocketAddress address() {
        return address;
    }

    /** Listens on the bind address and starts the I/O thread. */
    @Override
    public SocketAddress attach(EmuIa owner) {
        this.ia = owner;
        try {
            selector = Selector.open();
            server = ServerSocketChannel.open();
            server.bind(bindAddress, 1024);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT, 0);
            address = (InetSocketAddress) server.getLocalAddress();
        } catch (IOException e) {
            closeQuietly();
            DatReturnType type = e instanceof BindException ? DatReturnType.INVALID_PARAMETER
                    : DatReturnType.INSUFFICIENT_RESOURCES;
            throw new DatException(type, type == DatReturnType.INVALID_PARAMETER ? DatReturnSubtype.INVALID_ARG2
                    : DatReturnSubtype.RESOURCE_DEVICE, "cannot listen on " + bindAddress + ": " + e.getMessage(), e);
        }
        running = true;
        poller = new TcpPoller(this, selector, lock, owner.name());
        poller.start("jdapl-emu-" + owner.name() + "-io");
        return address;
    }

    /** Closes every connection and listener; the I/O thread ends (fabric lock held). */
    @Override
    public void detach(EmuIa owner) {
        running = false;
        for (TcpConnection c : new ArrayList<>(connections)) {
            c.flush();
            c.shutdown();
        }
        connections.clear();
        sole = null;
        datagrams.closeAll();
        for (ServerSocketChannel s : commonServers.values()) {
            closeQuietly(s);
        }
        commonServers.clear();
        closeQuietly(server);
        if (selector != null) {
            selector.wakeup();
        }
    }

    /**
     * Waits for the I/O thread to end, and for a consumer's thread polling the sockets to leave them
     * (not under the fabric lock): when the IA's close returns, no thread waits in its selector.
     *
     * <p>Behaviours: OBJ_11.
     */
    @Override
    public void stop() {
        Thread t = poller == null ? null : poller.ioThread();
        if (t != null && t != Thread.currentThread()) {
            try {
                if (!t.join(Duration.ofSeconds(5))) {
                    LOG.warn("the I/O thread of IA {} did not stop within 5 s", ia.name());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (poller != null && !poller.awaitNoPoller(Duration.ofSeconds(5))) {
            LOG.warn("a consumer's thread of IA {} did not leave its poll within 5 s", ia.name());
        }
    }

    @Override
    public void heldChanged() {
        for (TcpConnection c : connections) {
            c.updateInterest();
        }
        selector.wakeup();
    }

    @Override
    public EmuIa resolve(SocketAddress remote) {
        return null;
    }

    /** Behaviours: CONN_08. */
    @Override
    public void checkRemoteAddress(SocketAddress remote) {
        InetSocketAddress inet = RemoteAddresses.ip(remote, "the tcp fabric reaches IAs by IP address and port");
        if (RemoteAddresses.namesNoIa(inet.getAddress())) {
            throw RemoteAddresses.noIa(inet);
        }
        if (inet.getPort() == 0) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_MALFORMED,
                    "an IA address on the tcp fabric has a port: " + inet);
        }
    }

    /** A loopback address with a port nothing listened on a moment ago. */
    @Override
    public SocketAddress unassignedAddress() {
        try (ServerSocketChannel probe = ServerSocketChannel.open()) {
            probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return probe.getLocalAddress();
        } catch (IOException e) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, "no free loopback port: " + e.getMessage());
        }
    }

    /**
     * Starts a TCP connect for {@code attempt} (fabric lock held); the EP awaits the connection's
     * establishment. A failure at once (no route, a blackhole) ends the attempt UNREACHABLE after the
     * call returns.
     */
    @Override
    public void connect(ConnectAttempt attempt, SocketAddress remote, long qual, boolean common, byte[] data,
                        long portQual) {
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open();
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            boolean done = ch.connect(remote);
            TcpConnection c = new TcpConnection(this, ch, remote, attempt, qual, common, data, portQual);
            attempt.ep.connection().awaitEstablishment(c);
            connections.add(c);
            sole = connections.size() == 1 ? c : null;
            c.register(ch.register(selector, done ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, c));
            if (done) {
                c.connected();
            }
            selector.wakeup();
        } catch (IOException e) {
            closeQuietly(ch);
            LOG.debug("IA {}: connect to {} failed at once: {}", ia.name(), remote, e.toString());
            ia.later(() -> attempt.ep.connection().failAttempt(attempt,
                    org.jdapl.dat.EventNumber.CONNECTION_UNREACHABLE));
        }
    }

    /**
     * Listens for a common service point on {@code where}, a socket of its own (fabric lock held).
     *
     * @return the address it listens on, with the port chosen if {@code where} had none
     * @throws DatException PORT_IN_USE if the port is taken; INVALID_ADDRESS if the address is not the IA's
     */
    @Override
    public InetSocketAddress listenCommon(EmuIa owner, SocketAddress where, java.util.function.IntPredicate taken) {
        if (!(where instanceof InetSocketAddress at) || at.isUnresolved()) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_MALFORMED,
                    "a CSP on the tcp fabric listens on an IP address and port, not " + where);
        }
        if (!at.getAddress().equals(address.getAddress())) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_UNSUPPORTED,
                    "a CSP listens on this IA's address " + address.getAddress() + ", not " + at);
        }
        try {
            ServerSocketChannel s = ServerSocketChannel.open();
            try {
                s.bind(at, 128);
                s.configureBlocking(false);
                InetSocketAddress bound = (InetSocketAddress) s.getLocalAddress();
                s.register(selector, SelectionKey.OP_ACCEPT, bound.getPort());
                commonServers.put(bound.getPort(), s);
                selector.wakeup();
                return bound;
            } catch (IOException e) {
                s.close();
                throw e;
            }
        } catch (IOException e) {
            throw new DatException(DatReturnType.PORT_IN_USE, "cannot listen on " + at + ": " + e.getMessage());
        }
    }

    /** Stops listening for the common service point on {@code port} (fabric lock held). */
    @Override
    public void stopCommon(int port) {
        closeQuietly(commonServers.remove(port));
    }

    /** A UD exchange of {@code ep} on a connection of its own (fabric lock held). Behaviours: EXT_08, EXT_10. */
    @Override
    public boolean exchangeDatagrams(org.jdapl.provider.emu.EmuUdEp ep, SocketAddress remote, long qual, byte[] data) {
        datagrams.connect(selector, ep, remote, qual, data);
        return true;
    }

    /** The IA's UD exchanges (a connect request may ask for one: {@link TcpDatagrams.Exchanges#requested}). */
    TcpDatagrams.Exchanges datagrams() {
        return datagrams;
    }

    void removed(TcpConnection c) {
        connections.remove(c);
        sole = connections.size() == 1 ? connections.iterator().next() : null;
    }

    /**
     * The IA's connection if it has exactly one and that one is established, only waits for input (no
     * output waits for the socket, transfers are not held) and expects small frames: a polling
     * consumer may read its socket without a select (domain lock held). Null otherwise. While large
     * frames come, the consumer selects: empty reads take the socket's lock, which the peer's write
     * needs to deliver each piece (a 1 MiB ping-pong took 10 to 30 % longer with them).
     */
    TcpConnection soleReader() {
        TcpConnection c = sole;
        return c != null && !ia.held() && c.onlyReads() ? c : null;
    }

    /** One ready key of the selector (domain lock held): accept, connect, write, read. */
    void handle(SelectionKey k) {
        if (!k.isValid()) {
            return;
        }
        if (k.attachment() instanceof Integer port) {
            accept((ServerSocketChannel) k.channel(), port);
            return;
        }
        if (!(k.attachment() instanceof TcpConnection c)) {
            if (k.attachment() instanceof TcpDatagrams d) {
                d.handle(k);
            }
            return;
        }
        int ready = k.readyOps();
        if ((ready & SelectionKey.OP_CONNECT) != 0) {
            c.onConnectable();
            if (k.isValid()) {
                c.updateInterest();
            }
            return;
        }
        if ((ready & SelectionKey.OP_WRITE) != 0) {
            c.flush();
        }
        if ((ready & SelectionKey.OP_READ) != 0 && k.isValid()) {
            c.onReadable();
        }
    }

    private void accept(ServerSocketChannel s, int commonPort) {
        for (int i = 0; i < 64; i++) {
            SocketChannel ch;
            try {
                ch = s.accept();
            } catch (IOException e) {
                LOG.warn("IA {}: accept failed: {}", ia.name(), e.toString());
                return;
            }
            if (ch == null) {
                return;
            }
            long unidentified = connections.stream().filter(c -> !c.identified()).count();
            if (unidentified >= MAX_UNIDENTIFIED) {
                LOG.warn("IA {}: refusing a connection from {}: {} connections have sent no connect request yet",
                        ia.name(), remoteOf(ch), unidentified);
                closeQuietly(ch);
                continue;
            }
            try {
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                TcpConnection c = new TcpConnection(this, ch, commonPort);
                connections.add(c);
                sole = connections.size() == 1 ? c : null;
                c.register(ch.register(selector, SelectionKey.OP_READ, c));
            } catch (IOException e) {
                LOG.warn("IA {}: cannot take a connection from {}: {}", ia.name(), remoteOf(ch), e.toString());
                closeQuietly(ch);
            }
        }
    }

    private static String remoteOf(SocketChannel ch) {
        try {
            return String.valueOf(ch.getRemoteAddress());
        } catch (IOException e) {
            return "?";
        }
    }

    private void closeQuietly() {
        closeQuietly(server);
        if (selector != null) {
            try {
                selector.close();
            } catch (IOException e) {
                LOG.debug("closing a selector: {}", e.toString());
            }
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                LOG.debug("closing {}: {}", c, e.toString());
            }
        }
    }

    /** Every connection of the IA (for tests). */
    List<TcpConnection> connections() {
        return List.copyOf(connections);
    }
}
