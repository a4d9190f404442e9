package org.jdapl.provider.ofa;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.ProtectionZone;

/**
 * What an EP is made on: its PZ, EVDs, SRQ and attributes, and the EP's counts of use on them, which
 * keep them from being freed while the EP uses them. Fixed once the EP has a queue pair; a
 * provider-created EP takes a new binding at {@code dat_ep_modify} ({@link #replaced}). Every method
 * runs with the IA's lock held.
 */
record EpBinding(OfaPz pz, OfaEvd recvEvd, OfaEvd requestEvd, OfaEvd connectEvd, OfaSrq srq,
                 EpAttributes attributes) {

    /** Counts the EP as a user of its connect EVD (from creation). */
    void useConnectEvd() {
        if (connectEvd != null) {
            connectEvd.users++;
        }
    }

    /** Gives back the count of {@link #useConnectEvd}. */
    void releaseConnectEvd() {
        if (connectEvd != null) {
            connectEvd.users--;
        }
    }

    /** Counts the EP as a user of its PZ, DTO EVDs and SRQ (once it has a queue pair). */
    void useQueues() {
        pz.users++;
        for (OfaEvd e : new OfaEvd[] {recvEvd, requestEvd}) {
            if (e != null) {
                e.users++;
            }
        }
        if (srq != null) {
            srq.users++;
        }
    }

    /** Gives back the counts of {@link #useQueues}. */
    void releaseQueues() {
        pz.users--;
        for (OfaEvd e : new OfaEvd[] {recvEvd, requestEvd}) {
            if (e != null) {
                e.users--;
            }
        }
        if (srq != null) {
            srq.users--;
        }
    }

    /** A provider-created EP's new PZ, EVDs and attributes, the connect EVD's count moved to the new one. */
    EpBinding replaced(OfaPz p, OfaEvd r, OfaEvd q, OfaEvd c, EpAttributes a) {
        if (c != connectEvd) {
            releaseConnectEvd();
            if (c != null) {
                c.users++;
            }
        }
        return new EpBinding(p, r, q, c, srq, a);
    }

    /** Polls the EP's CQs (outside the EP's lock) so that completions already there are seen first. */
    void pollCqs() {
        if (requestEvd != null) {
            requestEvd.pollCq();
        }
        if (recvEvd != null && recvEvd != requestEvd) {
            recvEvd.pollCq();
        }
    }

    /**
     * {@code dat_ep_modify} of an EP with a queue pair: verbs cannot change a queue pair's PZ, CQs or
     * sizes, so anything given that differs from the binding fails MODEL_NOT_SUPPORTED.
     */
    void checkUnchanged(ProtectionZone newPz, EpAttributes attrs, EventDispatcher recv, EventDispatcher request,
                        EventDispatcher connect) {
        if (attrs != null && !attrs.equals(attributes) || recv != null && recv != recvEvd
                || request != null && request != requestEvd || connect != null && connect != connectEvd
                || newPz != null && newPz != pz) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_modify: a verbs queue pair "
                    + "cannot change its PZ, completion queues or queue sizes; create a new EP");
        }
    }
}
