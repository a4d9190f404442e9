package org.jdapl.dat.management;

import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/** The names an {@link IaCountersMXBean} is published under. */
public final class IaCountersNames {
    /** The JMX domain of jdapl's MBeans. */
    public static final String DOMAIN = "org.jdapl";
    /** The {@code type} key of an IA's counters. */
    public static final String TYPE = "IaCounters";
    /** The service property the OSGi JMX whiteboard registers an MBean service under. */
    public static final String JMX_OBJECTNAME = "jmx.objectname";

    private IaCountersNames() {
    }

    /**
     * {@code org.jdapl:type=IaCounters,name=<ia>,id=<n>}: {@code id} tells apart two opens of one IA
     * name.
     *
     * @throws IllegalArgumentException for a name JMX cannot carry
     */
    public static ObjectName objectName(String iaName, long id) {
        try {
            return new ObjectName(DOMAIN + ":type=" + TYPE + ",name=" + ObjectName.quote(iaName) + ",id=" + id);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** The pattern of every IA's counters, {@code org.jdapl:type=IaCounters,*}. */
    public static ObjectName pattern() {
        try {
            return new ObjectName(DOMAIN + ":type=" + TYPE + ",*");
        } catch (MalformedObjectNameException e) {
            throw new IllegalStateException(e);
        }
    }
}
