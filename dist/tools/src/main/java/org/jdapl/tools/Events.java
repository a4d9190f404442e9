package org.jdapl.tools;

import java.util.Arrays;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;

/**
 * Bounded waits on event dispatchers ({@code dat_evd_wait}) that turn every unexpected outcome into
 * a {@link ToolException} saying what the tool was waiting for.
 */
public final class Events {
    private Events() {
    }

    /**
     * The next event of {@code evd}, waiting at most {@code timeoutMicros}.
     *
     * @throws ToolException FAILURE on time-out or any other error of the wait
     */
    public static DatEvent next(EventDispatcher evd, long timeoutMicros, String what) {
        try {
            return evd.waitEvent(timeoutMicros);
        } catch (DatException e) {
            if (e.type() == DatReturnType.TIMEOUT_EXPIRED) {
                throw ToolException.failure("timed out after " + Units.duration(timeoutMicros * 1_000.0)
                        + " waiting for " + what);
            }
            throw new ToolException(ToolException.FAILURE, "waiting for " + what + ": " + e.getMessage(), e);
        }
    }

    /**
     * The next DTO completion of {@code evd}; it must be a success of the given operation.
     *
     * @throws ToolException FAILURE for another event, an error status or a time-out
     */
    public static DatEvent.DtoCompletion dto(EventDispatcher evd, long timeoutMicros, DtoOperation operation,
                                             String what) {
        DatEvent event = next(evd, timeoutMicros, what);
        if (!(event instanceof DatEvent.DtoCompletion completion)) {
            throw ToolException.failure("waiting for " + what + ", got " + describe(event));
        }
        checkSuccess(completion, operation, what);
        return completion;
    }

    /**
     * Checks that a completion is a success of the given operation.
     *
     * @throws ToolException FAILURE otherwise
     */
    public static void checkSuccess(DatEvent.DtoCompletion completion, DtoOperation operation, String what) {
        if (completion.status() != DtoStatus.SUCCESS) {
            throw ToolException.failure(what + " completed with DAT_DTO_ERR " + completion.status()
                    + " (" + completion.operation() + ", cookie " + completion.cookie() + ")");
        }
        if (operation != null && completion.operation() != operation) {
            throw ToolException.failure("waiting for " + what + ", got a " + completion.operation() + " completion");
        }
    }

    /**
     * The next event of {@code evd}; it must be a connection event with one of the {@code expected} numbers.
     *
     * @throws ToolException FAILURE for another event or a time-out
     */
    public static DatEvent.Connection connection(EventDispatcher evd, long timeoutMicros, String what,
                                                 EventNumber... expected) {
        DatEvent event = next(evd, timeoutMicros, what);
        if (event instanceof DatEvent.Connection connection
                && Arrays.asList(expected).contains(connection.number())) {
            return connection;
        }
        throw ToolException.failure("waiting for " + what + ", got " + describe(event));
    }

    /** A one-line description of an event, for messages. */
    public static String describe(DatEvent event) {
        return switch (event) {
            case DatEvent.DtoCompletion c -> "a " + c.operation() + " completion with status " + c.status();
            case DatEvent.Connection c -> c.number().datName();
            case DatEvent.ConnectionRequest r -> "a connection request on conn_qual " + r.connQual();
            case DatEvent.AsyncError a -> a.number().datName() + " (" + a.detail() + ")";
            case DatEvent.RmrBindCompletion b -> "an RMR bind completion with status " + b.status();
            case DatEvent.Software s -> "a software event";
            case DatEvent.ExtendedDtoCompletion x -> "a " + x.type().datName() + " completion with status "
                    + x.status();
            case DatEvent.UdConnection u -> u.number().datName();
        };
    }
}
