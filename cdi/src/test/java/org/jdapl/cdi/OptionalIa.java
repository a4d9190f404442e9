package org.jdapl.cdi;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;

/** A consumer that tolerates its IA's absence: {@code emu-test0}, declared in microprofile-config.properties. */
@Dependent
public class OptionalIa {
    @Inject
    DatRegistry registry;

    @Inject
    @Ia("emu-test0")
    Instance<InterfaceAdapter> ia;
}
