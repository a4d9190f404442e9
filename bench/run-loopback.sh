#!/usr/bin/env bash
# Runs EmuLoopbackBench: the emulated provider's loopback fabric against bare JVM hand-offs and
# MemorySegment.copy, and its tcp fabric against libfabric's fi_pingpong.
#
#   bench/run-loopback.sh [seconds-per-measurement [rounds]]
#
# fi_pingpong comes from Debian's libfabric-bin, installed here when the script runs as root and it
# is missing (apt is serialised with other jobs through /tmp/jdapl-apt.lock); without it the table
# says fi_pingpong is absent. The benchmark jar is built first if it is not there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if ! command -v fi_pingpong >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing libfabric-bin (fi_pingpong)" >&2
  flock /tmp/jdapl-apt.lock apt-get -o DPkg::Lock::Timeout=600 install -y -q libfabric-bin >/dev/null \
    || echo "libfabric-bin could not be installed; the fi_pingpong rows will say so" >&2
fi
jar="$root/bench/target/jdapl-bench-all.jar"
if [ ! -f "$jar" ]; then
  (cd "$root" && ./mvnw -B -q -pl bench -am package -DskipTests)
fi
java_bin=""
for candidate in "${JAVA_HOME:-}/bin/java" /usr/lib/jvm/*25*/bin/java "$(command -v java || true)"; do
  if [ -x "$candidate" ] && "$candidate" -version 2>&1 | grep -Eq 'version "(2[5-9]|[3-9][0-9])'; then
    java_bin="$candidate"
    break
  fi
done
if [ -z "$java_bin" ]; then
  echo "no Java 25+ found (set JAVA_HOME)" >&2
  exit 1
fi
# Agrona (the ring-buffer baseline) reaches jdk.internal.misc.Unsafe.
exec "$java_bin" --enable-native-access=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp "$jar" org.jdapl.bench.EmuLoopbackBench "$@"
