package org.jdapl.tools.dapltest;

import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;

/**
 * What one side of a dapltest connection works with: its IA (opened once per process and shared by
 * the server's sessions), a PZ of its own, the IA's limits and the longest wait for one event.
 *
 * @param ia the IA
 * @param pz the PZ the side's EPs and LMRs belong to
 * @param attributes the IA's attributes
 * @param timeoutMicros the longest wait for one event
 * @param poll whether completions are polled ({@code dat_evd_dequeue}) rather than waited for
 * @param qos the quality of service of the side's endpoints and connections ({@code -R})
 */
record Side(InterfaceAdapter ia, ProtectionZone pz, IaAttributes attributes, long timeoutMicros, boolean poll,
            Qos qos) {
}
