package org.jdapl.dat;

import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.osgi.annotation.versioning.ProviderType;

/**
 * DAT_CNO_HANDLE: a Consumer Notification Object, one place to wait for several EVDs. An EVD
 * attached to a CNO ({@link InterfaceAdapter#createEvd}, {@link EventDispatcher#modifyCno}) triggers
 * it when a notification event arrives and nobody waits on the EVD itself.
 */
@ProviderType
public interface Cno extends DatHandle {
    /**
     * {@code dat_cno_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_CNO)
     */
    CnoParam query();

    /**
     * {@code dat_cno_modify_agent}: replaces the wait agent (null removes it).
     *
     * @throws DatException INVALID_HANDLE
     */
    void modifyAgent(Consumer<EventDispatcher> waitAgent);

    /**
     * {@code dat_cno_free}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE (INVALID_STATE_CNO_IN_USE) while an EVD
     *         is attached or a thread waits
     */
    void free();

    /**
     * {@code dat_cno_wait}: blocks until an attached EVD triggers the CNO and returns that EVD.
     *
     * @param timeoutMicros microseconds to wait, 0 to poll, {@link Dat#TIMEOUT_INFINITE}
     * @throws DatException TIMEOUT_EXPIRED; INTERRUPTED_CALL if the thread is interrupted;
     *         INVALID_HANDLE; INVALID_STATE (INVALID_STATE_CNO_DEAD) if it is freed while waiting
     */
    EventDispatcher waitCno(long timeoutMicros);

    /**
     * {@code dat_cno_trigger}: the EVD that has triggered the CNO since the last wait, without
     * waiting; empty if none has.
     *
     * @throws DatException INVALID_HANDLE
     */
    Optional<EventDispatcher> trigger();

    /**
     * The Java counterpart of {@code dat_cno_fd_create}: instead of a file descriptor to poll, a
     * stage that completes with the EVD of the next trigger, for event loops that compose
     * futures. It fails with a DatException if the CNO is freed first.
     *
     * @throws DatException INVALID_HANDLE
     */
    CompletionStage<EventDispatcher> nextTrigger();

    /**
     * DAT_CNO_PARAM.
     *
     * @param ia the IA the CNO belongs to
     * @param waitAgent the current wait agent, or null
     */
    record CnoParam(InterfaceAdapter ia, Consumer<EventDispatcher> waitAgent) {
    }
}
