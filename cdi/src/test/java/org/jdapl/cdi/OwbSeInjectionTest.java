package org.jdapl.cdi;

import jakarta.enterprise.inject.se.SeContainerInitializer;
import org.apache.openwebbeans.se.OWBInitializer;
import org.apache.webbeans.config.WebBeansFinder;

/** {@link CdiInjectionTests} in Apache OpenWebBeans SE. */
class OwbSeInjectionTest extends CdiInjectionTests {
    @Override
    protected SeContainerInitializer initializer() {
        return new OWBInitializer();
    }

    /** OpenWebBeans keeps the context of a container that failed to start; the next one would not start. */
    @Override
    protected void afterFailedStart() {
        WebBeansFinder.clearInstances(Thread.currentThread().getContextClassLoader());
    }
}
