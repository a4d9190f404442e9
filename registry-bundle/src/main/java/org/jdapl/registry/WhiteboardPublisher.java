package org.jdapl.registry;

import java.util.Dictionary;
import java.util.Hashtable;

import javax.management.ObjectName;

import org.jdapl.dat.management.IaCountersMXBean;
import org.jdapl.dat.management.IaCountersNames;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/**
 * Publishes an IA's counters in OSGi as an {@link IaCountersMXBean} service with the JMX whiteboard's
 * {@code jmx.objectname} property, which a JMX whiteboard (Karaf's, Aries JMX) registers in its MBean
 * server, and which {@code dat:counters} and the health check find.
 */
final class WhiteboardPublisher implements IaMonitor.Publisher {
    private final BundleContext context;

    WhiteboardPublisher(BundleContext context) {
        this.context = context;
    }

    @Override
    public Runnable publish(ObjectName name, IaCountersMXBean bean) {
        Dictionary<String, Object> properties = new Hashtable<>();
        properties.put(IaCountersNames.JMX_OBJECTNAME, name.toString());
        properties.put("dat.ia.name", bean.getIaName());
        properties.put("dat.provider", bean.getProvider());
        ServiceRegistration<IaCountersMXBean> registration =
                context.registerService(IaCountersMXBean.class, bean, properties);
        return () -> {
            try {
                registration.unregister();
            } catch (IllegalStateException e) {
                // Unregistered already (the bundle stopped).
            }
        };
    }
}
