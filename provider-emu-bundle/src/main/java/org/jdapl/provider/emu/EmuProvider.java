package org.jdapl.provider.emu;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jdapl.provider.emu.loopback.LoopbackFabric;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.ProviderStatus;
import org.jdapl.provider.emu.tcp.Frame;
import org.jdapl.provider.emu.tcp.TcpFabric;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The emulated DAT provider ({@code dat.provider=emu}): a software RDMA NIC whose IAs live in this
 * JVM and reach each other over the loopback fabric by address (127.77.0.0/16).
 *
 * <p>In OSGi it is a Declarative Services component registering the {@link DatProvider} service; IAs
 * beyond the default {@code emu0} are declared by factory configurations of
 * {@code org.jdapl.provider.emu.ia} ({@code ia_name}, {@code ia_params}). In plain Java it is found by
 * {@link java.util.ServiceLoader} or constructed directly.
 *
 * <p>{@code ia_params}: {@code loopback}, {@code loopback <label>}, or {@code tcp <host>:<port>} for an IA
 * that other processes and hosts reach over TCP. All objects are thread safe.
 */
@Component(service = DatProvider.class, property = {
        DatProvider.PROVIDER_PROPERTY + "=" + EmuLimits.PROVIDER_NAME,
        DatProvider.VERSION_PROPERTY + "=" + EmuLimits.PROVIDER_VERSION})
public final class EmuProvider implements DatProvider {
    private static final Logger LOG = LoggerFactory.getLogger(EmuProvider.class);
    private static final IaSpec DEFAULT_IA = new IaSpec("emu0", "loopback", "", true, "built-in");

    private final Set<EmuIa> open = ConcurrentHashMap.newKeySet();
    /** Set when the component is deactivated (guarded by {@code open}): no IA opens any more. */
    private boolean deactivated;
    private final List<EmuIaDeclaration> declarations = new CopyOnWriteArrayList<>();

    /** A provider with no IA open; the default IA {@code emu0} is offered by {@link #defaultIas()}. */
    public EmuProvider() {
    }

    /** {@inheritDoc} Always {@code emu}. */
    @Override
    public String name() {
        return EmuLimits.PROVIDER_NAME;
    }

    @Override
    public String version() {
        return EmuLimits.PROVIDER_VERSION;
    }

    @Override
    public boolean threadSafe() {
        return true;
    }

    /** {@code emu0} ({@code loopback}) and the IAs declared by configuration. */
    @Override
    public List<IaSpec> defaultIas() {
        List<IaSpec> specs = new ArrayList<>();
        specs.add(DEFAULT_IA);
        for (EmuIaDeclaration d : declarations) {
            specs.add(d.spec());
        }
        return List.copyOf(specs);
    }

    @Override
    public ProviderStatus check(IaSpec spec) {
        if (spec == null) {
            return ProviderStatus.cannot("no IA entry");
        }
        try {
            IaParams params = IaParams.parse(spec.iaParams());
            if (params.tcp() != null) {
                return ProviderStatus.ok("fabric tcp: an IA listening on " + params.tcp() + " (protocol version "
                        + Frame.VERSION + ")");
            }
            return ProviderStatus.ok("fabric " + params.fabric() + ": IAs of this JVM at addresses in 127.77.0.0/16");
        } catch (DatException e) {
            return ProviderStatus.cannot(e.getMessage());
        }
    }

    /**
     * {@code dat_ia_open} of an emulated IA.
     *
     * @throws DatException INVALID_PARAMETER for ia_params other than {@code loopback [label]} or
     *         {@code tcp <host>:<port>}, an address that cannot be listened on, or an asynchronous EVD
     *         length under 1; INSUFFICIENT_RESOURCES if the fabric has no free address
     */
    @Override
    public InterfaceAdapter open(IaSpec spec, int asyncEvdMinQlen) {
        if (spec == null) {
            throw DatException.invalidParameter(1, "no IA entry");
        }
        checkActive();
        EmuLimits.checkEvdQlen(asyncEvdMinQlen, "asynchronous EVD");
        IaParams params = IaParams.parse(spec.iaParams());
        Fabric fabric = params.tcp() != null ? new TcpFabric(params.tcp()) : LoopbackFabric.INSTANCE;
        EmuIa ia = new EmuIa(this, spec.iaName(), params, fabric, asyncEvdMinQlen);
        boolean added;
        synchronized (open) {
            added = !deactivated && open.add(ia);
        }
        if (!added) {
            // REG_06: deactivated while the IA was made; the deactivation did not see it.
            ia.abort("the emulated provider is stopping");
            checkActive();
        }
        LOG.debug("opened IA {} at {}", spec.iaName(), ia.address());
        return ia;
    }

    /** REG_06: a deactivated provider opens nothing (its bundle may be going away with its classes). */
    private void checkActive() {
        synchronized (open) {
            if (deactivated) {
                throw new DatException(DatReturnType.PROVIDER_NOT_FOUND, DatReturnSubtype.NAME_NOT_REGISTERED,
                        "the emulated provider is stopping");
            }
        }
    }

    @Override
    public void abort(InterfaceAdapter ia, String reason) {
        if (ia instanceof EmuIa emu && emu.provider() == this) {
            emu.abort(reason);
        }
    }

    @Override
    public Map<HandleType, Integer> openObjects() {
        Map<HandleType, Integer> counts = new EnumMap<>(HandleType.class);
        for (HandleType t : HandleType.values()) {
            counts.put(t, 0);
        }
        for (EmuIa ia : open) {
            ia.countObjects(counts);
        }
        return counts;
    }

    void closed(EmuIa ia) {
        open.remove(ia);
    }

    /** The provider service goes away: every IA it opened is aborted. */
    @Deactivate
    void deactivate() {
        List<EmuIa> toAbort;
        synchronized (open) {
            deactivated = true;
            toAbort = List.copyOf(open);
        }
        for (EmuIa ia : toAbort) {
            ia.abort("the emulated provider is stopping");
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addDeclaration(EmuIaDeclaration declaration) {
        declarations.add(declaration);
    }

    void removeDeclaration(EmuIaDeclaration declaration) {
        declarations.remove(declaration);
    }
}
