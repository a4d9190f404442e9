package org.jdapl.provider.emu;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;

/** The checks of a remote IA address that every fabric of the emulated provider shares (IP addresses). */
public final class RemoteAddresses {
    private RemoteAddresses() {
    }

    /**
     * {@code address} as a resolved IP socket address.
     *
     * @param notIp what the fabric reaches IAs by, for the error on another kind of address
     * @throws DatException INVALID_ADDRESS (MALFORMED for null or unresolved, UNSUPPORTED otherwise)
     */
    public static InetSocketAddress ip(SocketAddress address, String notIp) {
        if (address == null) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_MALFORMED,
                    "no remote address");
        }
        if (!(address instanceof InetSocketAddress inet)) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_UNSUPPORTED,
                    notIp + ", not by " + address.getClass().getSimpleName());
        }
        if (inet.isUnresolved() || inet.getAddress() == null) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_MALFORMED,
                    "unresolved address " + inet);
        }
        return inet;
    }

    /** Whether {@code ip} is a wildcard, multicast or limited broadcast address, which names no IA. */
    public static boolean namesNoIa(InetAddress ip) {
        byte[] b = ip.getAddress();
        boolean limitedBroadcast = ip instanceof Inet4Address && (b[0] & b[1] & b[2] & b[3]) == (byte) 0xff;
        return ip.isAnyLocalAddress() || ip.isMulticastAddress() || limitedBroadcast;
    }

    /** The error for an address that names no IA. */
    public static DatException noIa(InetSocketAddress inet) {
        return new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_UNSUPPORTED,
                "a wildcard, multicast or broadcast address cannot name an IA: " + inet);
    }
}
