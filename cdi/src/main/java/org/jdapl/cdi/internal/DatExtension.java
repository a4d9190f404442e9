package org.jdapl.cdi.internal;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.context.RequestScoped;
import jakarta.enterprise.context.spi.AlterableContext;
import jakarta.enterprise.context.spi.Context;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.AfterDeploymentValidation;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.enterprise.inject.spi.BeforeShutdown;
import jakarta.enterprise.inject.spi.DefinitionException;
import jakarta.enterprise.inject.spi.DeploymentException;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.InjectionPoint;
import jakarta.enterprise.inject.spi.ProcessInjectionPoint;
import jakarta.inject.Provider;
import java.lang.annotation.Annotation;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jdapl.cdi.Ia;
import org.jdapl.cdi.IaScope;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.RegistryEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The portable extension that makes jdapl injectable: a {@link DatRegistry} bean (application
 * scoped), one bean per {@link Ia} name and scope found at an injection point (opened by
 * {@code dat_ia_open} when created, closed ABRUPT by its disposer), deployment validation of the
 * required IAs, and the registry's {@link RegistryEvent}s fired as CDI events.
 *
 * <p>Outside OSGi the registry is {@link DatRegistry#standalone(Map)} configured by
 * {@link Settings} (MicroProfile Config where present, else system properties); inside OSGi the
 * {@code DatRegistry} service is handed to {@link #DatExtension(DatRegistry)}.
 *
 * <p>It needs full CDI (portable extensions: {@code ProcessInjectionPoint}, synthetic beans in
 * {@code AfterBeanDiscovery}); nothing in it is specific to one CDI implementation.
 */
public class DatExtension implements Extension {
    /** The length of an injected IA's asynchronous EVD. */
    public static final int ASYNC_EVD_QLEN = 64;

    private static final Logger LOG = LoggerFactory.getLogger(DatExtension.class);

    /** One bean: an IA name in a scope. */
    private record Key(String name, IaScope scope) {
    }

    private final Supplier<DatRegistry> registrySource;
    private final Object lock = new Object();
    /** Guarded by lock. */
    private DatRegistry registry;
    /** The (name, scope)s injected, and whether any injection point requires it. Guarded by itself. */
    private final Map<Key, Boolean> wanted = new LinkedHashMap<>();
    /** The IAs the beans have open, and their bean. Guarded by itself. */
    private final Map<InterfaceAdapter, Key> open = new IdentityHashMap<>();
    private volatile BeanManager beanManager;
    private final Consumer<RegistryEvent> listener = this::onRegistryEvent;
    private volatile boolean listening;

    /** Outside OSGi (found by ServiceLoader): the standalone registry, configured by {@link Settings}. */
    public DatExtension() {
        this(() -> DatRegistry.standalone(Settings.read()));
    }

    /** With the registry given (the {@code DatRegistry} service in OSGi). */
    public DatExtension(DatRegistry registry) {
        this(() -> Objects.requireNonNull(registry, "registry"));
    }

    private DatExtension(Supplier<DatRegistry> registrySource) {
        this.registrySource = registrySource;
    }

    /** The registry the beans use (made on first call outside OSGi). */
    public DatRegistry registry() {
        synchronized (lock) {
            if (registry == null) {
                registry = registrySource.get();
                LOG.info("CDI: DAT registry {}", registry.configurationSource());
            }
            return registry;
        }
    }

    void injectionPoint(@Observes ProcessInjectionPoint<?, ?> event) {
        InjectionPoint point = event.getInjectionPoint();
        Ia ia = iaQualifier(point);
        if (ia == null) {
            return;
        }
        Boolean required = requiredFor(point.getType());
        if (required == null) {
            event.addDefinitionError(new DefinitionException("@Ia qualifies an InterfaceAdapter or an "
                    + "Instance<InterfaceAdapter>, not " + point.getType().getTypeName() + ": " + point));
            return;
        }
        synchronized (wanted) {
            wanted.merge(new Key(ia.value(), ia.scope()), required, Boolean::logicalOr);
        }
    }

    void afterBeanDiscovery(@Observes AfterBeanDiscovery event) {
        // The bean class is the bean's type: containers make their client proxies of it (OpenWebBeans
        // subclasses the bean class of a normal-scoped synthetic bean).
        event.addBean().beanClass(DatRegistry.class).types(DatRegistry.class, Object.class)
                .qualifiers(Default.Literal.INSTANCE, Any.Literal.INSTANCE)
                .scope(ApplicationScoped.class)
                .createWith(context -> registry());
        Map<Key, Boolean> beans;
        synchronized (wanted) {
            beans = Map.copyOf(wanted);
        }
        for (Key key : beans.keySet()) {
            event.addBean().beanClass(InterfaceAdapter.class).types(InterfaceAdapter.class, Object.class)
                    .qualifiers(Ia.Literal.of(key.name(), key.scope()), Any.Literal.INSTANCE)
                    .scope(scopeOf(key.scope()))
                    .produceWith(instance -> open(key))
                    .disposeWith((ia, instance) -> close(ia));
        }
    }

    /**
     * Every required IA must open now: the registry's own error (name, dat.conf source, why) is a
     * deployment problem, not a failure at first use. Each is opened once and closed again.
     */
    void afterDeploymentValidation(@Observes AfterDeploymentValidation event, BeanManager manager) {
        DatRegistry r;
        try {
            r = registry();
        } catch (DatException e) {
            event.addDeploymentProblem(new DeploymentException("jdapl: no DAT registry: " + e.getMessage(), e));
            return;
        }
        synchronized (wanted) {
            wanted.entrySet().stream().filter(Map.Entry::getValue).map(e -> e.getKey().name()).distinct()
                    .forEach(name -> {
                        try (InterfaceAdapter probe = r.open(name, ASYNC_EVD_QLEN)) {
                            LOG.debug("CDI: @Ia(\"{}\") opens ({})", name, probe.name());
                        } catch (DatException e) {
                            event.addDeploymentProblem(new DeploymentException("@Ia(\"" + name
                                    + "\") InterfaceAdapter cannot be opened: " + e.getMessage(), e));
                        }
                    });
        }
        beanManager = manager;
        r.addListener(listener);
        listening = true;
    }

    void beforeShutdown(@Observes BeforeShutdown event) {
        if (listening) {
            listening = false;
            registry().removeListener(listener);
        }
    }

    private InterfaceAdapter open(Key key) {
        InterfaceAdapter ia = registry().open(key.name(), ASYNC_EVD_QLEN);
        synchronized (open) {
            open.put(ia, key);
        }
        LOG.debug("CDI: opened IA {} ({} scope)", key.name(), key.scope());
        return ia;
    }

    /** The disposer: {@code dat_ia_close} ABRUPT, unless the IA is freed already (broken by its provider leaving). */
    private void close(InterfaceAdapter ia) {
        Key key;
        synchronized (open) {
            key = open.remove(ia);
        }
        if (ia.isFreed()) {
            LOG.debug("CDI: IA {} was freed already", key);
            return;
        }
        try {
            ia.close();
            LOG.debug("CDI: closed IA {}", key);
        } catch (DatException e) {
            LOG.debug("CDI: IA {} was closed already", ia, e);
        }
    }

    /**
     * A registry event becomes a CDI event. An application-scoped IA broken by its provider leaving
     * (REG_06) is dropped from its context first, so that the next call through the injected proxy
     * opens it again; IAs the beans did not open are not announced.
     */
    private void onRegistryEvent(RegistryEvent event) {
        BeanManager manager = beanManager;
        if (manager == null || !listening) {
            return;
        }
        if (event instanceof RegistryEvent.IaBroken broken) {
            Key key;
            synchronized (open) {
                key = open.get(broken.ia());
            }
            if (key == null) {
                return;
            }
            if (key.scope() == IaScope.APPLICATION) {
                dropApplicationInstance(manager, key, broken.ia());
            }
        }
        manager.getEvent().fire(event);
    }

    private static void dropApplicationInstance(BeanManager manager, Key key, InterfaceAdapter ia) {
        Bean<?> bean = manager.resolve(manager.getBeans(InterfaceAdapter.class, Ia.Literal.of(key.name(), key.scope())));
        Context context = manager.getContext(ApplicationScoped.class);
        if (bean != null && context instanceof AlterableContext alterable && context.get(bean) == ia) {
            alterable.destroy(bean);
            LOG.info("CDI: IA {} was broken by its provider leaving; the next call opens it again", key.name());
        }
    }

    private static Ia iaQualifier(InjectionPoint point) {
        for (Annotation qualifier : point.getQualifiers()) {
            if (qualifier instanceof Ia ia) {
                return ia;
            }
        }
        return null;
    }

    /** True for InterfaceAdapter, false for Instance or Provider of it, null for anything else. */
    private static Boolean requiredFor(Type type) {
        if (type == InterfaceAdapter.class) {
            return true;
        }
        if (type instanceof ParameterizedType p && (p.getRawType() == Instance.class || p.getRawType() == Provider.class)
                && p.getActualTypeArguments()[0] == InterfaceAdapter.class) {
            return false;
        }
        return null;
    }

    private static Class<? extends Annotation> scopeOf(IaScope scope) {
        return switch (scope) {
            case APPLICATION -> ApplicationScoped.class;
            case REQUEST -> RequestScoped.class;
            case DEPENDENT -> Dependent.class;
        };
    }
}
