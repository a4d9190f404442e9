package org.jdapl.cdi;

import jakarta.enterprise.inject.se.SeContainerInitializer;
import org.jboss.weld.environment.se.Weld;

/** {@link CdiInjectionTests} in Weld SE. */
class WeldSeInjectionTest extends CdiInjectionTests {
    @Override
    protected SeContainerInitializer initializer() {
        return new Weld();
    }
}
