package org.jdapl.tools.soak;

import java.io.File;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * What the process holds at one moment: heap in use (after a GC), native memory (the committed
 * total of {@code -XX:NativeMemoryTracking=summary}, or -1 without it), direct buffers, threads and
 * file descriptors.
 */
record Resources(long heapBytes, long nativeCommittedBytes, long directBytes, int threads, int fds) {
    private static final Pattern TOTAL = Pattern.compile("Total: reserved=(\\d+)(KB|MB)?, committed=(\\d+)(KB|MB)?");

    /** Measures now, after a GC and a moment for threads that are ending to end. */
    static Resources now() {
        System.gc();
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.gc();
        var memory = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        long direct = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                direct = pool.getMemoryUsed();
            }
        }
        String[] fds = new File("/proc/self/fd").list();
        return new Resources(memory.getUsed(), nativeCommitted(), direct,
                ManagementFactory.getThreadMXBean().getThreadCount(), fds == null ? -1 : fds.length);
    }

    /** The committed total of the NMT summary, or -1 if native memory tracking is off. */
    static long nativeCommitted() {
        try {
            Object text = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                    new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
            Matcher m = TOTAL.matcher(String.valueOf(text));
            if (!m.find()) {
                return -1;
            }
            long scale = "MB".equals(m.group(4)) ? 1L << 20 : "KB".equals(m.group(4)) ? 1L << 10 : 1;
            return Long.parseLong(m.group(3)) * scale;
        } catch (Exception | LinkageError e) {
            return -1;
        }
    }
}
