package org.jdapl.provider.emu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Test;

/** REG_06 at the provider: once its component is deactivated (bundle stopping), it opens nothing. */
class DeactivationTest {
    private static final IaSpec EMU0 = new IaSpec("emu0", "loopback", "", true, "test");

    @Test
    void REG_06_aDeactivatedProviderOpensNoIaThatItsDeactivationWouldMiss() {
        EmuProvider provider = new EmuProvider();
        InterfaceAdapter before = provider.open(EMU0, 8);
        provider.deactivate();
        assertTrue(before.isFreed(), "an IA open at deactivation is aborted");
        DatException e = assertThrows(DatException.class, () -> provider.open(EMU0, 8));
        assertEquals(DatReturnType.PROVIDER_NOT_FOUND, e.type(), e.getMessage());
        assertTrue(e.getMessage().contains("stopping"), e.getMessage());
        provider.openObjects().forEach((type, n) -> assertEquals(0, n.intValue(), "open " + type));
    }
}
