package org.jdapl.registry;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.management.IaCountersMXBean;
import org.jdapl.dat.management.IaCountersNames;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The IAs opened through the registry, each published as an {@link IaCountersMXBean} named
 * {@code org.jdapl:type=IaCounters,name=<ia>,id=<n>} while it is open: in the platform MBean server
 * by default, or through another {@link Publisher} (in OSGi, a service with the JMX whiteboard's
 * {@code jmx.objectname} property). A closed IA is withdrawn at the next open or listing, since a
 * consumer closes its IA without the registry. Thread-safe.
 */
final class IaMonitor {
    private static final Logger LOG = LoggerFactory.getLogger(IaMonitor.class);

    /** Where an IA's MBean goes while the IA is open. */
    interface Publisher {
        /** Publishes {@code bean} under {@code name}; the returned action withdraws it. */
        Runnable publish(ObjectName name, IaCountersMXBean bean);
    }

    /** The platform MBean server. */
    static final Publisher PLATFORM = (name, bean) -> {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            server.registerMBean(bean, name);
        } catch (JMException e) {
            LOG.warn("the counters of {} are not published in JMX", name, e);
            return () -> {
            };
        }
        return () -> {
            try {
                server.unregisterMBean(name);
            } catch (JMException e) {
                LOG.debug("{} was unregistered already", name, e);
            }
        };
    };

    private record Published(IaCounters bean, ObjectName name, Runnable withdraw) {
    }

    /** The ids of the names, unique in the JVM (several registries publish in one MBean server). */
    private static final AtomicLong IDS = new AtomicLong();
    private final List<Published> open = new ArrayList<>();
    private volatile Publisher publisher;

    IaMonitor(Publisher publisher) {
        this.publisher = publisher;
    }

    /** Publishes from now on through {@code newPublisher} (IAs published before stay where they are). */
    void publishThrough(Publisher newPublisher) {
        this.publisher = newPublisher;
    }

    /** {@code ia} was opened through {@code provider}: it is published, and closed IAs withdrawn. */
    void opened(InterfaceAdapter ia, String provider) {
        String name = ProviderBinding.iaName(ia);
        IaCounters bean = new IaCounters(ia, name, provider);
        ObjectName objectName = IaCountersNames.objectName(name, IDS.incrementAndGet());
        Runnable withdraw = publisher.publish(objectName, bean);
        synchronized (open) {
            open.add(new Published(bean, objectName, withdraw));
        }
        sweep();
    }

    /** The counters of the IAs open now, in opening order (closed ones are withdrawn first). */
    List<IaCountersMXBean> live() {
        sweep();
        synchronized (open) {
            return open.stream().map(p -> (IaCountersMXBean) p.bean()).toList();
        }
    }

    /** Withdraws every MBean (the registry stops). */
    void close() {
        List<Published> all;
        synchronized (open) {
            all = List.copyOf(open);
            open.clear();
        }
        all.forEach(p -> p.withdraw().run());
    }

    private void sweep() {
        List<Published> closed = new ArrayList<>();
        synchronized (open) {
            open.removeIf(p -> !p.bean().isOpen() && closed.add(p));
        }
        closed.forEach(p -> p.withdraw().run());
    }
}
