package org.jdapl.itest.ds;

import java.util.function.Supplier;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;

/**
 * The Declarative Services component of the DS bundle CdiIT deploys next to the CDI bundle: it
 * holds IA {@code emu0} open through the {@code DatRegistry} service while it is active, as a DS
 * consumer of jdapl does ({@code OSGI-INF/org.jdapl.itest.ds.xml}), and answers the IA's name and
 * address as a {@code Supplier} service.
 */
public class DsIaUser implements Supplier<String> {
    private volatile DatRegistry registry;
    private volatile InterfaceAdapter ia;

    void setRegistry(DatRegistry registry) {
        this.registry = registry;
    }

    void activate() {
        ia = registry.open("emu0", 8);
    }

    void deactivate() {
        if (!ia.isFreed()) {
            ia.close();
        }
    }

    @Override
    public String get() {
        return ia.name() + " " + ia.query().attributes().address();
    }
}
