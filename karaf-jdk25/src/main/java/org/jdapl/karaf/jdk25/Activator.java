package org.jdapl.karaf.jdk25;

import java.lang.System.Logger.Level;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.hooks.weaving.WeavingHook;
import org.osgi.framework.hooks.weaving.WovenClass;

/**
 * Registers the weaving hook that runs {@link SubjectCallRewriter} over every class a bundle loads
 * from then on. It must start before the bundles it is for (Karaf's Event Admin at start level 5,
 * its shell, SSH and JAAS later): {@code etc/startup.properties} at start level 1. Declarative
 * Services is not there yet at that level, hence an activator.
 */
public final class Activator implements BundleActivator {
    private static final System.Logger LOG = System.getLogger(Activator.class.getName());
    private ServiceRegistration<WeavingHook> registration;
    private long ownBundle;

    @Override
    public void start(BundleContext context) {
        ownBundle = context.getBundle().getBundleId();
        // Loaded now, so that weaving never has to load (and weave) the rewriter itself.
        SubjectCallRewriter.rewrite(new byte[0], getClass().getClassLoader());
        registration = context.registerService(WeavingHook.class, this::weave, null);
    }

    @Override
    public void stop(BundleContext context) {
        registration.unregister();
    }

    private void weave(WovenClass woven) {
        if (woven.getBundleWiring().getBundle().getBundleId() == ownBundle) {
            return;
        }
        byte[] rewritten;
        try {
            rewritten = SubjectCallRewriter.rewrite(woven.getBytes(), woven.getBundleWiring().getClassLoader());
        } catch (RuntimeException e) {
            // A class this cannot rewrite is left as it is; its calls fail as they would without it.
            LOG.log(Level.WARNING, "not rewritten: " + woven.getClassName() + " of "
                    + woven.getBundleWiring().getBundle().getSymbolicName(), e);
            return;
        }
        if (rewritten != null) {
            woven.setBytes(rewritten);
            LOG.log(Level.DEBUG, "Subject calls rewritten in {0}", woven.getClassName());
        }
    }
}
