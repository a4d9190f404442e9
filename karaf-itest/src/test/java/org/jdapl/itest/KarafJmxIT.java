package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.Map;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.management.IaCountersMXBean;
import org.jdapl.dat.management.IaCountersNames;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.ServiceReference;

/**
 * Counters where operators look, in Karaf: an IA the registry opens is an {@link IaCountersMXBean}
 * service with the JMX whiteboard's {@code jmx.objectname}, which Karaf's management registers in its
 * MBean server, so that a JMX console sees {@code org.jdapl:type=IaCounters,name=<ia>,id=<n>} with the
 * IA's name, its provider and OFED's DCNT_IA_* counters, and the counts move as the consumer creates
 * objects.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KarafJmxIT extends JdaplContainerTest {

    @Override
    @Configuration
    public Option[] configuration() {
        return KarafContainer.configuration(getClass(), "jdapl", "jdapl-emu");
    }

    @Test
    public void anOpenIasCountersAreAnMBeanInKarafsMBeanServer() throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        MBeanServer server = awaitService(MBeanServer.class, null);
        try (InterfaceAdapter ia = registry.open("emu0", 8)) {
            ServiceReference<IaCountersMXBean> ref = awaitReference();
            Object objectName = ref.getProperty(IaCountersNames.JMX_OBJECTNAME);
            assertTrue("the service names its MBean: " + objectName, objectName instanceof String);
            ObjectName name = new ObjectName((String) objectName);
            await("Karaf's MBean server has " + name, () -> server.isRegistered(name));
            Set<ObjectName> all = server.queryNames(new ObjectName("org.jdapl:type=IaCounters,*"), null);
            assertTrue("the query finds it: " + all, all.contains(name));
            assertEquals("emu0", server.getAttribute(name, "IaName"));
            assertEquals(Boolean.TRUE, server.getAttribute(name, "Open"));
            assertEquals(Boolean.TRUE, server.getAttribute(name, "Counting"));
            long before = counter(server, name, "DCNT_IA_PZ_CREATE");
            ia.createPz();
            ia.createPz();
            assertEquals("two PZs created", before + 2, counter(server, name, "DCNT_IA_PZ_CREATE"));
            server.invoke(name, "reset", new Object[0], new String[0]);
            assertEquals("after reset", 0, counter(server, name, "DCNT_IA_PZ_CREATE"));
        }
    }

    private ServiceReference<IaCountersMXBean> awaitReference() {
        awaitService(IaCountersMXBean.class, null);
        ServiceReference<IaCountersMXBean> ref = context.getServiceReference(IaCountersMXBean.class);
        assertTrue("an IaCountersMXBean service", ref != null);
        return ref;
    }

    /**
     * One counter of the bean's {@code Counters} attribute: an open-type table of key and value where
     * the MBean server maps the MXBean, a {@code Map} of {@code java.base} where it calls the bean as
     * it is (Karaf's whiteboard registration); a JMX client reads either without jdapl's classes.
     */
    private static long counter(MBeanServer server, ObjectName name, String counter) throws Exception {
        Object counters = server.getAttribute(name, "Counters");
        if (counters instanceof TabularData table) {
            CompositeData row = table.get(new Object[] {counter});
            assertTrue(counter + " in " + table.keySet(), row != null);
            return (Long) row.get("value");
        }
        assertTrue("Counters is a map: " + counters, counters instanceof Map<?, ?>);
        Object value = ((Map<?, ?>) counters).get(counter);
        assertTrue(counter + " in " + counters, value instanceof Long);
        return (Long) value;
    }
}
