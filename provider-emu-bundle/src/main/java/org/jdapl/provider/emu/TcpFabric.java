package org.jdapl.provider.emu;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
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
 */
final class TcpFabric implements Fabric {
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
    private Selector selector;
    private ServerSocketChannel server;
    private InetSocketAddress address;
    private final Map<Integer, ServerSocketChannel> commonServers = new HashMap<>();
    private final Set<TcpConnection> connections = new LinkedHashSet<>();
    private final List<TcpConnection> flushLater = new ArrayList<>();
    /** Held by the thread that selects: the I/O thread, or a thread waiting on an EVD of the IA. */
    private final ReentrantLock pollerLock = new ReentrantLock(true);
    private final java.util.concurrent.atomic.AtomicInteger intending = new java.util.concurrent.atomic.AtomicInteger();
    private volatile Thread poller;
    private volatile boolean pollWanted;
    private volatile boolean wakeRequested;
    private volatile long lastWaiterPoll = System.nanoTime() - WAITER_GRACE_NANOS;
    private volatile long lastTick = System.nanoTime();
    /** When the last select of the IA returned: the time of the I/O that followed, without reading the clock. */
    private volatile long clock = System.nanoTime();
    /** The clock was read after the current select returned (only the polling thread uses it). */
    private boolean clockFresh;
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
    private final java.util.function.Consumer<SelectionKey> handler = this::handleLocked;
    private volatile boolean answersDeferred;
    private Thread ioThread;
    private volatile boolean running;

