package org.jdapl.provider.ofi;

import org.jdapl.dat.DatException;
import org.jdapl.dat.spi.IaSpec;

/** Prints what the provider says and does when libfabric cannot be loaded (run by OfiWithoutLibfabricTest). */
public final class WithoutLibfabricMain {
    private WithoutLibfabricMain() {
    }

    public static void main(String[] args) {
        OfiProvider p = new OfiProvider();
        System.out.println("status: " + p.status().canServe() + " " + p.status().reason());
        System.out.println("defaults: " + p.defaultIas().size());
        IaSpec spec = new IaSpec("ofi-v2-tcp-lo", "tcp lo", "", true, "test");
        System.out.println("check: " + p.check(spec).canServe() + " " + p.check(spec).reason());
        try {
            p.open(spec, 8);
            System.out.println("open: succeeded");
        } catch (DatException e) {
            System.out.println("open: " + e.type() + " " + e.subtype());
        }
    }
}
