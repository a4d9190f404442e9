package org.jdapl.tools.dapltest;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.jdapl.tools.ToolException;

/**
 * What the client and the server of dapltest say to each other: the private data of a connect,
 * and the messages sent over a connection. Everything is big-endian, so that the sides may run on
 * different hosts.
 *
 * <p>Connect private data: magic, kind ({@link #CONNECT_CONTROL} for the connection that carries
 * the request, {@link #CONNECT_DATA} for a test endpoint), session, endpoint index. A message:
 * magic, type, four 64-bit values whose meaning depends on the type, and for a request, a refusal
 * and a result a text (the command line, the reason).
 */
final class Wire {
    static final int MAGIC = 0x64617074; // "dapt"

    static final byte CONNECT_CONTROL = 1;
    static final byte CONNECT_DATA = 2;
    /** The length of the connect private data. */
    static final int PRIVATE_DATA = 13;

    /** The header of a message: magic, type, four values. */
    static final int HEADER = 40;
    /** The largest message (a request with its command line). */
    static final int MAX_MESSAGE = 4096;

    /** Client to server: run a test; the text is the client's command line. */
    static final int MSG_REQUEST = 1;
    /** Server to client: the session (value 0) runs; its test endpoints connect with it. */
    static final int MSG_ACCEPTED = 2;
    /** Server to client: the request was refused; the text says why. */
    static final int MSG_REFUSED = 3;
    /** Server to client: the session ended; value 0 is 0 if it passed, the text says what failed. */
    static final int MSG_RESULT = 4;
    /** A test endpoint is ready for the next iteration: rmr_context, address, length of its buffer, credits. */
    static final int MSG_READY = 5;
    /** A test endpoint's RDMA Write or RDMA Read finished. */
    static final int MSG_SYNC = 6;
    /** The performance server posted more receives: value 0 is how many. */
    static final int MSG_CREDIT = 7;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private Wire() {
    }

    /** Connect private data as read by the server. */
    record Connect(byte kind, int session, int index) {
    }

    /** A message read from a receive buffer. */
    record Message(int type, long v0, long v1, long v2, long v3, String text) {
        /** A message without text. */
        Message(int type, long v0, long v1, long v2, long v3) {
            this(type, v0, v1, v2, v3, "");
        }
    }

    static byte[] connect(byte kind, int session, int index) {
        return ByteBuffer.allocate(PRIVATE_DATA).putInt(MAGIC).put(kind).putInt(session).putInt(index).array();
    }

    /** The connect private data, or null if it is not dapltest's. */
    static Connect parseConnect(byte[] data) {
        if (data == null || data.length < PRIVATE_DATA) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(data);
        if (b.getInt() != MAGIC) {
            return null;
        }
        return new Connect(b.get(), b.getInt(), b.getInt());
    }

    /** Writes {@code m} at the start of {@code slot}; returns its length. */
    static int write(MemorySegment slot, Message m) {
        byte[] text = m.text().getBytes(StandardCharsets.UTF_8);
        int length = HEADER + (text.length == 0 ? 0 : 4 + text.length);
        if (length > slot.byteSize()) {
            throw ToolException.usage("dapltest: the message is too long (" + length + " bytes, at most "
                    + slot.byteSize() + ")");
        }
        slot.set(INT, 0, MAGIC);
        slot.set(INT, 4, m.type());
        slot.set(LONG, 8, m.v0());
        slot.set(LONG, 16, m.v1());
        slot.set(LONG, 24, m.v2());
        slot.set(LONG, 32, m.v3());
        if (text.length > 0) {
            slot.set(INT, HEADER, text.length);
            MemorySegment.copy(MemorySegment.ofArray(text), 0, slot, HEADER + 4, text.length);
        }
        return length;
    }

    /**
     * Reads the message of {@code length} bytes at the start of {@code slot}.
     *
     * @throws ToolException FAILURE if it is not a dapltest message
     */
    static Message read(MemorySegment slot, long length) {
        if (length < HEADER || slot.get(INT, 0) != MAGIC) {
            throw ToolException.failure("received a message that is not dapltest's (" + length + " bytes)");
        }
        String text = "";
        if (length > HEADER + 4) {
            int n = slot.get(INT, HEADER);
            if (n < 0 || HEADER + 4L + n > length) {
                throw ToolException.failure("received a message with a bad text length " + n);
            }
            byte[] bytes = new byte[n];
            MemorySegment.copy(slot, HEADER + 4, MemorySegment.ofArray(bytes), 0, n);
            text = new String(bytes, StandardCharsets.UTF_8);
        }
        return new Message(slot.get(INT, 4), slot.get(LONG, 8), slot.get(LONG, 16), slot.get(LONG, 24),
                slot.get(LONG, 32), text);
    }
}
