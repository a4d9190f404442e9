package org.jdapl.provider.ofa;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.Enumeration;
import java.util.regex.Pattern;
import org.jdapl.dat.DatException;

/**
 * The {@code ia_params} of an OFA dat.conf entry, as OFED writes them: {@code "<device> <port>"}
 * (e.g. {@code "mlx5_0 1"}, {@code "rxe0 1"}: a verbs device and port, as the scm/ucm providers take
 * them) or {@code "<netdev|IPv4> <port>"} (e.g. {@code "ib0 0"}, {@code "192.168.77.1 0"}: an
 * interface or address that rdma_cm resolves to a device, as the cma provider takes them).
 *
 * @param first the device name, netdev name or IPv4 address
 * @param port the port number (0 for the netdev/IP form: the port rdma_cm finds)
 */
record OfaIaParams(String first, int port) {
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    /**
     * Parses the two fields.
     *
     * @throws DatException INVALID_PARAMETER if they are not a name and a port number
     */
    static OfaIaParams parse(String iaParams) {
        String[] f = iaParams == null ? new String[0] : iaParams.trim().split("\\s+");
        if (f.length != 2 || f[0].isEmpty()) {
            throw DatException.invalidParameter(1,
                    "ofa ia_params must be \"<device> <port>\" or \"<netdev|IPv4> <port>\", not \"" + iaParams + "\"");
        }
        int port;
        try {
            port = Integer.parseInt(f[1]);
        } catch (NumberFormatException e) {
            throw DatException.invalidParameter(1, "ofa ia_params port \"" + f[1] + "\" is not a number");
        }
        if (port < 0 || port > 255) {
            throw DatException.invalidParameter(1, "ofa ia_params port " + port + " is out of range 0..255");
        }
        return new OfaIaParams(f[0], port);
    }

    /** Whether the first field is an IPv4 address. */
    boolean isAddress() {
        return IPV4.matcher(first).matches();
    }

    /**
     * The IPv4 address of the netdev/IP form: the address itself, or the first IPv4 address of the
     * interface; null if there is none.
     */
    Inet4Address address() {
        try {
            if (isAddress()) {
                return (Inet4Address) InetAddress.getByName(first);
            }
            NetworkInterface nif = NetworkInterface.getByName(first);
            if (nif == null) {
                return null;
            }
            for (Enumeration<InetAddress> e = nif.getInetAddresses(); e.hasMoreElements(); ) {
                if (e.nextElement() instanceof Inet4Address v4) {
                    return v4;
                }
            }
            return null;
        } catch (UnknownHostException | SocketException e) {
            return null;
        }
    }

    /** The dat.conf {@code ia_params} text. */
    @Override
    public String toString() {
        return first + " " + port;
    }
}
