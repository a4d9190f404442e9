package org.jdapl.cdi;

import java.util.List;
import java.util.Map;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.ProviderStatus;

/**
 * A provider a test can add to and remove from the registry it was injected: a fresh emulated
 * provider under another name (the registry knows providers by name), with no default IA.
 */
final class RenamedProvider implements DatProvider {
    private final DatProvider inner;
    private final String name;

    RenamedProvider(DatProvider inner, String name) {
        this.inner = inner;
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String version() {
        return inner.version();
    }

    @Override
    public boolean threadSafe() {
        return inner.threadSafe();
    }

    @Override
    public List<IaSpec> defaultIas() {
        return List.of();
    }

    @Override
    public ProviderStatus check(IaSpec spec) {
        return inner.check(spec);
    }

    @Override
    public InterfaceAdapter open(IaSpec spec, int asyncEvdMinQlen) {
        return inner.open(spec, asyncEvdMinQlen);
    }

    @Override
    public void abort(InterfaceAdapter ia, String reason) {
        inner.abort(ia, reason);
    }

    @Override
    public Map<HandleType, Integer> openObjects() {
        return inner.openObjects();
    }
}
