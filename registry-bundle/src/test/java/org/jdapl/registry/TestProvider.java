package org.jdapl.registry;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.ProviderStatus;

/**
 * A provider for the registry's tests: opens in-memory IAs ({@link TestIa}), serves the ia_params
 * its predicate accepts, records what it was asked to open, and breaks IAs on abort as the SPI
 * says (ASYNC_ERROR_IA_CATASTROPHIC on the async EVD, then every handle fails INVALID_HANDLE).
 */
class TestProvider implements DatProvider {
    /** Every IA's thread name starts with this, for leak checks. */
    static final String THREAD_PREFIX = "jdapl-test-ia-";

    private final String name;
    private final Set<String> aliases;
    private final boolean threadSafe;
    private final List<IaSpec> defaults;
    private final Predicate<IaSpec> serves;
    private final List<IaSpec> opened = new CopyOnWriteArrayList<>();
    private final List<TestIa> live = new CopyOnWriteArrayList<>();
    private final List<String> aborts = new CopyOnWriteArrayList<>();

    TestProvider(String name, Set<String> aliases, boolean threadSafe, List<IaSpec> defaults,
                 Predicate<IaSpec> serves) {
        this.name = name;
        this.aliases = aliases;
        this.threadSafe = threadSafe;
        this.defaults = defaults;
        this.serves = serves;
    }

    /** A thread-safe provider that serves everything and offers no default IA. */
    static TestProvider named(String name) {
        return new TestProvider(name, Set.of(), true, List.of(), spec -> true);
    }

    /** A thread-safe provider that serves everything and offers {@code defaultIa} with {@code params}. */
    static TestProvider withDefault(String name, String defaultIa, String params) {
        return new TestProvider(name, Set.of(), true,
                List.of(new IaSpec(defaultIa, params, "", true, "provider " + name)), spec -> true);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String version() {
        return "1.0";
    }

    @Override
    public Set<String> libraryAliases() {
        return aliases;
    }

    @Override
    public boolean threadSafe() {
        return threadSafe;
    }

    @Override
    public List<IaSpec> defaultIas() {
        return defaults;
    }

    @Override
    public ProviderStatus check(IaSpec spec) {
        return serves.test(spec) ? ProviderStatus.ok("serves '" + spec.iaParams() + "'")
                : ProviderStatus.cannot("no device for '" + spec.iaParams() + "'");
    }

    @Override
    public InterfaceAdapter open(IaSpec spec, int asyncEvdMinQlen) {
        opened.add(spec);
        if (!serves.test(spec)) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "no device for '" + spec.iaParams() + "'");
        }
        TestIa ia = new TestIa(this, spec, asyncEvdMinQlen);
        live.add(ia);
        return ia;
    }

    @Override
    public void abort(InterfaceAdapter ia, String reason) {
        if (!(ia instanceof TestIa testIa) || !live.contains(testIa)) {
            throw HandleType.IA.invalid("not an IA of provider " + name);
        }
        if (testIa.isFreed()) {
            return;
        }
        aborts.add(reason);
        testIa.asyncEvd().post(new DatEvent.AsyncError(testIa.asyncEvd(), EventNumber.ASYNC_ERROR_IA_CATASTROPHIC,
                testIa, 0, reason));
        testIa.tearDown();
    }

    @Override
    public Map<HandleType, Integer> openObjects() {
        Map<HandleType, Integer> out = new EnumMap<>(HandleType.class);
        out.put(HandleType.IA, live.size());
        out.put(HandleType.EVD, live.stream().mapToInt(TestIa::evdCount).sum());
        return out;
    }

    void closed(TestIa ia) {
        live.remove(ia);
    }

    /** What the registry asked this provider to open, in order. */
    List<IaSpec> opened() {
        return new ArrayList<>(opened);
    }

    List<String> aborts() {
        return new ArrayList<>(aborts);
    }

    @Override
    public String toString() {
        return "TestProvider[" + name + "]";
    }
}
