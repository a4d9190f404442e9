#!/usr/bin/env bash
# Runs the OFA provider's device tests on a real verbs device: a Soft-RoCE (rdma_rxe) device in a
# qemu guest (TCG, no KVM needed) booted from the current Debian kernel, with the host's root file
# system shared read-only over 9p; then the conformance kit and the benchmark next to perftest, and,
# when asked for (part insn, a second boot with a counting TCG plugin), the DAT layer's instructions per
# round trip (RXE_PARTS="tests kit ofi soak bench interop dapltest" by default; ofi: the conformance kit on
# the libfabric provider's verbs MSG endpoints, ofi-verbs-rxe.txt, and with RXE_OFI_KITS="verbs rxm" (or "rxm")
# on verbs;ofi_rxm too (or only), ofi-verbs-rxm-rxe.txt; then that provider's benchmark rows
# against fi_pingpong -p verbs -e msg on rxe0, ofi-bench-rxe.txt (OfiPingPongBench; when RXE_OFI_BENCH=1:
# a measurement of a few minutes); soak: the provider under faults,
# guest-soak.sh; interop: jdapl against OFED's uDAPL, dtest and dtestx both ways, dat-interop.c's cases, the
# connection rate next to dtestcm when RXE_INTEROP_CASES names rate; dapltest: the application's dapltest server and clients,
# guest-dapltest.sh; RXE_TESTS, a regular expression of class names, selects device tests, all by
# default). The reports come back to provider-ofa-bundle/target/rxe/.
#
#   scripts/rxe/run-guest-tests.sh            build the provider (offline if possible) and run
#   scripts/rxe/run-guest-tests.sh --no-build use the classes already built
#
# Needs root for apt-get (or the packages of install-host-packages.sh vm already installed).
# Every step is bounded in time; the whole run takes a few minutes.
set -euo pipefail
# depmod, modprobe and the like live in sbin, which a minimal PATH (env -i PATH=/usr/bin:/bin) lacks.
export PATH="$PATH:/usr/sbin:/sbin"

start=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
module=$root/provider-ofa-bundle
work=${RXE_WORK:-$root/.rxe-work}
out=$module/target/rxe
build=1
[ "${1:-}" = --no-build ] && build=0

log() { echo "rxe: $* ($(( $(date +%s) - start )) s)"; }
die() { echo "rxe: FAILED: $*" >&2; exit 1; }

