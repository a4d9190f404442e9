package org.jdapl.cdi;

import jakarta.enterprise.context.Dependent;
import jakarta.inject.Inject;
import org.jdapl.dat.InterfaceAdapter;

/** A consumer requiring {@code emu-file}, an IA that only the dat.conf named by {@code jdapl.dat.conf} declares. */
@Dependent
public class FileIa {
    @Inject
    @Ia("emu-file")
    InterfaceAdapter ia;
}
