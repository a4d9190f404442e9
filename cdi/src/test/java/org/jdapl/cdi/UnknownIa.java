package org.jdapl.cdi;

import jakarta.enterprise.context.Dependent;
import jakarta.inject.Inject;
import org.jdapl.dat.InterfaceAdapter;

/** A consumer requiring an IA no dat.conf entry and no provider names. */
@Dependent
public class UnknownIa {
    @Inject
    @Ia("no-such-ia")
    InterfaceAdapter ia;
}
