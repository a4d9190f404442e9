package org.jdapl.launcher;

import java.io.PrintStream;
import org.apache.felix.framework.Logger;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;

/**
 * The framework's own log (Felix writes to standard output by default): on standard error, so
 * that the commands' output stays clean; the level is felix.log.level.
 */
final class FrameworkLog extends Logger {
    private final PrintStream err;

    FrameworkLog(PrintStream err) {
        this.err = err;
    }

    @Override
    protected void doLog(Bundle bundle, ServiceReference sr, int level, String msg, Throwable throwable) {
        print(bundle, level, msg, throwable);
    }

    /** The resolver's messages (e.g. its wiring at debug level) come this way. */
    @Override
    protected void doLog(int level, String msg, Throwable throwable) {
        print(null, level, msg, throwable);
    }

    private void print(Bundle bundle, int level, String msg, Throwable throwable) {
        String name = switch (level) {
            case LOG_ERROR -> "ERROR";
            case LOG_WARNING -> "WARN";
            case LOG_INFO -> "INFO";
            default -> "DEBUG";
        };
        err.println("jdapl: felix " + name + ": " + (bundle == null ? "" : bundle.getSymbolicName() + ": ") + msg
                + (throwable == null ? "" : " (" + throwable + ")"));
    }
}
