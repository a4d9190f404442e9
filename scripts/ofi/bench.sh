#!/usr/bin/env bash
# The ofi provider's benchmark rows: 64 B send/recv half round trip and 1 MiB RDMA Write bandwidth through the DAT API on libfabric's
# tcp provider over lo, against fi_pingpong (libfabric-bin) at 64 B and 1 MiB in the same run, and the ratios. With --provider shm:
# on libfabric's shm provider between two JVMs (the ponging IA in a second one) against fi_pingpong -p shm -e rdm.
# The host's load (uptime) is printed before and after: on a shared machine the figures depend on it.
#
#   scripts/ofi/bench.sh [iterations] [1 MiB iterations] [--provider shm] [other OfiPingPongBench options]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scripts/ofi/install-host-packages.sh bench
# A reactor build (-am): the API comes from this checkout, not from ~/.m2; tests compile, none runs.
timeout 600 ./mvnw -B -q -pl provider-ofi-bundle -am -DskipTests test-compile \
  dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt -Dmdep.includeScope=test
module=provider-ofi-bundle
cp="$module/target/test-classes:$module/target/classes:$(cat $module/target/bench-classpath.txt)"
java_home=${JAVA_HOME:-}
if [ -z "$java_home" ] || [ ! -x "$java_home/bin/java" ] || ! "$java_home/bin/java" -version 2>&1 | grep -q '"25'; then
  java_home=$(ls -d /usr/lib/jvm/temurin-25* 2>/dev/null | head -1)
fi
echo "ofi-bench: load before: $(uptime)" >&2
status=0
"$java_home/bin/java" --enable-native-access=ALL-UNNAMED -cp "$cp" \
  org.jdapl.provider.ofi.bench.OfiPingPongBench "$@" || status=$?
echo "ofi-bench: load after: $(uptime)" >&2
exit $status
