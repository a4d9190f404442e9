package org.jdapl.tools.dapltest;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.tools.ToolException;

/**
 * The two IAs of a dapltest run, the server's and the client's (the same IA name opened twice),
 * each with one PZ, checked against what the operations need.
 */
final class Sides implements AutoCloseable {
    final InterfaceAdapter serverIa;
    final InterfaceAdapter clientIa;
    final ProtectionZone serverPz;
    final ProtectionZone clientPz;
    final IaAttributes attributes;

    private Sides(InterfaceAdapter serverIa, InterfaceAdapter clientIa) {
        this.serverIa = serverIa;
        this.clientIa = clientIa;
        this.serverPz = serverIa.createPz();
        this.clientPz = clientIa.createPz();
        this.attributes = clientIa.query().attributes();
    }

    /**
     * Opens both IAs.
     *
     * @throws ToolException FAILURE if the IA cannot be opened; USAGE if the operations exceed its limits
     */
    static Sides open(DatRegistry registry, DapltestOptions options) {
        InterfaceAdapter server = open(registry, options.iaName());
        InterfaceAdapter client;
        try {
            client = open(registry, options.iaName());
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        Sides sides = new Sides(server, client);
        try {
            sides.check(options);
        } catch (RuntimeException e) {
            sides.close();
            throw e;
        }
        return sides;
    }

    private static InterfaceAdapter open(DatRegistry registry, String name) {
        try {
            return registry.open(name, 16);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "cannot open IA '" + name + "': " + e.getMessage(), e);
        }
    }

    private void check(DapltestOptions options) {
        for (InterfaceAdapter ia : new InterfaceAdapter[] {serverIa, clientIa}) {
            IaAttributes a = ia.query().attributes();
            for (Op op : options.ops()) {
                long max = op.kind() == Op.Kind.SR ? a.maxMessageSize() : a.maxRdmaSize();
                if (op.size() > max) {
                    throw ToolException.usage("dapltest: " + op + ": the IA moves at most " + max + " bytes per "
                            + (op.kind() == Op.Kind.SR ? "message" : "RDMA operation"));
                }
                if (op.segments() > a.maxIovSegmentsPerDto()) {
                    throw ToolException.usage("dapltest: " + op + ": the IA takes at most " + a.maxIovSegmentsPerDto()
                            + " segments per DTO");
                }
            }
        }
    }

    /** Frees the PZs and closes both IAs gracefully (which fails if anything was left behind). */
    void closeGracefully() {
        try {
            serverPz.free();
            clientPz.free();
            serverIa.close(CloseFlag.GRACEFUL);
            clientIa.close(CloseFlag.GRACEFUL);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "closing the IAs gracefully failed: " + e.getMessage(), e);
        }
    }

    /** Closes both IAs abruptly if they are open (every wait on their objects ends). */
    @Override
    public void close() {
        for (InterfaceAdapter ia : new InterfaceAdapter[] {serverIa, clientIa}) {
            try {
                if (!ia.isFreed()) {
                    ia.close();
                }
            } catch (DatException e) {
                // closed concurrently
            }
        }
    }
}