mkdir -p "$work" "$out"
rm -rf "${out:?}"/*

log "host packages"
timeout 900 "$here/install-host-packages.sh" vm || die "the host packages are missing (run as root, or install them: $here/install-host-packages.sh vm)"

# 1. The provider and its tests, compiled on the host (compiling in the guest is very slow).
if [ $build = 1 ]; then
  log "building provider-ofa-bundle"
  # A reactor build (-am) so that the API and the conformance kit come from this checkout, not from
  # ~/.m2. The modules it pulls in compile without their tests (-Dmaven.test.skip); this module
  # compiles its tests regardless (its pom says so): they are what the guest runs.
  (cd "$root" && timeout 600 ./mvnw -B -q -pl provider-ofa-bundle -am -Dmaven.test.skip=true test-compile \
      dependency:build-classpath -Dmdep.outputFile=target/rxe-classpath.txt -Dmdep.includeScope=test) || die "build failed"
fi
parts=" ${RXE_PARTS:-tests kit ofi soak bench interop dapltest} "
guest_parts=${parts/ insn / }
# The libfabric provider's kit (part ofi) runs from that module's test classes; its tests compile with
# the kit's test jar (the two-JVM peer), which needs the modules' test classes and jars: packaged
# without running their tests (-DskipTests).
ofi_module=$root/provider-ofi-bundle
if [[ $parts == *" ofi "* && $build = 1 ]]; then
  log "building provider-ofi-bundle"
  (cd "$root" && timeout 900 ./mvnw -B -q -pl provider-ofi-bundle -am -DskipTests package \
      dependency:build-classpath -Dmdep.outputFile=target/rxe-classpath.txt -Dmdep.includeScope=test) || die "build of provider-ofi-bundle failed"
fi
[ -s "$module/target/rxe-classpath.txt" ] || die "no $module/target/rxe-classpath.txt (build without --no-build first)"
[ -d "$module/target/test-classes" ] || die "no test classes in $module/target"
java_home=${JAVA_HOME:-}
if [ -z "$java_home" ] || [ ! -x "$java_home/bin/java" ]; then
  java_home=$(ls -d /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*25* 2>/dev/null | head -1 || true)
fi
[ -x "$java_home/bin/java" ] || die "no JDK 25 found (set JAVA_HOME)"

# 2. The current Debian kernel, unpacked without installing it.
#    RXE_KERNEL_PACKAGE=linux-image-<version>-amd64 boots another kernel of Debian's repository instead
#    (e.g. a newer one, to see how its rdma_rxe behaves).
pkg=${RXE_KERNEL_PACKAGE:-$(timeout 60 apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)}
[ -n "$pkg" ] || die "cannot tell the current kernel package from 'apt-cache depends linux-image-amd64'"
kver=${pkg#linux-image-}
kdir=$work/kernel-$kver
if [ ! -f "$kdir/boot/vmlinuz-$kver" ] || [ ! -f "$kdir/lib/modules/$kver/modules.dep" ]; then
  log "fetching $pkg"
  rm -rf "$kdir" "$work"/linux-image-*.deb
  (cd "$work" && timeout 300 apt-get download "$pkg") || die "apt-get download $pkg failed"
  timeout 120 dpkg -x "$work"/linux-image-"$kver"_*.deb "$kdir" || die "dpkg -x failed"
  timeout 120 depmod -b "$kdir" "$kver" || die "depmod failed"
  rm -f "$work"/linux-image-*.deb
fi
log "kernel $kver"

# 3. The initramfs: busybox, the modules in dependency order (crc32_generic first: rdma_rxe needs
#    it and nothing loads modules on demand in the guest) and an /init.
initrd=$work/initrd-$kver.gz
if [ ! -f "$initrd" ] || [ "$here/run-guest-tests.sh" -nt "$initrd" ]; then
  log "building the initramfs"
  ird=$work/initramfs
  rm -rf "$ird"; mkdir -p "$ird"/{bin,mods,proc,sys,dev,newroot}
  cp /bin/busybox "$ird/bin/busybox"
  mods=$(timeout 60 modprobe -S "$kver" -d "$kdir" --show-depends -a \
           crc32_generic virtio_pci virtio_net 9pnet_virtio 9p dummy veth rdma_rxe ib_uverbs rdma_ucm \
         | awk '$1 == "insmod" {print $2}') || die "modprobe --show-depends failed"
  : > "$ird/mods/order"
  for m in $mods; do
    b=$(basename "$m"); b=${b%.xz}; b=${b%.zst}
    grep -qx "$b" "$ird/mods/order" && continue
    case $m in
      *.xz) xz -dc "$m" > "$ird/mods/$b" ;;
      *.zst) zstd -qdc "$m" > "$ird/mods/$b" ;;
      *) cp "$m" "$ird/mods/$b" ;;
    esac
    echo "$b" >> "$ird/mods/order"
  done
  { grep -x crc32_generic.ko "$ird/mods/order" || true; grep -vx crc32_generic.ko "$ird/mods/order" || true; } > "$ird/mods/order.new"
  mv "$ird/mods/order.new" "$ird/mods/order"
  cp "$here/guest-init.sh" "$ird/init"; chmod +x "$ird/init"
  (cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd.tmp" && mv "$initrd.tmp" "$initrd"
fi

# 4. The writable share: the guest scripts, their settings and the results.
share=$work/share
rm -rf "$share"; mkdir -p "$share/reports"
cp "$here/guest-tests.sh" "$share/guest.sh"
cp "$here/guest-bench.sh" "$share/bench.sh"
cp "$here/guest-insn.sh" "$share/insn.sh"
cp "$here/guest-soak.sh" "$share/soak.sh"
cp "$here/guest-dapltest.sh" "$share/dapltest.sh"
cp "$here/guest-interop.sh" "$share/interop.sh"
# The whole class path is copied into the share: other modules of the checkout may be rebuilt while
# the guest runs, and the guest mounts a tmpfs over /tmp, where a checkout or a Maven repository may be.
share_classpath() { # module directory-in-share: prints the guest's class path
  local mod=$1 dir=$2 entry n=0 cp_entries=()
  for entry in "$mod/target/test-classes" "$mod/target/classes" $(tr ':' ' ' < "$mod/target/rxe-classpath.txt"); do
    n=$((n + 1))
    if [ -d "$entry" ]; then
      mkdir -p "$share/$dir/$n"; cp -r "$entry/." "$share/$dir/$n/"
      cp_entries+=("/mnt/work/$dir/$n")
    elif [ -f "$entry" ]; then
      mkdir -p "$share/$dir"; cp "$entry" "$share/$dir/$n.jar"
      cp_entries+=("/mnt/work/$dir/$n.jar")
    fi
  done
  (IFS=:; echo "${cp_entries[*]}")
}
classpath=$(share_classpath "$module" cp)
ofi_classpath=""
if [[ $parts == *" ofi "* ]]; then
  [ -s "$ofi_module/target/rxe-classpath.txt" ] && [ -d "$ofi_module/target/test-classes" ] \
    || die "no test classes or class path in $ofi_module/target (build without --no-build first)"
  ofi_classpath=$(share_classpath "$ofi_module" cp-ofi)
fi

# dapltest runs the assembled application (its launcher and bundles), copied into the share; its
# JVMs take about 5 minutes of the guest's time under TCG.
if [[ $parts == *" dapltest "* ]]; then
  if [ $build = 1 ]; then
    log "building the application (dist/launcher)"
    (cd "$root" && timeout 900 ./mvnw -B -q -pl dist/launcher -am -Dmaven.test.skip=true package) || die "build of dist/launcher failed"
  fi
  [ -f "$root/dist/launcher/target/jdapl/lib/jdapl-launcher.jar" ] || die "no application in dist/launcher/target/jdapl"
  cp -r "$root/dist/launcher/target/jdapl" "$share/jdapl"
fi

# The benchmark's C baseline: the same ping-pong through OFED's uDAPL (libdat2 and its cma provider,
# libdaplofa). Its Debian packages are unpacked here, not installed: installed, they would give the
# machine an /etc/dat.conf, which jdapl's own registry then reads. The guest finds the libraries in the share.
# The interop part also runs OFED's own programs (dapl2-utils' dtest and dtestcm), unpacked alike.
if [[ $parts == *" bench "* || $parts == *" interop "* ]]; then
  dapl=$work/dapl
  if [ ! -f "$dapl/usr/include/dat2/udat.h" ] || [ ! -x "$dapl/usr/bin/dtestcm" ]; then
    rm -rf "$dapl.tmp"; mkdir -p "$dapl.tmp"
    fetch_dapl() { (cd "$dapl.tmp" && timeout 300 apt-get download libdapl2 libdapl-dev dapl2-utils); }
    if ! fetch_dapl; then
      timeout 300 apt-get update -q || true
      fetch_dapl || die "downloading libdapl2 and libdapl-dev failed"
    fi
    for deb in "$dapl.tmp"/*.deb; do dpkg-deb -x "$deb" "$dapl.tmp/root" || die "unpacking $deb failed"; done
    rm -rf "$dapl"; mv "$dapl.tmp/root" "$dapl"; rm -rf "$dapl.tmp"
  fi
  dapl_lib=$(dirname "$(find "$dapl" -name 'libdat2.so.2' | head -1)")
  mkdir -p "$share/dapl"
  cp -a "$dapl_lib"/libdat2.so* "$dapl_lib"/libdaplofa.so* "$share/dapl/"
  for prog in dat-send-lat dat-interop; do
    gcc -O2 -Wall -I"$dapl/usr/include" -o "$share/$prog" "$here/$prog.c" -L"$share/dapl" -ldat2 \
      -Wl,-rpath,/mnt/work/dapl || die "building $prog failed"
  done
  cp "$dapl/usr/bin/dtest" "$dapl/usr/bin/dtestcm" "$dapl/usr/bin/dtestx" "$share/"
fi

# 5. Boot. The guest's clock source is the TSC (which TCG derives from the host's, the same on every
#    vCPU): the kernel would otherwise fall back to the emulated HPET, where every clock read is an
#    emulated device access (about 0.9 us), and the benchmark times its round trips with it.
boot() { # parts log qemu-arguments...
  local what=$1 console=$2
  shift 2
  rm -rf "$share/reports"; mkdir -p "$share/reports"
  # The connection rate's settings, each quoted for the shell that reads env.sh (RATE_JAVA_OPTS holds
  # several options; an empty RATE_JAVA_OPTS means no options, the others are passed when not empty).
  local rate_env="" v
  for v in RATE_JAVA_OPTS RATE_WARMUP RATE_ROUNDS RATE_TIMED RATE_CONNS RATE_BURST; do
    if [ -n "${!v-}" ] || { [ "$v" = RATE_JAVA_OPTS ] && [ -n "${RATE_JAVA_OPTS+set}" ]; }; then
      rate_env+="$v=$(printf %q "${!v-}")"$'\n'
    fi
  done
  cat > "$share/env.sh" <<ENV
RXE_PARTS="$what"
RXE_KIT_ONLY="${RXE_KIT_ONLY:-.*}"
RXE_TESTS="${RXE_TESTS:-}"
RXE_SOAK_CYCLES="${RXE_SOAK_CYCLES:-1000}"
RXE_OFI_BENCH="${RXE_OFI_BENCH:-0}"
RXE_OFI_KITS="${RXE_OFI_KITS:-verbs}"
RXE_FI_LOG_LEVEL="${RXE_FI_LOG_LEVEL:-}"
RXE_FI_UNIVERSE_SIZE="${RXE_FI_UNIVERSE_SIZE:-}"
RXE_OFI_JAVA_OPTS="${RXE_OFI_JAVA_OPTS:-}"
RXE_BENCH_JAVA_OPTS="${RXE_BENCH_JAVA_OPTS:-}"
RXE_INTEROP_CASES="${RXE_INTEROP_CASES:-dtest dtestx peers}"
${rate_env}JAVA=$java_home/bin/java
CLASSPATH=$classpath
OFI_CLASSPATH=$ofi_classpath
ENV
  log "booting the guest for:$what"
  set +e
  timeout "${RXE_GUEST_SECONDS:-3600}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 3G -nographic \
    -no-reboot -nic none "$@" \
    -kernel "$kdir/boot/vmlinuz-$kver" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off clocksource=tsc tsc=reliable" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$share",mount_tag=probe,security_model=none,multidevs=remap \
    < /dev/null 2>&1 | tee "$console"
  local qemu_rc=${PIPESTATUS[0]}
  set -e
  cp -r "$share/reports/." "$out/" 2>/dev/null || true
  [ $qemu_rc = 124 ] && die "the guest did not finish within ${RXE_GUEST_SECONDS:-3600} s (console in $console)"
  [ -f "$share/reports/rc" ] || die "the guest did not run its tests (qemu exit $qemu_rc; console in $console)"
  return 0
}

if [ -n "${guest_parts// /}" ]; then
  boot "$guest_parts" "$out/console.log"
  rc=$(cat "$share/reports/rc")
  if [ -f "$out/ofi-bench-rxe.txt" ]; then
    log "the libfabric provider's benchmark on rxe0 (verbs), $out/ofi-bench-rxe.txt:"
    cat "$out/ofi-bench-rxe.txt"
  fi
  [ "$rc" = 0 ] || die "the device tests, the conformance kits, the soak, the interop cases or dapltest failed in the guest (see $out/tests.txt, $out/ofa-rxe.txt, $out/ofi-verbs-rxe.txt, $out/ofi-bench-rxe.txt, $out/ofa-soak.txt, $out/ofa-interop.txt, $out/dapltest.log)"
  log "device tests and the conformance kit passed on rxe0; benchmark in $out/bench.txt"
fi

# 6. The DAT layer's instructions per round trip, counted by a TCG plugin in a boot of its own (the
#    plugin's counting slows every translated block, so the timed benchmark runs without it).
if [[ $parts == *" insn "* ]]; then
  gcc -O2 -Wall -shared -fPIC -o "$work/insn-count-plugin.so" "$here/insn-count-plugin.c" || die "building the plugin failed"
  gcc -O2 -Wall -shared -fPIC -o "$share/insn-marker.so" "$here/insn-marker.c" || die "building the marker failed"
  boot " insn " "$out/console-insn.log" -plugin "$work/insn-count-plugin.so,out=$share/insn-plugin.txt,vcpus=2${RXE_INSN_CODE:+,code=on}"
  [ -s "$out/insn.txt" ] || die "the instruction count wrote no table (see $out/console-insn.log)"
  [ -z "${RXE_INSN_CODE:-}" ] || cp "$share/insn-plugin.txt" "$out/"
  log "instruction counts in $out/insn.txt"
fi
elapsed=$(( $(date +%s) - start ))
echo "rxe: harness took ${elapsed} s; reports in $out"
echo "harness_seconds=$elapsed" > "$out/duration.txt"
