package org.jdapl.tools.soak;

import java.util.Locale;

/**
 * The faults a soak run injects, all from outside the provider: through the public API on this
 * side, through the serving process, or through the network device the connections cross.
 */
enum FaultKind {
    /** {@code dat_ep_free} of a connected EP with DTOs in flight. */
    EPFREE("EP free with DTOs in flight", Needs.NOTHING),
    /** {@code dat_ep_disconnect(ABRUPT)} from another thread, racing the stream's posts. */
    ABRUPT("abrupt disconnect racing posts", Needs.NOTHING),
    /** {@code dat_ep_disconnect(GRACEFUL)} from another thread, racing the stream's posts. */
    GRACEFUL("graceful disconnect racing posts", Needs.NOTHING),
    /** {@code dat_ia_close(ABRUPT)} of the serving IA with its connections and DTOs, then open again. */
    IACLOSE("serving IA closed with DTOs in flight", Needs.NOTHING),
    /** SIGKILL of the serving process, then a new one. */
    KILL("serving JVM killed (SIGKILL) and restarted", Needs.PEER),
    /** The link down for less than the keepalive bound: the connections must survive. */
    LINKBLIP("link down and up within the keepalive bound", Needs.DEVICE),
    /** The link down for longer than the keepalive bound: the connections must end BROKEN. */
    LINKCUT("link down beyond the keepalive bound", Needs.DEVICE),
    /** Packet loss (netem, or nftables where the kernel has no netem). */
    LOSS("packet loss", Needs.DEVICE),
    /** Packet duplication (netem, or nftables dup). */
    DUPLICATE("packet duplication", Needs.DEVICE),
    /** Packet reordering (netem, or an HTB slow class fed by nftables). */
    REORDER("packet reordering", Needs.DEVICE),
    /** Packet delay (netem with jitter, or a tbf rate limit). */
    DELAY("packet delay", Needs.DEVICE);

    /** What a fault needs beyond the soak run itself. */
    enum Needs { NOTHING, PEER, DEVICE }

    final String description;
    final Needs needs;

    FaultKind(String description, Needs needs) {
        this.description = description;
        this.needs = needs;
    }

    /** The name on the command line. */
    String option() {
        return name().toLowerCase(Locale.ROOT);
    }
}
