package org.jdapl.tools.soak;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jdapl.tools.ToolException;

/**
 * The serving process of a soak run ({@code soak --serve}, started by the command the user gave):
 * where it serves, as it announced on its standard output, and the faults done to it: SIGKILL and
 * restart, and "reopen" (close its IA with everything in flight and open it again).
 */
final class Peer implements Stream.Target, AutoCloseable {
    /** The line a serving process prints once it serves: {@code soak: serving ADDRESS QUAL}. */
    static final String SERVING = "soak: serving ";
    /** The line it prints when its standard input ends: {@code soak: served N connections, M canaries damaged}. */
    static final String SERVED = "soak: served ";
    private static final long START_SECONDS = 120;

    private final List<String> command;
    private Process process;
    private BlockingQueue<String> lines;
    private Thread reader;
    private volatile SocketAddress address;
    private volatile long connQual;
    /** Canaries damaged as the serving processes reported them when they ended normally. */
    long canaryDamaged;

    Peer(List<String> command) {
        this.command = List.copyOf(command);
        start();
    }

    @Override
    public SocketAddress address() {
        return address;
    }

    @Override
    public long connQual() {
        return connQual;
    }

    private synchronized void start() {
        try {
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw ToolException.failure("soak: cannot start the serving process " + command + ": " + e.getMessage());
        }
        BlockingQueue<String> q = new ArrayBlockingQueue<>(1024);
        lines = q;
        Process p = process;
        reader = Thread.ofPlatform().daemon().name("soak-peer-" + p.pid()).start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    q.offer(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        });
        awaitServing();
    }

    private void awaitServing() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_SECONDS);
        try {
            while (System.nanoTime() < deadline) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null && line.startsWith(SERVING)) {
                    String[] words = line.substring(SERVING.length()).split(" ");
                    String hostPort = words[0].substring(words[0].indexOf('/') + 1);
                    int colon = hostPort.lastIndexOf(':');
                    address = new InetSocketAddress(hostPort.substring(0, colon).replace("[", "").replace("]", ""),
                            Integer.parseInt(hostPort.substring(colon + 1)));
                    connQual = Long.parseLong(words[1]);
                    return;
                }
                if (line == null && !process.isAlive() && lines.isEmpty()) {
                    throw ToolException.failure("soak: the serving process ended (" + process.exitValue() + ")");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process.destroyForcibly();
        throw ToolException.failure("soak: the serving process did not serve within " + START_SECONDS + " s");
    }

    /** SIGKILL, then a new serving process. */
    synchronized void killAndRestart() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        start();
    }

    /** Asks the serving process to close its IA abruptly and open it again; returns once it serves again. */
    synchronized void reopen() {
        try {
            OutputStream in = process.getOutputStream();
            in.write("reopen\n".getBytes(StandardCharsets.US_ASCII));
            in.flush();
        } catch (IOException e) {
            throw ToolException.failure("soak: the serving process is gone: " + e.getMessage());
        }
        awaitServing();
    }

    /** Ends the serving process by closing its standard input, and takes its report. */
    @Override
    public synchronized void close() {
        try {
            process.getOutputStream().close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null && line.startsWith(SERVED)) {
                    String[] words = line.substring(SERVED.length()).split(" ");
                    canaryDamaged += Long.parseLong(words[2].replace(",", ""));
                    break;
                }
                if (line == null && !process.isAlive() && lines.isEmpty()) {
                    break;
                }
            }
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
            reader.join(5_000);
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
