package org.jdapl.tools.dapltest;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import org.jdapl.dat.DtoOperation;
import org.jdapl.tools.ToolException;

/**
 * The client's control connection to a dapltest server: it connects, sends the command line as the
 * request, learns its session, connects the test's endpoints with the session in their private
 * data, and receives the server's result.
 */
final class Client implements AutoCloseable {
    private final Side side;
    private final SocketAddress server;
    private final long connQual;
    private final Conn.Group group;
    private final Conn conn;
    private int session;
    private boolean connected;

    /**
     * Connects to the server.
     *
     * @throws ToolException FAILURE if the server cannot be reached within the timeout
     */
    Client(Side side, SocketAddress server, long connQual) {
        this.side = side;
        this.server = server;
        this.connQual = connQual;
        group = new Conn.Group(side, 1, 4);
        try {
            conn = new Conn(group, 0, Wire.MAX_MESSAGE, 1, 1, 4, 1, 1);
        } catch (RuntimeException e) {
            group.free();
            throw e;
        }
        try {
            conn.postRecv(0, 1);
            conn.connect(server, connQual, Wire.connect(Wire.CONNECT_CONTROL, 0, 0), "the dapltest server");
            connected = true;
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Resolves {@code -s HOST[:PORT]}. */
    static InetSocketAddress resolve(InetSocketAddress server) {
        InetSocketAddress resolved = new InetSocketAddress(server.getHostString(), server.getPort());
        if (resolved.isUnresolved()) {
            throw ToolException.failure("dapltest: cannot resolve host '" + server.getHostString() + "'");
        }
        return resolved;
    }

    /**
     * Sends the request and returns the session the server gave it.
     *
     * @throws ToolException FAILURE if the server refused it
     */
    int request(List<String> args) {
        conn.send(0, new Wire.Message(Wire.MSG_REQUEST, 0, 0, 0, 0, String.join("\0", args)), 2);
        group.requests.take(2, DtoOperation.SEND, "the request sent");
        Wire.Message m = conn.message(0, group.receives.take(1, DtoOperation.RECEIVE, "the server's answer"));
        if (m.type() == Wire.MSG_REFUSED) {
            throw ToolException.failure("the server refused the test: " + m.text());
        }
        if (m.type() != Wire.MSG_ACCEPTED) {
            throw ToolException.failure("the server answered with message type " + m.type());
        }
        session = (int) m.v0();
        conn.postRecv(0, 3);
        return session;
    }

    /** Connects a test endpoint of the session. */
    void connect(Conn c, int index, String what) {
        c.connect(server, connQual, Wire.connect(Wire.CONNECT_DATA, session, index), what);
    }

    /**
     * Waits for the server's result.
     *
     * @throws ToolException FAILURE if the server's side failed
     */
    void awaitResult() {
        Completions result = new Completions(group.recv, Math.max(side.timeoutMicros(), 60_000_000L), false);
        Wire.Message m = conn.message(0, result.take(3, DtoOperation.RECEIVE, "the server's result"));
        if (m.type() != Wire.MSG_RESULT) {
            throw ToolException.failure("the server sent message type " + m.type() + " instead of its result");
        }
        if (m.v0() != 0) {
            throw ToolException.failure("the server's side failed: " + m.text());
        }
    }

    /** Disconnects and frees the control connection. */
    @Override
    public void close() {
        try {
            if (connected && !side.ia().isFreed()) {
                connected = false;
                conn.disconnect("the control connection");
            }
        } finally {
            conn.free();
            if (!side.ia().isFreed()) {
                group.free();
            }
        }
    }
}
