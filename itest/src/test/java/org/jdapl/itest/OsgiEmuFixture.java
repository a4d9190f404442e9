package org.jdapl.itest;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;

/**
 * The emulated provider under the conformance kit as an OSGi consumer sees it: IAs opened by name
 * ({@code emu0}, the provider's default IA) through the {@link DatRegistry} service. The cases that
 * need a situation a healthy fabric never produces use the provider's test hooks
 * ({@code org.jdapl.provider.emu.EmuFaults}); the provider bundle keeps that package private, so
 * they are reached through the class loader of the provider service's bundle.
 */
final class OsgiEmuFixture implements ConformanceFixture {
    private final DatRegistry registry;
    private final String iaName;
    private final Method unassignedLoopbackAddress;
    private final Method breakConnection;
    private final Method holdTransfers;

    OsgiEmuFixture(DatRegistry registry, DatProvider emu, String iaName) {
        this.registry = registry;
        this.iaName = iaName;
        try {
            Class<?> faults = emu.getClass().getClassLoader().loadClass("org.jdapl.provider.emu.EmuFaults");
            unassignedLoopbackAddress = faults.getMethod("unassignedLoopbackAddress");
            breakConnection = faults.getMethod("breakConnection", Endpoint.class);
            holdTransfers = faults.getMethod("holdTransfers", InterfaceAdapter.class, boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the emulated provider bundle has no test hooks EmuFaults", e);
        }
    }

    @Override
    public String name() {
        return "emu-osgi";
    }

    @Override
    public IaPair openPair() {
        InterfaceAdapter first = registry.open(iaName, 64);
        try {
            return new IaPair(first, registry.open(iaName, 64));
        } catch (RuntimeException e) {
            first.close();
            throw e;
        }
    }

    @Override
    public SocketAddress unreachableAddress() {
        return (SocketAddress) call(unassignedLoopbackAddress);
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        try {
            return List.of(UnixDomainSocketAddress.of("x"), InetSocketAddress.createUnresolved("nowhere.invalid", 0),
                    new InetSocketAddress(InetAddress.getByName("239.1.2.3"), 0));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("a literal multicast address did not parse", e);
        }
    }

    @Override
    public void breakTransport(Endpoint ep) {
        call(breakConnection, ep);
    }

    @Override
    public boolean canHoldTransfers() {
        return true;
    }

    @Override
    public void holdTransfers(InterfaceAdapter ia, boolean hold) {
        call(holdTransfers, ia, hold);
    }

    private static Object call(Method hook, Object... args) {
        try {
            return hook.invoke(null, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
