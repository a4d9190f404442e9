package org.jdapl.itest;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.CyclicBufferAppender;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * The container's Logback, seen from a test: the events that the RECENT appender of
 * logback-container.xml holds. Only the container loads this class (Logback is a bundle there and
 * not on the test class path).
 */
final class ContainerLog {
    private final CyclicBufferAppender<ILoggingEvent> recent;

    private ContainerLog(CyclicBufferAppender<ILoggingEvent> recent) {
        this.recent = recent;
    }

    /** The class of the logger factory SLF4J is bound to in the container. */
    static String boundFactory() {
        return LoggerFactory.getILoggerFactory().getClass().getName();
    }

    /** The RECENT appender, or an AssertionError if SLF4J is not bound to Logback. */
    @SuppressWarnings("unchecked")
    static ContainerLog recent() {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (!(factory instanceof LoggerContext logback)) {
            throw new AssertionError("SLF4J is bound to " + factory.getClass().getName() + ", not to Logback");
        }
        var appender = logback.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).getAppender("RECENT");
        if (appender == null) {
            throw new AssertionError("no RECENT appender: logback-container.xml was not read");
        }
        return new ContainerLog((CyclicBufferAppender<ILoggingEvent>) appender);
    }

    /**
     * The first recent line whose logger name starts with {@code prefix} and not with
     * {@code excludedPrefix}, as "LEVEL logger - message", or null.
     */
    String firstLine(String prefix, String excludedPrefix) {
        for (int i = 0; i < recent.getLength(); i++) {
            ILoggingEvent e = recent.get(i);
            if (e.getLoggerName().startsWith(prefix) && !e.getLoggerName().startsWith(excludedPrefix)) {
                return e.getLevel() + " " + e.getLoggerName() + " - " + e.getFormattedMessage();
            }
        }
        return null;
    }

    /** Every recent line containing {@code text}, for assertions on what a component logged. */
    java.util.List<String> linesContaining(String text) {
        java.util.List<String> lines = new java.util.ArrayList<>();
        for (int i = 0; i < recent.getLength(); i++) {
            ILoggingEvent e = recent.get(i);
            String line = e.getLevel() + " " + e.getLoggerName() + " - " + e.getFormattedMessage();
            if (line.contains(text)) {
                lines.add(line);
            }
        }
        return lines;
    }
}
