package org.jdapl.cdi;

/** How long an IA injected by {@link Ia} lives: when it is closed (ABRUPT) by its disposer. */
public enum IaScope {
    /**
     * One IA for the application ({@code @ApplicationScoped}), opened on the first call through the
     * injected proxy and closed when the container shuts down. When its provider leaves (REG_06) the
     * broken IA is dropped, and the next call through the proxy opens the IA again.
     */
    APPLICATION,
    /** One IA per request ({@code @RequestScoped}), closed when the request ends. Needs full CDI's request context. */
    REQUEST,
    /**
     * One IA per injection ({@code @Dependent}), opened when it is injected and closed when the bean it
     * was injected into is destroyed (or {@code Instance.destroy} is called).
     */
    DEPENDENT
}
