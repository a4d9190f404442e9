package org.jdapl.conformance.emu.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.OutputStream;
import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The small RPC between the test JVM and the peer JVM that holds the second IA of each pair: calls
 * and replies are Java-serialized over the peer process's stdin and stdout. Objects that are not
 * serializable travel as references: a DAT handle as {@link HandleRef} (the holder keeps the object,
 * the other side sees a proxy), an API record as {@link RecordRef}, a memory segment as
 * {@link SegmentRef} (both JVMs map the same file), anything else as {@link OpaqueRef}.
 */
final class Rpc {
    private Rpc() {
    }

    /** A call of {@code method} (declared by {@code owner}) on the object the receiver exported as {@code target}. */
    record Call(long id, long target, String owner, String method, String[] parameterTypes, Object[] args)
            implements Serializable {
    }

    /** The answer to call {@code id}: a value, or what the method threw. */
    record Reply(long id, Object value, Throwable thrown) implements Serializable {
    }

    /** A handle the sender exported under {@code id}, implementing the API interfaces named. */
    record HandleRef(long id, String[] interfaces) implements Serializable {
    }

    /** A handle the receiver exported (coming back home). */
    record HomeRef(long id) implements Serializable {
    }

    /** A handle neither side exported (a consumer's own implementation): the receiver sees a foreign handle. */
    record ForeignRef(String[] interfaces) implements Serializable {
    }

    /** An object the sender keeps; it comes back as itself. */
    record OpaqueRef(long id) implements Serializable {
    }

    /** An API record by its components. */
    record RecordRef(String type, Object[] components) implements Serializable {
    }

    /** {@code size} bytes at {@code offset} of the shared file {@code path}. */
    record SegmentRef(String path, long offset, long size) implements Serializable {
    }

    /** An Optional. */
    record OptionalRef(Object value, boolean present) implements Serializable {
    }

    /** What one side does with references. */
    interface Exporter {
        /** The reference for a handle or other object this side sends, or null to send it as it is. */
        Object export(Object o);

        /** The object a received reference stands for. */
        Object resolve(Object ref);
    }

    static Object recordRef(Record r) {
        RecordComponent[] rc = r.getClass().getRecordComponents();
        Object[] values = new Object[rc.length];
        for (int i = 0; i < rc.length; i++) {
            try {
                rc[i].getAccessor().setAccessible(true);
                values[i] = rc[i].getAccessor().invoke(r);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot read " + rc[i], e);
            }
        }
        return new RecordRef(r.getClass().getName(), values);
    }

    static Object newRecord(RecordRef ref) {
        try {
            Class<?> type = Class.forName(ref.type(), true, Rpc.class.getClassLoader());
            RecordComponent[] rc = type.getRecordComponents();
            Class<?>[] types = new Class<?>[rc.length];
            for (int i = 0; i < rc.length; i++) {
                types[i] = rc[i].getType();
            }
            Constructor<?> c = type.getDeclaredConstructor(types);
            c.setAccessible(true);
            return c.newInstance(ref.components());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot rebuild " + ref.type(), e);
        }
    }

    static String[] apiInterfaces(Class<?> type) {
        List<String> names = new ArrayList<>();
        collect(type, names);
        return names.toArray(String[]::new);
    }

    private static void collect(Class<?> type, List<String> names) {
        for (Class<?> i : type.getInterfaces()) {
            if (i.getPackageName().equals("org.jdapl.dat") && !names.contains(i.getName())) {
                names.add(i.getName());
            }
            collect(i, names);
        }
        if (type.getSuperclass() != null) {
            collect(type.getSuperclass(), names);
        }
    }

    static Class<?>[] classes(String[] names) {
        Class<?>[] out = new Class<?>[names.length];
        for (int i = 0; i < names.length; i++) {
            out[i] = type(names[i]);
        }
        return out;
    }

    static Class<?> type(String name) {
        return switch (name) {
            case "long" -> long.class;
            case "int" -> int.class;
            case "boolean" -> boolean.class;
            case "byte" -> byte.class;
            case "short" -> short.class;
            case "char" -> char.class;
            case "float" -> float.class;
            case "double" -> double.class;
            default -> {
                try {
                    yield Class.forName(name, false, Rpc.class.getClassLoader());
                } catch (ClassNotFoundException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
    }

    /** An output stream that writes references for what cannot be serialized. */
    static final class Out extends ObjectOutputStream {
        private final Exporter exporter;

        Out(OutputStream out, Exporter exporter) throws IOException {
            super(out);
            this.exporter = exporter;
            enableReplaceObject(true);
        }

        @Override
        protected Object replaceObject(Object o) {
            if (o == null) {
                return null;
            }
            Object ref = exporter.export(o);
            if (ref != null) {
                return ref;
            }
            if (o instanceof Optional<?> opt) {
                return new OptionalRef(opt.orElse(null), opt.isPresent());
            }
            if (o instanceof Record r && !(o instanceof Serializable)) {
                return recordRef(r);
            }
            return o;
        }

        /** Writes one message and forgets it, so later messages carry fresh state. */
        synchronized void send(Object message) throws IOException {
            writeObject(message);
            reset();
            flush();
        }
    }

    /** An input stream that resolves references. */
    static final class In extends ObjectInputStream {
        private final Exporter exporter;

        In(InputStream in, Exporter exporter) throws IOException {
            super(in);
            this.exporter = exporter;
            enableResolveObject(true);
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            try {
                return Class.forName(desc.getName(), false, Rpc.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                return super.resolveClass(desc);
            }
        }

        @Override
        protected Object resolveObject(Object o) {
            return switch (o) {
                case OptionalRef ref -> ref.present() ? Optional.of(ref.value()) : Optional.empty();
                case RecordRef ref -> newRecord(ref);
                case HandleRef ignored -> exporter.resolve(o);
                case HomeRef ignored -> exporter.resolve(o);
                case ForeignRef ignored -> exporter.resolve(o);
                case OpaqueRef ignored -> exporter.resolve(o);
                case SegmentRef ignored -> exporter.resolve(o);
                default -> o;
            };
        }
    }

    /** Whether {@code o} can travel by value. */
    static boolean serializable(Object o) {
        return o instanceof Serializable || o instanceof MemorySegment || o instanceof Record
                || o instanceof Optional;
    }
}
