package org.jdapl.registry;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProviderInfo;
import org.jdapl.dat.RegistryEntry;
import org.jdapl.dat.RegistryEvent;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.ProviderStatus;
import org.jdapl.registry.conf.ApiVersion;
import org.jdapl.registry.conf.ConfSource;
import org.jdapl.registry.conf.DatConfEntry;
import org.jdapl.registry.conf.DatConfLocator;
import org.jdapl.registry.conf.DatConfParser;
import org.jdapl.registry.conf.ParseProblem;
import org.jdapl.registry.conf.ParseResult;
import org.jdapl.registry.conf.ProviderVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * uDAPL's static registry over providers that come and go: the entries of one dat.conf (found by a
 * {@link DatConfLocator}), of IA configurations, and the default IAs of the providers present.
 *
 * <p>Selection is uDAPL's: the key is exact (name, API major and minor, thread safety), only
 * {@code default} user-mode entries are opened, entries of one name are tried in order (file, then
 * configurations, then provider defaults for names no entry declares) and the first provider that
 * opens the IA wins. Field 5 names the provider by its {@link DatProvider#name() name} or one of its
 * {@link DatProvider#libraryAliases() aliases}; uDAPL's OFA libraries ({@link #OFA_LIBRARIES}) map
 * onto the provider named {@value #OFA}, {@code libdaplofi.so.2} ({@link #OFI_LIBRARIES}) onto {@value #OFI},
 * so that their lines are listed with the provider's name even while it is absent.
 *
 * <p>The registry counts the IAs opened through each provider (an IA stops counting once its
 * consumer closes it) and, when a provider is removed, has the provider break them
 * ({@link DatProvider#abort}). Listeners ({@link #addListener}) hear of providers added and removed
 * and of the IAs broken (REG_06). It starts no threads. Thread safe.
 */
public class ProviderRegistry implements DatRegistry {
    /** uDAPL's OFA provider libraries, mapped onto the provider named {@value #OFA}. */
    public static final Set<String> OFA_LIBRARIES = Set.of("libdaplofa.so.2", "libdaploscm.so.2", "libdaploucm.so.2");
    /** The name of the OFA verbs provider. */
    public static final String OFA = "ofa";
    /** The library name of jdapl's libfabric provider in dat.conf, in OFED's style. */
    public static final Set<String> OFI_LIBRARIES = Set.of("libdaplofi.so.2");
    /** The name of the libfabric (OFI) provider. */
    public static final String OFI = "ofi";

    private static final Logger LOG = LoggerFactory.getLogger(ProviderRegistry.class);

    private final DatConfLocator locator;
    private final Object lock = new Object();
    /** By provider name, in the order they were added. Guarded by lock. */
    private final Map<String, ProviderBinding> providers = new LinkedHashMap<>();
    private final RegistryListeners listeners = new RegistryListeners();
    /** By configuration pid. Guarded by lock. */
    private final Map<String, ConfiguredIa> configured = new TreeMap<>();
    /** Guarded by lock. */
    private Map<String, ?> configuration = Map.of();
    /** Guarded by lock. */
    private LoadedConf loaded = new LoadedConf(null, ParseResult.failed("the registry is not configured yet"));

    /** The dat.conf a registry has read: where from, and what it gave. */
    private record LoadedConf(ConfSource source, ParseResult result) {
    }

    /** An entry and the provider it maps onto now (null if absent). */
    private record Resolved(DatConfEntry entry, ProviderBinding binding, String providerName) {
    }

    /** A consistent view of the registry for one listing or open. */
    private record Snapshot(LoadedConf loaded, List<Resolved> items) {
        String error() {
            return loaded.result().error();
        }
    }

    /** A registry that finds its dat.conf through {@code locator}; call {@link #configure} to load it. */
    public ProviderRegistry(DatConfLocator locator) {
        this.locator = Objects.requireNonNull(locator);
    }

    /** The IAs opened through the registry, each published as an MBean while it is open. */
    final IaMonitor monitor = new IaMonitor(IaMonitor.PLATFORM);

    /**
     * Finds and reads the dat.conf for the given configuration (the Configuration Admin properties
     * of pid {@code org.jdapl.registry}; empty outside OSGi). An explicit file that cannot be read
     * leaves the registry with nothing loaded: every open fails until a readable file is configured.
     * IAs already open are not affected.
     */
    public void configure(Map<String, ?> configuration) {
        Map<String, ?> copy = configuration == null ? Map.of() : Map.copyOf(configuration);
        ConfSource source = locator.locate(copy);
        ParseResult result;
        if (source.invalidPath() != null) {
            result = ParseResult.failed("dat.conf " + source + "; nothing is loaded");
            LOG.error(result.error());
        } else if (source.builtIn()) {
            result = new ParseResult(List.of(), List.of(), 0, 0, null);
        } else {
            result = DatConfParser.readFile(source.file());
            if (!result.ok()) {
                result = ParseResult.failed(result.error() + " (named by " + source.origin() + ")");
            }
        }
        synchronized (lock) {
            this.configuration = copy;
            this.loaded = new LoadedConf(source, result);
        }
        LOG.info("dat registry: {}", configurationSource());
    }

    /** Reads the dat.conf again, with the configuration last given. */
    public void reload() {
        Map<String, ?> current;
        synchronized (lock) {
            current = configuration;
        }
        configure(current);
    }

    @Override
    public InterfaceAdapter openv(String iaName, int asyncEvdMinQlen, int datMajor, int datMinor, boolean threadSafe) {
        OpenRequest request = new OpenRequest(iaName, asyncEvdMinQlen, datMajor, datMinor, threadSafe);
        Snapshot snapshot = snapshot();
        if (snapshot.error() != null) {
            throw OpenRequest.notRegistered("IA '" + iaName + "' cannot be opened: " + snapshot.error());
        }
        List<Resolved> named = snapshot.items().stream().filter(r -> r.entry().iaName().equals(iaName)).toList();
        if (named.isEmpty()) {
            throw OpenRequest.notRegistered("no entry names IA '" + iaName + "' (" + configurationSource() + ")");
        }
        List<Resolved> candidates = named.stream().filter(r -> request.matches(r.entry())).toList();
        if (candidates.isEmpty()) {
            throw request.noMatch(named.stream().map(Resolved::entry).toList());
        }
        List<String> absent = new ArrayList<>();
        List<DatException> failures = new ArrayList<>();
        for (Resolved candidate : candidates) {
            DatConfEntry entry = candidate.entry();
            if (candidate.binding() == null) {
                absent.add(entry.source() + ": " + EntryStatus.absentReason(entry.libPath(), candidate.providerName()));
                continue;
            }
            InterfaceAdapter ia = openThrough(candidate.binding(), entry, asyncEvdMinQlen, failures);
            if (ia != null) {
                LOG.debug("opened IA {} through provider {} ({})", iaName, candidate.binding().name, entry.source());
                return ia;
            }
        }
        throw request.notOpened(failures, absent);
    }

    /** Opens one entry through its provider and counts it; null (and a failure added) if it did not open. */
    private InterfaceAdapter openThrough(ProviderBinding binding, DatConfEntry entry, int qlen,
                                         List<DatException> failures) {
        InterfaceAdapter ia;
        try {
            ia = binding.provider.open(entry.toSpec(), qlen);
        } catch (DatException e) {
            LOG.debug("provider {} did not open {}", binding.name, entry.source(), e);
            failures.add(new DatException(e.type(), e.subtype(), entry.source() + " (provider " + binding.name + "): "
                    + e.getMessage(), e));
            return null;
        } catch (RuntimeException | LinkageError e) {
            boolean removed;
            synchronized (lock) {
                removed = binding.removed();
            }
            if (removed) {
                // REG_06: the provider left while it opened the IA; its bundle's classes may be gone with it
                // (an updated and refreshed bundle throws NoClassDefFoundError for a class it had not loaded).
                LOG.debug("provider {} was removed while it opened {}", binding.name, entry.source(), e);
                failures.add(new DatException(DatReturnType.PROVIDER_NOT_FOUND, DatReturnSubtype.NAME_NOT_REGISTERED,
                        entry.source() + ": provider " + binding.name + " was removed while the IA was opened", e));
                return null;
            }
            LOG.warn("provider {} failed opening {}", binding.name, entry.source(), e);
            failures.add(new DatException(DatReturnType.INTERNAL_ERROR, DatReturnSubtype.NO_SUBTYPE,
                    entry.source() + " (provider " + binding.name + ") failed: " + e, e));
            return null;
        }
        if (ia == null) {
            failures.add(new DatException(DatReturnType.INTERNAL_ERROR, entry.source() + " (provider "
                    + binding.name + ") returned no IA"));
            return null;
        }
        boolean tracked;
        synchronized (lock) {
            tracked = binding.track(ia);
        }
        if (tracked) {
            monitor.opened(ia, binding.name);
        } else {
            binding.abortQuietly(ia, "provider " + binding.name + " was removed while the IA was opened");
            failures.add(new DatException(DatReturnType.PROVIDER_NOT_FOUND, DatReturnSubtype.NAME_NOT_REGISTERED,
                    entry.source() + ": provider " + binding.name + " was removed while the IA was opened"));
            return null;
        }
        return ia;
    }

    @Override
    public List<ProviderInfo> listProviders() {
        Set<ProviderInfo> open = new LinkedHashSet<>();
        for (RegistryEntry e : entries()) {
            if (e.openable()) {
                ApiVersion api = ApiVersion.parse(e.apiVersion());
                open.add(new ProviderInfo(e.iaName(), api.major(), api.minor(), e.threadSafe()));
            }
        }
        return List.copyOf(open);
    }

    @Override
    public List<RegistryEntry> entries() {
        Snapshot snapshot = snapshot();
        List<RegistryEntry> out = new ArrayList<>(snapshot.items().size());
        for (Resolved r : snapshot.items()) {
            int openIas;
            synchronized (lock) {
                openIas = r.binding() == null ? 0 : r.binding().openCount();
            }
            out.add(EntryStatus.evaluate(r.entry(), r.binding() == null ? null : r.binding().provider,
                    r.providerName(), snapshot.error(), openIas));
        }
        return List.copyOf(out);
    }

    @Override
    public void addProvider(DatProvider provider) {
        if (provider == null) {
            throw DatException.invalidParameter(1, "no provider");
        }
        String name = provider.name();
        if (name == null || name.isBlank()) {
            throw DatException.invalidParameter(1, "provider " + provider.getClass().getName() + " has no name");
        }
        synchronized (lock) {
            if (providers.containsKey(name)) {
                throw new DatException(DatReturnType.PROVIDER_ALREADY_REGISTERED,
                        "a provider named '" + name + "' is registered already");
            }
            providers.put(name, new ProviderBinding(provider, name));
        }
        LOG.info("provider {} {} added", name, provider.version());
        listeners.tell(new RegistryEvent.ProviderAdded(name, ProviderBinding.version(provider)));
    }

    @Override
    public void removeProvider(DatProvider provider) {
        if (provider == null) {
            throw DatException.invalidParameter(1, "no provider");
        }
        ProviderBinding binding;
        List<InterfaceAdapter> open;
        synchronized (lock) {
            binding = providers.values().stream().filter(b -> b.provider == provider).findFirst().orElse(null);
            if (binding == null) {
                throw new DatException(DatReturnType.PROVIDER_NOT_FOUND, "provider " + ProviderBinding.name(provider)
                        + " is not registered");
            }
            providers.remove(binding.name);
            open = binding.remove();
        }
        LOG.info("provider {} removed; breaking {} open IA(s)", binding.name, open.size());
        String reason = "provider " + binding.name + " was removed";
        List<String> broken = open.stream().map(ProviderBinding::iaName).toList();
        for (InterfaceAdapter ia : open) {
            binding.abortQuietly(ia, reason);
        }
        for (int i = 0; i < open.size(); i++) {
            listeners.tell(new RegistryEvent.IaBroken(open.get(i), broken.get(i), binding.name, reason));
        }
        listeners.tell(new RegistryEvent.ProviderRemoved(binding.name, ProviderBinding.version(provider), broken));
    }

    @Override
    public void addListener(Consumer<? super RegistryEvent> listener) {
        listeners.add(listener);
    }

    @Override
    public void removeListener(Consumer<? super RegistryEvent> listener) {
        listeners.remove(listener);
    }

    @Override
    public boolean providersRelated(String iaName1, String iaName2) {
        Snapshot snapshot = snapshot();
        Resolved a = relatedTarget(snapshot, iaName1, 1);
        Resolved b = relatedTarget(snapshot, iaName2, 2);
        return a.providerName() != null && a.providerName().equals(b.providerName())
                && a.entry().iaParams().equals(b.entry().iaParams());
    }

    /** The entry an open of {@code name} would try first: a present provider's, else the first. */
    private static Resolved relatedTarget(Snapshot snapshot, String name, int argument) {
        if (name == null) {
            throw DatException.invalidParameter(argument, "no IA name");
        }
        List<Resolved> usable = snapshot.items().stream().filter(r -> r.entry().iaName().equals(name)
                && r.entry().isDefault() && r.entry().apiVersion().isUser(Dat.VERSION_MAJOR, Dat.VERSION_MINOR))
                .toList();
        if (snapshot.error() != null || usable.isEmpty()) {
            throw OpenRequest.notRegistered("IA '" + name + "' is not registered"
                    + (snapshot.error() == null ? "" : ": " + snapshot.error()));
        }
        return usable.stream().filter(r -> r.binding() != null).findFirst().orElse(usable.getFirst());
    }

    @Override
    public String configurationSource() {
        LoadedConf conf;
        int configs;
        int badConfigs;
        synchronized (lock) {
            conf = loaded;
            configs = (int) configured.values().stream().filter(c -> c.entry() != null).count();
            badConfigs = configured.size() - configs;
        }
        StringBuilder sb = new StringBuilder();
        ParseResult result = conf.result();
        if (conf.source() == null) {
            sb.append("not configured");
        } else if (!result.ok()) {
            sb.append("error: ").append(result.error());
        } else if (conf.source().builtIn()) {
            sb.append(conf.source()).append(": provider default IAs only");
        } else {
            sb.append(conf.source()).append(": ").append(result.entries().size()).append(" entr")
                    .append(result.entries().size() == 1 ? "y" : "ies");
            if (result.problemCount() > 0) {
                sb.append(", ").append(result.problemCount()).append(" line")
                        .append(result.problemCount() == 1 ? "" : "s").append(" skipped");
            }
        }
        if (configs + badConfigs > 0) {
            sb.append("; ").append(configs).append(" IA configuration").append(configs == 1 ? "" : "s")
                    .append(" (").append(ConfiguredIa.FACTORY_PID).append(")");
            if (badConfigs > 0) {
                sb.append(", ").append(badConfigs).append(" malformed");
            }
        }
        return sb.toString();
    }

    /** The dat.conf lines skipped and the malformed IA configurations, for operators. */
    public List<String> problems() {
        List<String> out = new ArrayList<>();
        synchronized (lock) {
            if (!loaded.result().ok()) {
                out.add(loaded.result().error());
            }
            for (ParseProblem p : loaded.result().problems()) {
                out.add(p.toString());
            }
            int more = loaded.result().problemCount() - loaded.result().problems().size();
            if (more > 0) {
                out.add(more + " more lines skipped");
            }
            configured.values().stream().filter(c -> c.problem() != null).forEach(c -> out.add(c.problem()));
        }
        return out;
    }

    /** The number of IAs opened through the named provider and not closed yet (0 if it is absent). */
    public int openCount(String providerName) {
        synchronized (lock) {
            ProviderBinding binding = providers.get(providerName);
            return binding == null ? 0 : binding.openCount();
        }
    }

    /** The providers present, by name, with their number of open IAs. */
    public Map<String, Integer> openCounts() {
        synchronized (lock) {
            Map<String, Integer> out = new LinkedHashMap<>();
            providers.forEach((name, binding) -> out.put(name, binding.openCount()));
            return out;
        }
    }

    /** The providers present, by name, with what each says of itself ({@link DatProvider#status()}). */
    public Map<String, ProviderStatus> statuses() {
        Map<String, DatProvider> present = new LinkedHashMap<>();
        synchronized (lock) {
            providers.forEach((name, binding) -> present.put(name, binding.provider));
        }
        Map<String, ProviderStatus> out = new LinkedHashMap<>();
        present.forEach((name, provider) -> {
            try {
                out.put(name, provider.status());
            } catch (RuntimeException e) {
                out.put(name, ProviderStatus.cannot("status failed: " + e));
            }
        });
        return out;
    }

    /** Adds (or replaces) an IA declared by configuration. */
    void putConfiguredIa(ConfiguredIa ia) {
        if (ia.problem() != null) {
            LOG.warn("IA configuration skipped: {}", ia.problem());
        }
        synchronized (lock) {
            configured.put(ia.pid(), ia);
        }
    }

    /** Withdraws an IA declared by configuration; IAs already open stay open. */
    void removeConfiguredIa(String pid) {
        synchronized (lock) {
            configured.remove(pid);
        }
    }

    private Snapshot snapshot() {
        synchronized (lock) {
            List<Resolved> items = new ArrayList<>();
            Set<String> declared = new HashSet<>();
            for (DatConfEntry e : loaded.result().entries()) {
                items.add(resolve(e));
                declared.add(e.iaName());
            }
            for (ConfiguredIa c : configured.values()) {
                if (c.entry() != null) {
                    items.add(resolve(c.entry()));
                    declared.add(c.entry().iaName());
                }
            }
            for (ProviderBinding binding : providers.values()) {
                for (IaSpec spec : binding.defaultIas()) {
                    if (declared.add(spec.iaName())) {
                        DatConfEntry entry = new DatConfEntry(spec.iaName(),
                                new ApiVersion(false, Dat.VERSION_MAJOR, Dat.VERSION_MINOR), spec.threadSafe(), true,
                                binding.name, ProviderVersion.ofProvider(binding.name, binding.provider.version()),
                                spec.iaParams(), spec.platformParams(), "provider default (" + binding.name + ")");
                        items.add(new Resolved(entry, binding, binding.name));
                    }
                }
            }
            return new Snapshot(loaded, List.copyOf(items));
        }
    }

    /** Maps an entry's field 5 onto a provider: a name, then an alias, then the known library names (OFA, OFI). */
    private Resolved resolve(DatConfEntry entry) {
        String lib = entry.libPath();
        ProviderBinding binding = providers.get(lib);
        if (binding == null) {
            binding = providers.values().stream().filter(b -> b.aliases().contains(lib)).findFirst().orElse(null);
        }
        String known = OFA_LIBRARIES.contains(lib) ? OFA : OFI_LIBRARIES.contains(lib) ? OFI : null;
        if (binding == null && known != null) {
            binding = providers.get(known);
        }
        String providerName = binding != null ? binding.name : known;
        return new Resolved(entry, binding, providerName);
    }
}
