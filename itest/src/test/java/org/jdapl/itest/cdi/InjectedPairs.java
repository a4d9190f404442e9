package org.jdapl.itest.cdi;

import java.util.ArrayList;
import java.util.List;
import javax.enterprise.inject.Instance;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.dat.InterfaceAdapter;

/**
 * The conformance kit's IAs from CDI: each pair is two dependent {@code @Ia("emu0")} IAs. The kit
 * closes them after each case; closing the fixture hands them back to CDI, whose disposer leaves
 * an IA closed already alone.
 */
final class InjectedPairs implements ConformanceFixture {
    private final Instance<InterfaceAdapter> fresh;
    private final List<InterfaceAdapter> handedOut = new ArrayList<>();

    InjectedPairs(Instance<InterfaceAdapter> fresh) {
        this.fresh = fresh;
    }

    @Override
    public String name() {
        return "emu-cdi";
    }

    @Override
    public synchronized IaPair openPair() {
        InterfaceAdapter first = fresh.get();
        handedOut.add(first);
        InterfaceAdapter second = fresh.get();
        handedOut.add(second);
        return new IaPair(first, second);
    }

    @Override
    public synchronized void close() {
        handedOut.forEach(fresh::destroy);
        handedOut.clear();
    }
}
