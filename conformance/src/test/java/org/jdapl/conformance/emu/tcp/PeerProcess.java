package org.jdapl.conformance.emu.tcp;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.lang.reflect.UndeclaredThrowableException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A peer JVM started with this JVM's class path ({@link PeerMain}), and the proxies through which
 * this JVM uses the DAT objects that live there. Every call is bounded; the process is ended when
 * the peer is closed (stdin closed, then killed if it has not ended within 5 s).
 */
public final class PeerProcess implements Rpc.Exporter, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerProcess.class);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(120);
    /** The system property that names the peer's control class (RPC target 0). */
    static final String CONTROL_PROPERTY = "jdapl.peer.control";

    private final Process process;
    private final SharedMemory memory;
    private final Class<?> control;
    private final Rpc.Out out;
    private final Thread reader;
    private final Map<Long, CompletableFuture<Rpc.Reply>> pending = new ConcurrentHashMap<>();
    private final Map<Long, Object> proxies = new ConcurrentHashMap<>();
    private final Map<Long, Object> opaque = new ConcurrentHashMap<>();
    private final Map<Object, Long> opaqueIds = new IdentityHashMap<>();
    private final AtomicLong callIds = new AtomicLong();
    private final AtomicLong opaqueNext = new AtomicLong();
    private volatile Throwable dead;

    private PeerProcess(Process process, SharedMemory memory, Class<?> control) throws IOException {
        this.process = process;
        this.memory = memory;
        this.control = control;
        this.out = new Rpc.Out(new BufferedOutputStream(process.getOutputStream(), 1 << 16), this);
        out.flush();
        Rpc.In in = new Rpc.In(new BufferedInputStream(process.getInputStream(), 1 << 16), this);
        this.reader = Thread.ofPlatform().daemon().name("emu-tcp-peer-reader-" + process.pid()).start(() -> read(in));
    }

    /**
     * Starts a peer JVM, optionally under a command prefix (e.g. {@code ip netns exec ns}).
     *
     * @param prefix words put before the java command
     * @param properties system properties for the peer
     */
    static PeerProcess start(SharedMemory memory, List<String> prefix, Map<String, String> properties) {
        return start(memory, prefix, properties, PeerControl.class);
    }

    /**
     * Starts a peer JVM whose RPC target 0 is a new {@code control} (a public class with a public
     * no-argument constructor and a method {@code open(String name, String iaParams)} that opens an
     * IA of its provider), for another provider's two-JVM fixture.
     *
     * @param prefix words put before the java command
     * @param properties system properties for the peer
     */
    public static PeerProcess start(SharedMemory memory, List<String> prefix, Map<String, String> properties,
            Class<?> control) {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        properties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.add("-D" + CONTROL_PROPERTY + "=" + control.getName());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(PeerMain.class.getName());
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            PeerProcess peer = new PeerProcess(p, memory, control);
            LOG.info("peer JVM {} started: {}", p.pid(), String.join(" ", prefix));
            return peer;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the peer JVM: " + e, e);
        }
    }

    Process process() {
        return process;
    }

    /** Whether the peer JVM still answers. */
    public boolean alive() {
        return dead == null && process.isAlive();
    }

    private void read(Rpc.In in) {
        try {
            while (true) {
                Rpc.Reply r = (Rpc.Reply) in.readObject();
                CompletableFuture<Rpc.Reply> f = pending.remove(r.id());
                if (f != null) {
                    f.complete(r);
                }
            }
        } catch (IOException | ClassNotFoundException | RuntimeException e) {
            dead = e;
            IllegalStateException gone = new IllegalStateException("the peer JVM " + process.pid() + " is gone: " + e);
            pending.values().forEach(f -> f.completeExceptionally(gone));
            pending.clear();
        }
    }

    /** Calls {@code m} on the peer object {@code target} (0: {@link PeerControl}). */
    Object call(long target, Method m, Object[] args) throws Throwable {
        if (dead != null) {
            throw new IllegalStateException("the peer JVM " + process.pid() + " is gone");
        }
        long id = callIds.incrementAndGet();
        CompletableFuture<Rpc.Reply> f = new CompletableFuture<>();
        pending.put(id, f);
        Class<?>[] types = m.getParameterTypes();
        String[] names = new String[types.length];
        for (int i = 0; i < types.length; i++) {
            names[i] = types[i].getName();
        }
        try {
            out.send(new Rpc.Call(id, target, m.getDeclaringClass().getName(), m.getName(), names, args));
            if (dead != null) {
                f.completeExceptionally(new IllegalStateException("the peer JVM is gone"));
            }
            Rpc.Reply r = f.get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (r.thrown() != null) {
                throw r.thrown();
            }
            return r.value();
        } catch (IOException e) {
            throw new IllegalStateException("the peer JVM " + process.pid() + " is gone: " + e, e);
        } catch (ExecutionException e) {
            throw e.getCause();
        } catch (TimeoutException e) {
            throw new IllegalStateException("the peer JVM did not answer " + m.getName() + " within " + CALL_TIMEOUT);
        } finally {
            pending.remove(id);
        }
    }

    /** Calls {@code method} of the peer's control object. */
    public Object control(String method, Class<?>[] types, Object... args) {
        try {
            return call(0, control.getMethod(method, types), args);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new UndeclaredThrowableException(e);
        }
    }

    /** Opens an IA in the peer. */
    public InterfaceAdapter open(String name, String iaParams) {
        return (InterfaceAdapter) control("open", new Class<?>[] {String.class, String.class}, name, iaParams);
    }

    void hold(InterfaceAdapter ia, boolean hold) {
        control("hold", new Class<?>[] {InterfaceAdapter.class, boolean.class}, ia, hold);
    }

    void breakConnection(Endpoint ep) {
        control("breakConnection", new Class<?>[] {Endpoint.class}, ep);
    }

    String openObjects() {
        return (String) control("openObjects", new Class<?>[0]);
    }

    /** Whether {@code o} is a proxy of an object of this peer. */
    public boolean owns(Object o) {
        return o != null && Proxy.isProxyClass(o.getClass())
                && Proxy.getInvocationHandler(o) instanceof Remote r && r.peer() == this;
    }

    /** Kills the peer at once (SIGKILL). */
    void kill() {
        process.destroyForcibly();
    }

    @Override
    public void close() {
        try {
            out.close();
        } catch (IOException e) {
            LOG.debug("closing the peer's stdin: {}", e.toString());
        }
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
            reader.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    private record Remote(PeerProcess peer, long id, String label) implements InvocationHandler {
        @Override
        public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
            return switch (m.getName()) {
                case "hashCode" -> m.getParameterCount() == 0 ? System.identityHashCode(proxy) : peer.call(id, m, args);
                case "equals" -> m.getParameterCount() == 1 ? proxy == args[0] : peer.call(id, m, args);
                case "toString" -> m.getParameterCount() == 0 ? label : peer.call(id, m, args);
                default -> peer.call(id, m, args);
            };
        }
    }

    @Override
    public Object export(Object o) {
        if (Proxy.isProxyClass(o.getClass()) && Proxy.getInvocationHandler(o) instanceof Remote r && r.peer() == this) {
            return new Rpc.HomeRef(r.id());
        }
        if (o instanceof MemorySegment s) {
            return memory.refOf(s);
        }
        if (o instanceof DatHandle) {
            return new Rpc.ForeignRef(Rpc.apiInterfaces(o.getClass()));
        }
        if (!(o instanceof Serializable) && !(o instanceof Record) && !(o instanceof java.util.Optional)) {
            synchronized (opaqueIds) {
                Long id = opaqueIds.get(o);
                if (id == null) {
                    id = opaqueNext.incrementAndGet();
                    opaqueIds.put(o, id);
                    opaque.put(id, o);
                }
                return new Rpc.OpaqueRef(id);
            }
        }
        return null;
    }

    @Override
    public Object resolve(Object ref) {
        return switch (ref) {
            case Rpc.HandleRef h -> proxies.computeIfAbsent(h.id(), id -> Proxy.newProxyInstance(
                    PeerProcess.class.getClassLoader(), Rpc.classes(h.interfaces()),
                    new Remote(this, id, "peer " + String.join("/", h.interfaces()).replace("org.jdapl.dat.", "")
                            + "#" + id)));
            case Rpc.OpaqueRef o -> opaque.get(o.id());
            case Rpc.SegmentRef s -> memory.resolve(s);
            case Rpc.ForeignRef f -> throw new IllegalStateException("the peer sent back a handle it does not own");
            default -> throw new IllegalStateException("unexpected reference " + ref);
        };
    }
}
