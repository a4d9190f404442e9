package org.jdapl.tools.dtest;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jdapl.tools.ToolException;

/**
 * What the two sides of dtest say to each other: the private data of connect, accept and reject,
 * and the messages sent over the connection. Everything is big-endian, so that the sides may run
 * on different hosts.
 *
 * <p>Private data (connect): magic, version, kind ({@link #KIND_REJECT_PROBE} or
 * {@link #KIND_CONNECT}), flags (connect-only, validate), buffer length, burst, message length.
 * A message: magic, type, then three 64-bit values (their meaning depends on the type), then
 * padding up to the message length.
 */
final class Wire {
    static final int MAGIC = 0x64747374; // "dtst"
    static final byte VERSION = 1;

    static final byte KIND_REJECT_PROBE = 1;
    static final byte KIND_CONNECT = 2;
    static final byte KIND_ACCEPT = 3;
    static final byte KIND_REJECT = 4;

    static final byte FLAG_CONNECT_ONLY = 1;
    static final byte FLAG_VALIDATE = 2;

    /** The message header: magic, type and three values. */
    static final int HEADER = 32;

    /** The server's RDMA buffer: values rmr_context, target address, length. */
    static final int MSG_INFO = 1;
    /** The client finished its RDMA Writes: value seed of the data written. */
    static final int MSG_WRITE_DONE = 2;
    /** The server's answer to WRITE_DONE: value 0 if the data was right, else mismatch offset + 1; value2 the seed of the data to read. */
    static final int MSG_WRITE_CHECKED = 3;
    /** A ping: value the sequence number. */
    static final int MSG_PING = 4;
    /** The answer to a ping: value the sequence number. */
    static final int MSG_PONG = 5;
    /** The client is done and disconnects next. */
    static final int MSG_BYE = 6;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private Wire() {
    }

    /** The parameters a client sends in its connect private data. */
    record ConnectRequest(byte kind, boolean connectOnly, boolean validate, int bufLen, int burst, int msgLen) {
    }

    /** A message read from a receive buffer. */
    record Message(int type, long value, long value2, long value3) {
    }

    static byte[] connectData(byte kind, DtestOptions options) {
        ByteBuffer b = ByteBuffer.allocate(20).order(ByteOrder.BIG_ENDIAN);
        b.putInt(MAGIC).put(VERSION).put(kind)
                .put((byte) ((options.connectOnly() ? FLAG_CONNECT_ONLY : 0) | (options.validate() ? FLAG_VALIDATE : 0)))
                .put((byte) 0).putInt(options.bufLen()).putInt(options.burst()).putInt(options.msgLen());
        return b.array();
    }

    /**
     * Decodes a client's connect private data.
     *
     * @throws ToolException FAILURE for data that is not a dtest client's
     */
    static ConnectRequest parseConnect(byte[] data) {
        if (data.length < 20) {
            throw ToolException.failure("connection request with " + data.length + " bytes of private data: not a dtest client");
        }
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.BIG_ENDIAN);
        int magic = b.getInt();
        byte version = b.get();
        byte kind = b.get();
        byte flags = b.get();
        b.get();
        if (magic != MAGIC || version != VERSION || (kind != KIND_REJECT_PROBE && kind != KIND_CONNECT)) {
            throw ToolException.failure("connection request whose private data is not a dtest client's (version "
                    + version + ", kind " + kind + ")");
        }
        int bufLen = b.getInt();
        int burst = b.getInt();
        int msgLen = b.getInt();
        if (bufLen < 1 || burst < 1 || msgLen < HEADER) {
            throw ToolException.failure("connection request with bad parameters: buffer " + bufLen + ", burst "
                    + burst + ", message " + msgLen);
        }
        return new ConnectRequest(kind, (flags & FLAG_CONNECT_ONLY) != 0, (flags & FLAG_VALIDATE) != 0,
                bufLen, burst, msgLen);
    }

    static byte[] acceptData() {
        return ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC).put(VERSION).put(KIND_ACCEPT)
                .putShort((short) 0).array();
    }

    static boolean isAccept(byte[] data) {
        return Arrays.equals(data, acceptData());
    }

    static final String REJECT_TEXT = "reject probe";

    static byte[] rejectData() {
        byte[] text = REJECT_TEXT.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(8 + text.length).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC).put(VERSION)
                .put(KIND_REJECT).putShort((short) text.length).put(text).array();
    }

    static boolean isReject(byte[] data) {
        return Arrays.equals(data, rejectData());
    }

    static void write(MemorySegment slot, int type, long value, long value2, long value3) {
        slot.set(INT, 0, MAGIC);
        slot.set(INT, 4, type);
        slot.set(LONG, 8, value);
        slot.set(LONG, 16, value2);
        slot.set(LONG, 24, value3);
    }

    /**
     * Decodes a received message of {@code length} bytes.
     *
     * @throws ToolException FAILURE for a message that is not dtest's
     */
    static Message read(MemorySegment slot, long length) {
        if (length < HEADER || slot.get(INT, 0) != MAGIC) {
            throw ToolException.failure("received a " + length + "-byte message that is not dtest's");
        }
        return new Message(slot.get(INT, 4), slot.get(LONG, 8), slot.get(LONG, 16), slot.get(LONG, 24));
    }

    static String typeName(int type) {
        return switch (type) {
            case MSG_INFO -> "INFO";
            case MSG_WRITE_DONE -> "WRITE_DONE";
            case MSG_WRITE_CHECKED -> "WRITE_CHECKED";
            case MSG_PING -> "PING";
            case MSG_PONG -> "PONG";
            case MSG_BYE -> "BYE";
            default -> "type " + type;
        };
    }
}
