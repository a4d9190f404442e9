package org.jdapl.provider.emu;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;

/**
 * The parsed {@code ia_params} of an emulated IA: {@code loopback}, {@code loopback <label>}, or
 * {@code tcp <host>:<port>} ({@code [v6-address]:port} for IPv6; port 0 picks a free one).
 *
 * @param fabric the fabric name ({@code loopback} or {@code tcp})
 * @param label an optional name shown in the adapter name, or empty
 * @param tcp the address a tcp IA listens on, or null for loopback
 */
record IaParams(String fabric, String label, InetSocketAddress tcp) {
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final String USAGE = "expected 'loopback [label]' or 'tcp <host>:<port>'";

    /**
     * Parses ia_params.
     *
     * @throws DatException INVALID_PARAMETER saying why the parameters cannot be served
     */
    static IaParams parse(String iaParams) {
        String text = iaParams == null ? "" : iaParams.strip();
        String[] words = text.isEmpty() ? new String[0] : text.split("\\s+");
        if (words.length == 0) {
            throw invalid("ia_params is empty; " + USAGE);
        }
        if (words[0].equals("tcp")) {
            if (words.length != 2) {
                throw invalid("ia_params '" + text + "': " + USAGE);
            }
            return new IaParams("tcp", words[1], parseAddress(text, words[1]));
        }
        if (!words[0].equals("loopback")) {
            throw invalid("ia_params '" + text + "': unknown fabric '" + words[0] + "'; " + USAGE);
        }
        if (words.length > 2) {
            throw invalid("ia_params '" + text + "': " + USAGE);
        }
        String label = words.length == 2 ? words[1] : "";
        if (!label.isEmpty() && !LABEL.matcher(label).matches()) {
            throw invalid("ia_params '" + text + "': a label is 1 to 64 of A-Z a-z 0-9 . _ -");
        }
        return new IaParams(words[0], label, null);
    }

    private static InetSocketAddress parseAddress(String text, String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw invalid("ia_params '" + text + "': the tcp fabric needs <host>:<port>");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw invalid("ia_params '" + text + "': port '" + hostPort.substring(colon + 1) + "' is not a number");
        }
        if (port < 0 || port > 0xffff) {
            throw invalid("ia_params '" + text + "': port " + port + " is not in 0..65535");
        }
        try {
            InetAddress ip = InetAddress.getByName(host);
            if (ip.isMulticastAddress()) {
                throw invalid("ia_params '" + text + "': an IA cannot listen on a multicast address");
            }
            return new InetSocketAddress(ip, port);
        } catch (UnknownHostException e) {
            throw invalid("ia_params '" + text + "': host '" + host + "' does not resolve");
        }
    }

    private static DatException invalid(String message) {
        return new DatException(DatReturnType.INVALID_PARAMETER, DatReturnSubtype.INVALID_ARG2, message);
    }
}
