package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;

/**
 * Scatter/gather lists: checking them at post time and moving bytes between them with one
 * {@link MemorySegment#copy} per overlapping piece (each byte is copied once, never byte by byte).
 */
public final class Segments {
    private Segments() {
    }

    /**
     * Checks a scatter/gather list of a DTO posted on an EP of {@code ia} (whose LMRs the segments
     * must be) and returns a copy of it.
     *
     * @throws DatException INVALID_PARAMETER for a null list or entry or too many entries;
     *         INVALID_HANDLE (LMR) for a foreign LMR; PROTECTION_VIOLATION for a freed LMR, an LMR of
     *         another PZ or a range outside the LMR; PRIVILEGES_VIOLATION if the LMR lacks {@code needed}
     */
    static List<LmrTriplet> check(InterfaceAdapter ia, EmuPz pz, List<LmrTriplet> iov, MemPriv needed, int maxIov, int arg) {
        if (iov == null) {
            throw DatException.invalidParameter(arg, "no segment list");
        }
        if (iov.size() > maxIov) {
            throw DatException.invalidParameter(arg, iov.size() + " segments, more than the " + maxIov + " allowed");
        }
        for (LmrTriplet t : iov) {
            if (t == null) {
                throw DatException.invalidParameter(arg, "a null segment");
            }
        }
        // Checked is what is kept: an immutable snapshot (the list itself if it is immutable already).
        List<LmrTriplet> snapshot = List.copyOf(iov);
        boolean empties = false;
        for (int i = 0, n = snapshot.size(); i < n; i++) {
            LmrTriplet t = snapshot.get(i);
            if (t.length() == 0) {
                empties = true;
                continue;
            }
            if (!(t.lmr() instanceof EmuLmr lmr) || lmr.ia() != ia) {
                throw HandleType.LMR.invalid("the segment's LMR is not an LMR of this IA");
            }
            if (lmr.isFreed()) {
                throw new DatException(DatReturnType.PROTECTION_VIOLATION, DatReturnSubtype.NO_SUBTYPE,
                        "the segment's LMR is freed");
            }
            if (pz == null || lmr.pz() != pz) {
                throw new DatException(DatReturnType.PROTECTION_VIOLATION, DatReturnSubtype.NO_SUBTYPE,
                        "the segment's LMR belongs to another protection zone");
            }
            if (!lmr.grants(needed)) {
                throw new DatException(DatReturnType.PRIVILEGES_VIOLATION,
                        needed == MemPriv.LOCAL_READ ? DatReturnSubtype.PRIVILEGES_READ
                                : DatReturnSubtype.PRIVILEGES_WRITE,
                        "the segment's LMR does not grant " + needed);
            }
            long size = lmr.segment().byteSize();
            if (t.offset() > size || t.length() > size - t.offset()) {
                throw new DatException(DatReturnType.PROTECTION_VIOLATION, DatReturnSubtype.NO_SUBTYPE,
                        "segment [" + t.offset() + ", +" + t.length() + ") lies outside the LMR of " + size + " bytes");
            }
        }
        if (!empties) {
            return snapshot;
        }
        List<LmrTriplet> copy = new ArrayList<>(snapshot.size());
        for (LmrTriplet t : snapshot) {
            if (t.length() != 0) {
                copy.add(t);
            }
        }
        return List.copyOf(copy);
    }

    static long total(List<LmrTriplet> iov) {
        long sum = 0;
        for (int i = 0, n = iov.size(); i < n; i++) {
            sum += iov.get(i).length();
        }
        return sum;
    }

    /**
     * Whether every LMR of the list is still registered and its memory still alive (indexed, so that
     * no iterator is made on the data path even before the JIT would remove it).
     */
    public static boolean usable(List<LmrTriplet> iov) {
        for (int i = 0, n = iov.size(); i < n; i++) {
            EmuLmr lmr = (EmuLmr) iov.get(i).lmr();
            if (lmr.isFreed() || !lmr.segment().scope().isAlive()) {
                return false;
            }
        }
        return true;
    }

    public static List<MemorySegment> slices(List<LmrTriplet> iov) {
        List<MemorySegment> out = new ArrayList<>(iov.size());
        for (LmrTriplet t : iov) {
            out.add(t.lmr().segment().asSlice(t.offset(), t.length()));
        }
        return out;
    }

    /**
     * Copies the first {@code length} bytes of {@code src} into {@code dst}, in list order. A piece is
     * a checked {@link LmrTriplet} (its range of its LMR's segment, copied straight from there: no
     * slice and no list is allocated for a send) or a whole {@link MemorySegment}.
     */
    public static void copy(List<?> src, List<?> dst, long length) {
        if (src.size() == 1 && dst.size() == 1 && src.get(0) instanceof LmrTriplet s
                && dst.get(0) instanceof LmrTriplet d && length <= s.length() && length <= d.length()) {
            // One checked piece each side (a send into a receive of one buffer): one copy.
            MemorySegment.copy(s.lmr().segment(), s.offset(), d.lmr().segment(), d.offset(), length);
            return;
        }
        int si = 0;
        int di = 0;
        long so = 0;
        long dof = 0;
        long left = length;
        while (left > 0) {
            Object s = src.get(si);
            if (so == length(s)) {
                si++;
                so = 0;
                continue;
            }
            Object d = dst.get(di);
            if (dof == length(d)) {
                di++;
                dof = 0;
                continue;
            }
            long n = Math.min(left, Math.min(length(s) - so, length(d) - dof));
            MemorySegment.copy(segment(s), base(s) + so, segment(d), base(d) + dof, n);
            so += n;
            dof += n;
            left -= n;
        }
    }

    /**
     * Copies {@code length} bytes between the checked segments {@code iov}, in list order, and
     * {@code [at, at + length)} of {@code memory}: into the memory ({@code toMemory}) or out of it. No
     * slice, list or iterator is made (an RDMA of the loopback fabric).
     */
    public static void copy(List<LmrTriplet> iov, MemorySegment memory, long at, long length, boolean toMemory) {
        long done = 0;
        for (int i = 0, n = iov.size(); i < n && done < length; i++) {
            LmrTriplet t = iov.get(i);
            long k = Math.min(t.length(), length - done);
            if (toMemory) {
                MemorySegment.copy(t.lmr().segment(), t.offset(), memory, at + done, k);
            } else {
                MemorySegment.copy(memory, at + done, t.lmr().segment(), t.offset(), k);
            }
            done += k;
        }
    }

    private static MemorySegment segment(Object piece) {
        return piece instanceof LmrTriplet t ? t.lmr().segment() : (MemorySegment) piece;
    }

    private static long base(Object piece) {
        return piece instanceof LmrTriplet t ? t.offset() : 0;
    }

    private static long length(Object piece) {
        return piece instanceof LmrTriplet t ? t.length() : ((MemorySegment) piece).byteSize();
    }
}
