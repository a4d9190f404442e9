package org.jdapl.provider.ofa.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import java.util.function.Function;

/**
 * A shared library loaded by soname with {@link SymbolLookup#libraryLookup}, or the reason it could
 * not be. Downcall handles capture {@code errno}, which {@link Errno} reads after a failed call.
 */
public final class NativeLibrary {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private final String soname;
    private final SymbolLookup lookup;
    private final String failure;

    private NativeLibrary(String soname, SymbolLookup lookup, String failure) {
        this.soname = soname;
        this.lookup = lookup;
        this.failure = failure;
    }

    /**
     * Loads a library for the life of the JVM; a library that is not there gives an instance whose
     * {@link #isLoaded()} is false and whose {@link #failure()} says why.
     */
    public static NativeLibrary load(String soname) {
        try {
            return new NativeLibrary(soname, SymbolLookup.libraryLookup(soname, Arena.global()), null);
        } catch (IllegalArgumentException | IllegalCallerException e) {
            return new NativeLibrary(soname, null, soname + " cannot be loaded: " + e.getMessage());
        }
    }

    /** The C library's lookup (poll, eventfd, fcntl, ...). */
    public static NativeLibrary libc() {
        return new NativeLibrary("libc", LINKER.defaultLookup(), null);
    }

    /** Whether the library was found. */
    public boolean isLoaded() {
        return lookup != null;
    }

    /** Why the library is not loaded, or null. */
    public String failure() {
        return failure;
    }

    /** The soname. */
    public String soname() {
        return soname;
    }

    /**
     * A downcall handle to an exported function; its first parameter is the errno capture segment
     * ({@link Errno#capture()}).
     *
     * @throws UnsatisfiedLinkError if the library is not loaded or lacks the symbol
     */
    public MethodHandle function(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(symbol(name), descriptor, CAPTURE_ERRNO);
    }

    /** Whether the library exports {@code name}. */
    public boolean has(String name) {
        return lookup != null && lookup.find(name).isPresent();
    }

    private MemorySegment symbol(String name) {
        if (lookup == null) {
            throw new UnsatisfiedLinkError(failure);
        }
        Optional<MemorySegment> s = lookup.find(name);
        return s.orElseThrow(() -> new UnsatisfiedLinkError(soname + " has no symbol " + name));
    }

    /**
     * A downcall handle for data-path functions (post, poll) that return their error and run
     * briefly: no errno capture, and a critical call (no thread state transition). Its first
     * parameter is the function's address (a pointer read from a struct, e.g.
     * {@code ibv_context.ops}), so that one handle, kept in a constant, serves every device.
     */
    public static MethodHandle dataPath(FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(descriptor, Linker.Option.critical(false));
    }

    /** A downcall handle to a function pointer read from a struct (e.g. {@code ibv_context.ops}). */
    public static MethodHandle pointer(MemorySegment function, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(function, descriptor, CAPTURE_ERRNO);
    }

    /**
     * The bindings of one library, made on first use: the library is loaded by soname and the
     * bindings built from it once; if either fails, every call fails with the same reason. Shared by
     * {@code Verbs} and {@code RdmaCm}.
     *
     * @param <T> the bindings
     */
    public static final class Loader<T> {
        private final String soname;
        private final Function<NativeLibrary, T> bind;
        private volatile T instance;
        private volatile String failure;

        public Loader(String soname, Function<NativeLibrary, T> bind) {
            this.soname = soname;
            this.bind = bind;
        }

        /**
         * The bindings, loading the library on the first call.
         *
         * @throws UnsatisfiedLinkError with the reason if the library (or a symbol) is missing
         */
        public T get() {
            T t = instance;
            if (t != null) {
                return t;
            }
            synchronized (this) {
                if (instance == null && failure == null) {
                    NativeLibrary lib = load(soname);
                    if (!lib.isLoaded()) {
                        failure = lib.failure();
                    } else {
                        try {
                            instance = bind.apply(lib);
                        } catch (UnsatisfiedLinkError e) {
                            failure = e.getMessage();
                        }
                    }
                }
                if (instance == null) {
                    throw new UnsatisfiedLinkError(failure);
                }
                return instance;
            }
        }

        /** Why the library cannot be used, or null if it can (loads it if not done yet). */
        public String unavailableReason() {
            try {
                get();
                return null;
            } catch (UnsatisfiedLinkError e) {
                return e.getMessage();
            }
        }
    }
}
