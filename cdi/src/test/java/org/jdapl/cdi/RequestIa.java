package org.jdapl.cdi;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.context.control.RequestContextController;
import jakarta.inject.Inject;
import org.jdapl.dat.InterfaceAdapter;

/** A consumer of a request-scoped IA, with the request context under its control. */
@Dependent
public class RequestIa {
    @Inject
    @Ia(value = "emu0", scope = IaScope.REQUEST)
    InterfaceAdapter ia;

    @Inject
    RequestContextController request;
}
