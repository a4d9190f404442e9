package org.jdapl.dat.spi;

/**
 * What the registry hands a provider to open an IA: the fields of a dat.conf entry that concern it.
 *
 * @param iaName the IA name (field 1)
 * @param iaParams the provider-specific parameters (field 7), e.g. {@code "mlx4_0 1"} or {@code "tcp 0.0.0.0:0"}
 * @param platformParams field 8
 * @param threadSafe field 3
 * @param source where the entry came from, for messages
 */
public record IaSpec(String iaName, String iaParams, String platformParams, boolean threadSafe, String source) {
    /** Defaults null parameters to empty. */
    public IaSpec {
        iaParams = iaParams == null ? "" : iaParams;
        platformParams = platformParams == null ? "" : platformParams;
        source = source == null ? "" : source;
    }
}