    TcpFabric(InetSocketAddress bindAddress) {
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

    /**
     * A coarse clock for idle and keepalive bookkeeping: the time the last select of the IA returned
     * (someone selects at least every {@link #TICK_MILLIS} ms), so that I/O needs no clock read of its own.
     */
    long clock() {
        return clock;
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
        ioThread = Thread.ofPlatform().daemon().name("jdapl-emu-" + owner.name() + "-io").start(this::loop);
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
        for (ServerSocketChannel s : commonServers.values()) {
            closeQuietly(s);
        }
        commonServers.clear();
        closeQuietly(server);
        if (selector != null) {
            selector.wakeup();
        }
    }

    /** Waits for the I/O thread to end (not under the fabric lock). */
    @Override
    public void stop() {
        Thread t = ioThread;
        if (t != null && t != Thread.currentThread()) {
            try {
                if (!t.join(Duration.ofSeconds(5))) {
                    LOG.warn("the I/O thread of IA {} did not stop within 5 s", ia.name());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
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
            attempt.ep.awaitEstablishment(c);
            connections.add(c);
            c.register(ch.register(selector, done ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, c));
            if (done) {
                c.connected();
            }
            selector.wakeup();
        } catch (IOException e) {
            closeQuietly(ch);
            LOG.debug("IA {}: connect to {} failed at once: {}", ia.name(), remote, e.toString());
            ia.later(() -> attempt.ep.failAttempt(attempt, org.jdapl.dat.EventNumber.CONNECTION_UNREACHABLE));
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

    /**
     * Sends {@code c}'s queued answers (ACKs, read responses) later: with the next frame a consumer
     * posts on the connection, or before the polling thread blocks again, whichever comes first
     * (lock held). The waiter woken by the answered frame runs first, and an answer often travels in
     * one write with the consumer's reply.
     */
    void flushLater(TcpConnection c) {
        if (!flushLater.contains(c)) {
            flushLater.add(c);
            answersDeferred = true;
        }
    }

    /** {@code c} has written everything it had, deferred answers included (lock held). */
    void answered(TcpConnection c) {
        if (answersDeferred && flushLater.remove(c) && flushLater.isEmpty()) {
            answersDeferred = false;
        }
    }

    /** Sends the answers deferred by {@link #flushLater} (lock held). */
    private void sendDeferredAnswers() {
        if (answersDeferred) {
            answersDeferred = false;
            for (int i = 0; i < flushLater.size(); i++) {
                flushLater.get(i).flush();
            }
            flushLater.clear();
        }
    }

    void removed(TcpConnection c) {
        connections.remove(c);
    }

    void wakeup() {
        Selector s = selector;
        if (s != null && Thread.currentThread() != poller) {
            s.wakeup();
        }
    }

    private void loop() {
        Thread me = Thread.currentThread();
        try {
            while (running) {
                // Threads waiting on EVDs poll the sockets and process whatever is ready, for every
                // connection of the IA. Stay out of their way until none has polled for the grace time.
                Thread p = poller;
                if (pollWanted || (p != null && p != me) || intending.get() > 0) {
                    pollWanted = false;
                    LockSupport.parkNanos(WAITER_GRACE_NANOS);
                    continue;
                }
                long sinceWaiter = System.nanoTime() - lastWaiterPoll;
                if (sinceWaiter < WAITER_GRACE_NANOS) {
                    LockSupport.parkNanos(Math.max(WAITER_GRACE_NANOS / 8, WAITER_GRACE_NANOS - sinceWaiter));
                    continue;
                }
                if (!pollerLock.tryLock()) {
                    LockSupport.parkNanos(WAITER_GRACE_NANOS / 4);
                    continue;
                }
                try {
                    poller = me;
                    selectAndProcess(TICK_MILLIS, 0);
                } finally {
                    poller = null;
                    pollerLock.unlock();
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            if (running) {
                LOG.error("the I/O thread of IA {} failed", ia.name(), e);
            }
        } finally {
            pollerLock.lock();
            try {
                selector.close();
            } catch (IOException e) {
                LOG.debug("closing the selector of IA {}: {}", ia.name(), e.toString());
            } finally {
                pollerLock.unlock();
            }
        }
    }

    /**
     * Waits up to {@code timeoutMillis} (0: not at all) for socket readiness and processes it: reads,
     * writes, connects, accepts, and the keepalive checks when due (pollerLock held, fabric lock not).
     * Each ready key is handled under the fabric lock as the selector reports it, without the selected
     * key set.
     */
    private void selectAndProcess(long timeoutMillis, long spinNanos) throws IOException {
        if (answersDeferred) {
            lock.lock();
            try {
                sendDeferredAnswers();
            } finally {
                lock.unlock();
            }
        }
        int ready = 0;
        if (timeoutMillis <= 0 || spinNanos > 0 || wakeRequested) {
            ready = selector.selectNow(handler);
        }
        if (ready == 0 && spinNanos > 0) {
            long end = System.nanoTime() + spinNanos;
            while (ready == 0 && !wakeRequested && System.nanoTime() - end < 0) {
                Thread.onSpinWait();
                ready = selector.selectNow(handler);
            }
        }
        if (ready == 0 && timeoutMillis > 0 && !wakeRequested) {
            selector.select(handler, timeoutMillis);
        }
        long now;
        if (clockFresh) {
            clockFresh = false;
            now = clock;
        } else {
            now = System.nanoTime();
            clock = now;
        }
        if (now - lastTick >= TICK_NANOS) {
            lock.lock();
            try {
                lastTick = now;
                if (running) {
                    for (TcpConnection c : new ArrayList<>(connections)) {
                        c.tick(now);
                    }
                }
            } finally {
                lock.unlock();
            }
        }
        Wakeups.run();
    }

    /** Handles one ready key under the fabric lock (called by the selector during a select). */
    private void handleLocked(SelectionKey k) {
        if (!clockFresh) {
            clock = System.nanoTime();
            clockFresh = true;
        }
        lock.lock();
        try {
            if (running) {
                handle(k);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Lets a thread waiting on an EVD of this IA poll the sockets itself for up to {@code maxNanos}, so
     * that data arriving for it wakes it directly rather than through the I/O thread (no lock held).
     *
     * @return false if another thread polls now (the caller waits to be woken instead)
     */
    @Override
    public boolean canPoll() {
        return running;
    }

    @Override
    public void announcePoll() {
        intending.incrementAndGet();
    }

    @Override
    public boolean pollWhileWaiting(long maxNanos) {
        try {
            return pollAsWaiter(maxNanos);
        } finally {
            intending.decrementAndGet();
        }
    }

    private boolean pollAsWaiter(long maxNanos) {
        if (!running) {
            return false;
        }
        if (!pollerLock.tryLock()) {
            if (poller != ioThread) {
                return false;
            }
            // The I/O thread is selecting: ask it to step back, and take over once it has.
            pollWanted = true;
            selector.wakeup();
            try {
                if (!pollerLock.tryLock(WAITER_GRACE_NANOS, TimeUnit.NANOSECONDS)) {
                    return false;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return true;
            }
        }
        try {
            if (!running) {
                return false;
            }
            poller = Thread.currentThread();
            selectAndProcess(Math.max(1, Math.min(TICK_MILLIS, TimeUnit.NANOSECONDS.toMillis(maxNanos))),
                    Math.min(BUSY_POLL_NANOS, maxNanos));
            return true;
        } catch (IOException | ClosedSelectorException e) {
            return false;
        } finally {
            if (wakeRequested) {
                wakeRequested = false;
            }
            long now = clock;
            if (now - lastWaiterPoll > WAITER_GRACE_NANOS / 16) {
                lastWaiterPoll = now;
            }
            poller = null;
            pollerLock.unlock();
        }
    }

    /**
     * Reads and processes what the sockets hold now for a consumer polling an empty EVD. The I/O
     * thread steps back while consumers poll (as for waiters), so a polling consumer is served by
     * its own thread, not when the I/O thread next looks.
     */
    @Override
    public void pollNow() {
        if (!running) {
            return;
        }
        if (!pollerLock.tryLock()) {
            if (poller == ioThread) {
                pollWanted = true;
                selector.wakeup();
            }
            return;
        }
        try {
            if (!running) {
                return;
            }
            poller = Thread.currentThread();
            selectAndProcess(0, 0);
        } catch (IOException | ClosedSelectorException e) {
            LOG.debug("IA {}: a consumer's poll failed: {}", ia.name(), e.toString());
        } finally {
            lastWaiterPoll = clock;
            poller = null;
            pollerLock.unlock();
        }
    }

    /** Ends a poll of a waiting thread early: an event for a waiter came from elsewhere. */
    @Override
    public void wakePoller() {
        if (intending.get() > 0) {
            wakeRequested = true;
            if (poller != Thread.currentThread()) {
                selector.wakeup();
            }
        }
    }

    private void handle(SelectionKey k) {
        if (!k.isValid()) {
            return;
        }
        if (k.attachment() instanceof Integer port) {
            accept((ServerSocketChannel) k.channel(), port);
            return;
        }
        TcpConnection c = (TcpConnection) k.attachment();
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
