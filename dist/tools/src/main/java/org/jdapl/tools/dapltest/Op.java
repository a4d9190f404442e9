package org.jdapl.tools.dapltest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jdapl.tools.CommandArgs;
import org.jdapl.tools.ToolException;

/**
 * One operation of a dapltest transaction: which side starts it, what it is, how many bytes in
 * how many segments. As in uDAPL's dapltest: {@code client SR 256} (the client sends 256 bytes,
 * the server receives them), {@code server RW 4096 2} (the server RDMA-writes 4096 bytes from two
 * segments into the client's buffer), {@code client RR 8192} (the client RDMA-reads the server's
 * buffer).
 *
 * @param clientInitiates whether the client side starts the operation
 * @param kind send/receive, RDMA Read or RDMA Write
 * @param size the bytes moved
 * @param segments the scatter/gather entries the bytes are split into
 */
public record Op(boolean clientInitiates, Kind kind, int size, int segments) {
    /** The operations of dapltest. */
    public enum Kind {
        /** Send on one side, receive on the other. */
        SR,
        /** RDMA Read of the other side's buffer. */
        RR,
        /** RDMA Write into the other side's buffer. */
        RW
    }

    /** The size of an operation that names none, as OFED's dapltest. */
    public static final int DEFAULT_SIZE = 4096;

    /** The largest size of one operation. */
    public static final int MAX_SIZE = 1 << 30;

    @Override
    public String toString() {
        return (clientInitiates ? "client " : "server ") + kind + " " + size + (segments == 1 ? "" : " " + segments);
    }

    /**
     * Parses operations: {@code [client|server] SR|RR|RW [SIZE [SEGMENTS]]}, repeated (SIZE 4096 if left out). The side may
     * be left out only when {@code sideOptional} (the performance test: the client starts).
     *
     * @throws ToolException USAGE for words that are not operations
     */
    public static List<Op> parse(List<String> words, boolean sideOptional) {
        List<Op> ops = new ArrayList<>();
        int i = 0;
        while (i < words.size()) {
            boolean client = true;
            String word = words.get(i).toLowerCase(Locale.ROOT);
            if (word.equals("client") || word.equals("server")) {
                client = word.equals("client");
                i++;
            } else if (!sideOptional) {
                throw ToolException.usage("dapltest: expected 'client' or 'server' before '" + words.get(i) + "'");
            }
            if (i >= words.size()) {
                throw ToolException.usage("dapltest: an operation (SR, RR or RW) must follow '" + word + "'");
            }
            Kind kind;
            try {
                kind = Kind.valueOf(words.get(i).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw ToolException.usage("dapltest: unknown operation '" + words.get(i) + "' (SR, RR or RW)");
            }
            i++;
            int size = DEFAULT_SIZE;
            if (i < words.size() && !words.get(i).isEmpty() && Character.isDigit(words.get(i).charAt(0))) {
                size = (int) CommandArgs.parseNumber("dapltest", kind + " size", words.get(i++), 1, MAX_SIZE);
            }
            int segments = 1;
            if (i < words.size() && !words.get(i).isEmpty() && Character.isDigit(words.get(i).charAt(0))) {
                segments = (int) CommandArgs.parseNumber("dapltest", kind + " segments", words.get(i++), 1, 1024);
            }
            if (segments > size) {
                throw ToolException.usage("dapltest: " + kind + " " + size + " cannot be split into " + segments + " segments");
            }
            ops.add(new Op(client, kind, size, segments));
        }
        return ops;
    }

    /** The offset of segment {@code k} of {@code n} over {@code size} bytes. */
    static long segmentOffset(int size, int n, int k) {
        return (long) size * k / n;
    }
}
