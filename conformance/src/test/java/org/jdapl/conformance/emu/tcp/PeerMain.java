package org.jdapl.conformance.emu.tcp;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jdapl.dat.DatHandle;

/**
 * The peer process of a two-JVM fixture (emu-tcp, and other providers' through {@link PeerProcess}): it holds the real objects of the second IA of each pair
 * and answers the test JVM's calls on them (DAT handles and address handles travel by reference; one virtual thread per call, so a blocking EVD wait does
 * not hold up other calls). RPC target 0 is the control object, of the class the system property
 * {@code jdapl.peer.control} names ({@link PeerControl} by default). It ends when its stdin closes or its parent process dies.
 */
public final class PeerMain implements Rpc.Exporter {
    private record Opaque(long id) {
    }

    private final SharedMemory memory = SharedMemory.peer();
    private final Map<Long, Object> byId = new ConcurrentHashMap<>();
    private final Map<Object, Long> ids = new IdentityHashMap<>();
    private final AtomicLong next = new AtomicLong();

    private PeerMain() {
    }

    /** Runs the peer until stdin closes. */
    public static void main(String[] args) throws Exception {
        PrintStream wire = System.out;
        System.setOut(System.err);
        ProcessHandle.current().parent().ifPresent(p -> p.onExit().thenRun(() -> Runtime.getRuntime().halt(3)));
        PeerMain peer = new PeerMain();
        String control = System.getProperty(PeerProcess.CONTROL_PROPERTY, "org.jdapl.conformance.emu.tcp.PeerControl");
        peer.byId.put(0L, Class.forName(control).getConstructor().newInstance());
        Rpc.Out out = new Rpc.Out(new BufferedOutputStream(wire, 1 << 16), peer);
        out.flush();
        Rpc.In in = new Rpc.In(new BufferedInputStream(System.in, 1 << 16), peer);
        while (true) {
            Rpc.Call call;
            try {
                call = (Rpc.Call) in.readObject();
            } catch (EOFException e) {
                break;
            }
            Thread.ofVirtual().start(() -> peer.answer(call, out));
        }
        Runtime.getRuntime().halt(0);
    }

    private void answer(Rpc.Call call, Rpc.Out out) {
        Rpc.Reply reply;
        try {
            Object target = byId.get(call.target());
            if (target == null) {
                throw new IllegalStateException("no object " + call.target() + " in the peer");
            }
            Method m = Rpc.type(call.owner()).getMethod(call.method(), Rpc.classes(call.parameterTypes()));
            reply = new Rpc.Reply(call.id(), m.invoke(target, call.args() == null ? new Object[0] : call.args()), null);
        } catch (InvocationTargetException e) {
            reply = new Rpc.Reply(call.id(), null, e.getCause());
        } catch (ReflectiveOperationException | RuntimeException e) {
            reply = new Rpc.Reply(call.id(), null, e);
        }
        try {
            out.send(reply);
        } catch (IOException e) {
            Runtime.getRuntime().halt(4);
        }
    }

    @Override
    public Object export(Object o) {
        if (o instanceof Opaque op) {
            return new Rpc.OpaqueRef(op.id());
        }
        if (o instanceof MemorySegment s) {
            return memory.refOf(s);
        }
        if (o instanceof DatHandle || o instanceof org.jdapl.dat.AddressHandle) {
            Object h = o;
            if (Proxy.isProxyClass(h.getClass())) {
                return new Rpc.ForeignRef(Rpc.apiInterfaces(h.getClass()));
            }
            synchronized (ids) {
                Long id = ids.get(h);
                if (id == null) {
                    id = next.incrementAndGet();
                    ids.put(h, id);
                    byId.put(id, h);
                }
                return new Rpc.HandleRef(id, Rpc.apiInterfaces(h.getClass()));
            }
        }
        return null;
    }

    @Override
    public Object resolve(Object ref) {
        return switch (ref) {
            case Rpc.HomeRef home -> {
                Object o = byId.get(home.id());
                if (o == null) {
                    throw new IllegalStateException("no object " + home.id() + " in the peer");
                }
                yield o;
            }
            case Rpc.ForeignRef foreign -> Proxy.newProxyInstance(PeerMain.class.getClassLoader(),
                    Rpc.classes(foreign.interfaces()), (self, m, args) -> switch (m.getName()) {
                        case "hashCode" -> System.identityHashCode(self);
                        case "equals" -> self == args[0];
                        case "toString" -> "a handle of the test JVM";
                        default -> throw new UnsupportedOperationException(m.getName() + " of a foreign handle");
                    });
            case Rpc.OpaqueRef opaque -> new Opaque(opaque.id());
            case Rpc.SegmentRef s -> memory.resolve(s);
            default -> throw new IllegalStateException("unexpected reference " + ref);
        };
    }
}
