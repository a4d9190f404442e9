package org.jdapl.dat;

import java.util.EnumSet;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A DAT flag bit. Flag sets are {@code Set}s of these enums in Java; {@link #bits} and
 * {@link #fromBits} convert to and from the numeric masks of {@code dat.h}.
 */
@ProviderType
public interface DatFlag {
    /** The flag's bit value in {@code dat.h}. */
    int value();

    /** The numeric mask of a set of flags. */
    static int bits(Set<? extends DatFlag> flags) {
        int bits = 0;
        for (DatFlag f : flags) {
            bits |= f.value();
        }
        return bits;
    }

    /**
     * The flags a numeric mask holds.
     *
     * @throws DatException INVALID_PARAMETER if the mask has a bit no flag of {@code type} names
     */
    static <E extends Enum<E> & DatFlag> Set<E> fromBits(Class<E> type, int bits) {
        EnumSet<E> set = EnumSet.noneOf(type);
        int known = 0;
        for (E e : type.getEnumConstants()) {
            known |= e.value();
            if (e.value() != 0 && (bits & e.value()) == e.value()) {
                set.add(e);
            }
        }
        if ((bits & ~known) != 0) {
            throw new DatException(DatReturnType.INVALID_PARAMETER, DatReturnSubtype.NO_SUBTYPE,
                    String.format("unknown %s bits 0x%x", type.getSimpleName(), bits & ~known));
        }
        return set;
    }
}
