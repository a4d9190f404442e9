package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.apache.karaf.features.FeaturesService;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;

/**
 * REG_06 in Karaf: the Felix tests of {@link ProviderLifecycleIT} (provider bundle stopped, updated,
 * registry restarted under open, connected IAs) in a Karaf that installed {@code jdapl} and
 * {@code jdapl-emu} at boot,
 * and what a Karaf operator does to a provider under open IAs: {@code feature:uninstall jdapl-emu}
 * then {@code feature:install jdapl-emu}, and {@code bundle:restart}. Each time the consumer gets
 * ASYNC_ERROR_IA_CATASTROPHIC, its connections break, its receives are flushed, every handle fails
 * INVALID_HANDLE, nothing of the provider nor any thread is left, and once the provider is back a
 * new pair opens and connects.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KarafProviderLifecycleIT extends ProviderLifecycleIT {

    @Override
    @Configuration
    public Option[] configuration() {
        return KarafContainer.configuration(getClass(), "jdapl", "jdapl-emu");
    }

    @Test
    public void REG_06_featureUninstallOfJdaplEmuBreaksOpenIasAndFeatureInstallServesNewOnes() throws Exception {
        KarafShell shell = new KarafShell(awaitService(SessionFactory.class, null));
        shell.run("feature:list -i --no-format");   // the shell's threads exist before the baseline
        FeaturesService features = awaitService(FeaturesService.class, null);
        breakUnder(() -> shell.run("feature:uninstall jdapl-emu"), () -> {
            assertFalse(features.isInstalled(features.getFeature("jdapl-emu")));
            for (Bundle b : context.getBundles()) {
                assertFalse("the provider bundle is gone", EMU_BSN.equals(b.getSymbolicName()));
            }
            assertTrue("the registry (feature jdapl) stays", installedBundle(REGISTRY_BSN).getState() == Bundle.ACTIVE);
        }, () -> shell.run("feature:install jdapl-emu"), true);
        assertEquals(Bundle.ACTIVE, installedBundle(EMU_BSN).getState());
    }

    @Test
    public void REG_06_bundleRestartOfTheEmulatedProviderBreaksOpenIasAndTheRestartedOneServes() throws Exception {
        KarafShell shell = new KarafShell(awaitService(SessionFactory.class, null));
        shell.run("bundle:list --no-format");
        long id = installedBundle(EMU_BSN).getBundleId();
        breakUnder(() -> shell.run("bundle:restart " + id), () -> { }, () -> { }, true);
        assertEquals(Bundle.ACTIVE, installedBundle(EMU_BSN).getState());
    }
}
