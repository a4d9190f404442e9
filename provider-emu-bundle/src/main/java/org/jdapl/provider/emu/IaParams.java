package org.jdapl.provider.emu;

import java.util.regex.Pattern;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;

/**
 * The parsed {@code ia_params} of an emulated IA: {@code loopback} or {@code loopback <label>}.
 *
 * @param fabric the fabric name ({@code loopback})
 * @param label an optional name shown in the adapter name, or empty
 */
record IaParams(String fabric, String label) {
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /**
     * Parses ia_params.
     *
     * @throws DatException INVALID_PARAMETER saying why the parameters cannot be served
     */
    static IaParams parse(String iaParams) {
        String text = iaParams == null ? "" : iaParams.strip();
        String[] words = text.isEmpty() ? new String[0] : text.split("\\s+");
        if (words.length == 0) {
            throw invalid("ia_params is empty; the emulated provider expects 'loopback [label]'");
        }
        if (!words[0].equals("loopback")) {
            if (words[0].equals("tcp")) {
                throw invalid("ia_params '" + text + "': the tcp fabric is not available in this version of the "
                        + "emulated provider; use 'loopback [label]'");
            }
            throw invalid("ia_params '" + text + "': unknown fabric '" + words[0] + "'; expected 'loopback [label]'");
        }
        if (words.length > 2) {
            throw invalid("ia_params '" + text + "': expected 'loopback [label]'");
        }
        String label = words.length == 2 ? words[1] : "";
        if (!label.isEmpty() && !LABEL.matcher(label).matches()) {
            throw invalid("ia_params '" + text + "': a label is 1 to 64 of A-Z a-z 0-9 . _ -");
        }
        return new IaParams(words[0], label);
    }

    private static DatException invalid(String message) {
        return new DatException(DatReturnType.INVALID_PARAMETER, DatReturnSubtype.INVALID_ARG2, message);
    }
}
