package com.example.echo;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.jdapl.cdi.Ia;
import org.jdapl.cdi.IaScope;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RegistryEvent;
import org.jdapl.dat.VaType;

@Dependent
public class Echo {
    private static final long WAIT = 5_000_000; // microseconds

    @Inject DatRegistry registry;                                                   // DatRegistry.standalone()
    @Inject @Ia("emu0") InterfaceAdapter server;                                    // opened on first use
    @Inject @Ia(value = "emu0", scope = IaScope.DEPENDENT) InterfaceAdapter client; // closed with this bean

    /** Connects an EP of each IA, sends {@code text} from client to server, returns what arrived. */
    public String roundTrip(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        Deque<Runnable> frees = new ArrayDeque<>();
        try (Arena arena = Arena.ofShared()) {
            try {
                ProtectionZone spz = server.createPz(), cpz = client.createPz();
                frees.push(spz::free);
                frees.push(cpz::free);
                EventDispatcher sEvd = server.createEvd(8, null, Dat.EVD_DEFAULT_FLAGS);
                EventDispatcher cEvd = client.createEvd(8, null, Dat.EVD_DEFAULT_FLAGS);
                frees.push(sEvd::free);
                frees.push(cEvd::free);
                LocalMemoryRegion in = server.createLmr(spz, arena.allocate(4096), Dat.MEM_PRIV_ALL, VaType.VA);
                LocalMemoryRegion out = client.createLmr(cpz,
                        arena.allocate(4096).copyFrom(MemorySegment.ofArray(bytes)), Dat.MEM_PRIV_ALL, VaType.VA);
                frees.push(in::free);
                frees.push(out::free);
                PublicServicePoint psp = server.createPspAny(sEvd, PspFlag.CONSUMER);
                frees.push(psp::free);
                Endpoint sEp = server.createEp(spz, sEvd, sEvd, sEvd, EpAttributes.defaults());
                Endpoint cEp = client.createEp(cpz, cEvd, cEvd, cEvd, EpAttributes.defaults());
                frees.push(sEp::free);
                frees.push(cEp::free);

                cEp.connect(server.query().attributes().address(), psp.query().connQual(), WAIT, new byte[0]);
                var request = (DatEvent.ConnectionRequest) sEvd.waitEvent(WAIT);
                sEp.postRecv(List.of(new LmrTriplet(in, 0, 4096)), 1, Dat.COMPLETION_DEFAULT);
                request.request().accept(sEp, new byte[0]);
                sEvd.waitEvent(WAIT); // CONNECTION_ESTABLISHED
                cEvd.waitEvent(WAIT); // CONNECTION_ESTABLISHED
                cEp.postSend(List.of(new LmrTriplet(out, 0, bytes.length)), 2, Dat.COMPLETION_DEFAULT);
                var received = (DatEvent.DtoCompletion) sEvd.waitEvent(WAIT);
                return new String(in.segment().asSlice(0, received.transferredLength())
                        .toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
            } finally {
                while (!frees.isEmpty()) {
                    frees.pop().run(); // EPs first, PZs last
                }
            }
        }
    }

    /** REG_06: the provider left; the next call through {@code server} opens the IA again. */
    static void providerLeft(@Observes RegistryEvent.IaBroken broken) {
        System.getLogger("echo").log(System.Logger.Level.WARNING, broken.iaName() + ": " + broken.reason());
    }
}
