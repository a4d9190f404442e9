package org.jdapl.tools;

import java.util.List;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.Descriptor;
import org.jdapl.dat.DatRegistry;
import org.jdapl.tools.dapltest.Dapltest;
import org.jdapl.tools.dtest.Dtest;
import org.jdapl.tools.soak.Soak;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The tools as Gogo commands in scope {@code dat}: {@code dat:dtest}, {@code dat:dapltest} and {@code dat:soak}
 * (the registry bundle has {@code dat:list}, {@code dat:source}, {@code dat:providers} and
 * {@code dat:reload}). They print to the session (Gogo redirects {@code System.out} per
 * command) and fail with a {@link ToolException} that carries the exit status.
 */
@Component(service = ToolCommands.class, property = {
        CommandProcessor.COMMAND_SCOPE + "=dat",
        CommandProcessor.COMMAND_FUNCTION + "=dtest",
        CommandProcessor.COMMAND_FUNCTION + "=dapltest",
        CommandProcessor.COMMAND_FUNCTION + "=soak"})
public final class ToolCommands {
    /** The names of the commands, in scope {@code dat}. */
    public static final List<String> NAMES = List.of("dtest", "dapltest", "soak");

    private final DatRegistry registry;

    /** The commands, opening IAs through the registry service. */
    @Activate
    public ToolCommands(@Reference DatRegistry registry) {
        this.registry = registry;
    }

    /** dtest: connect, RDMA Write, RDMA Read and ping-pong between two endpoints, with their costs. */
    @Descriptor("uDAPL's dtest: server (-s), client (-h host) or both in this process; --help for the options")
    public void dtest(@Descriptor("options") String... args) {
        new Dtest(registry, System.out).run(List.of(args));
    }

    /** dapltest: the transaction test (-T T) and the performance test (-T P). */
    @Descriptor("uDAPL's dapltest: transaction test (-T T) or performance test (-T P); --help for the options")
    public void dapltest(@Descriptor("options") String... args) {
        new Dapltest(registry, System.out).run(List.of(args));
    }

    /** soak: many connections, every DTO accounted for and every byte checked, with faults injected. */
    @Descriptor("soak test: connections streaming checked DTOs while faults are injected; --help for the options")
    public void soak(@Descriptor("options") String... args) {
        new Soak(registry, System.out, System.in).run(List.of(args));
    }
}
