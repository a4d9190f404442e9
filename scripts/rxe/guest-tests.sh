#!/bin/bash
# Runs inside the Soft-RoCE guest (chrooted into the host's read-only root): creates rxe0 on a veth
# interface and runs the OFA provider's device tests with the JUnit console launcher. Results go to
# /mnt/work/reports (the writable share), with the exit status in reports/rc.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
R=/mnt/work/reports
mkdir -p $R
echo 1 > $R/rc
. /mnt/work/env.sh
t0=$(cut -d' ' -f1 /proc/uptime)
ip link set lo up
# rxe0 on one end of a veth pair: unlike a dummy interface it does ARP, so an address of the subnet
# that nobody answers is really unreachable (rdma_resolve_addr ends in ADDR_ERROR).
ip link add veth0 type veth peer name veth1
ip addr add 192.168.77.1/24 dev veth0
ip link set veth1 up
ip link set veth0 up
rdma link add rxe0 type rxe netdev veth0 || { echo "GUEST: rdma link add failed"; exit 1; }
ibv_devices
ibv_devinfo -v -d rxe0 > $R/ibv_devinfo.txt 2>&1
grep -E 'device_cap_flags|MEM_WINDOW|max_mw|max_qp:|max_cq:|max_mr:|max_pd:|state:|active_mtu|link_layer' $R/ibv_devinfo.txt
ulimit -l unlimited
ulimit -n 4096
echo "GUEST: rxe0 ready at $(cut -d' ' -f1 /proc/uptime) s"
export JDAPL_RXE_DEVICE=rxe0 JDAPL_RXE_ADDRESS=192.168.77.1 JDAPL_RXE_NETDEV=veth0
JVM="$JAVA --enable-native-access=ALL-UNNAMED -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp $CLASSPATH"
parts=${RXE_PARTS:-tests kit bench interop}
rc=0

# 1. The device tests (JUnit console launcher).
if [[ " $parts " == *" tests "* ]]; then
  $JVM org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --disable-ansi-colors --details=tree --details-theme=ascii \
    --select-package=org.jdapl.provider.ofa.device ${RXE_TESTS:+--include-classname=$RXE_TESTS} \
    --reports-dir=$R/junit 2>&1 | tee $R/tests.txt
  trc=${PIPESTATUS[0]}
  echo "GUEST: device tests exit $trc at $(cut -d' ' -f1 /proc/uptime) s"
  [ $trc = 0 ] || rc=1
fi

# 2. The conformance kit against the OFA provider (reports ofa-rxe, and ofa-v2-rxe for CONN_10 and CONN_13).
if [[ " $parts " == *" kit "* ]]; then
  $JVM -Dorg.slf4j.simpleLogger.defaultLogLevel=warn org.jdapl.provider.ofa.rxe.OfaRxeKit \
    $R/ofa-rxe.txt "${RXE_KIT_ONLY:-.*}" 2>&1 | tee $R/kit.log
  krc=${PIPESTATUS[0]}
  echo "GUEST: conformance kit exit $krc at $(cut -d' ' -f1 /proc/uptime) s"
  [ $krc = 0 ] || rc=1
fi

# 2a. The conformance kit against the libfabric provider's verbs MSG endpoints on the same device
#     (ofi-verbs-rxe.txt); what libfabric's verbs provider offers there in fi_info-verbs.txt. libfabric
#     is limited to its verbs provider (FI_PROVIDER): the others' probes cost seconds under TCG.
#     RXE_OFI_KITS names the kits: verbs (the default) and rxm, the kit on verbs;ofi_rxm (reliable
#     datagrams over verbs, jdapl's connection protocol over RDM: ofi-verbs-rxm-rxe.txt, what the
#     provider offers in fi_info-verbs-rxm.txt; libfabric limited to verbs and ofi_rxm, its log level
#     RXE_FI_LOG_LEVEL when set, e.g. warn, into ofi-rxm-kit.log; RXE_OFI_JAVA_OPTS adds JVM options,
#     e.g. -Dorg.slf4j.simpleLogger.log.org.jdapl.provider.ofi.RdmChannel=debug). The universe size is
#     the provider's own (FI_UNIVERSE_SIZE=8, Fi.java: rxm sizes each endpoint's verbs CQ by it) unless
#     RXE_FI_UNIVERSE_SIZE sets one. The guest's free memory every 5 s goes to meminfo-rxm.txt, the
#     kernel's last messages to dmesg-rxm.txt.
if [[ " $parts " == *" ofi "* ]]; then
  if [[ " ${RXE_OFI_KITS:-verbs} " == *" verbs "* ]]; then
    fi_info -p verbs -t FI_EP_MSG -v > $R/fi_info-verbs.txt 2>&1 || echo "GUEST: fi_info -p verbs found nothing"
    FI_PROVIDER=verbs $JAVA --enable-native-access=ALL-UNNAMED -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp $OFI_CLASSPATH \
      -Dorg.slf4j.simpleLogger.defaultLogLevel=warn org.jdapl.provider.ofi.kit.OfiVerbsKit \
      $R/ofi-verbs-rxe.txt "${RXE_KIT_ONLY:-.*}" 2>&1 | tee $R/ofi-kit.log
    orc=${PIPESTATUS[0]}
    echo "GUEST: ofi verbs conformance kit exit $orc at $(cut -d' ' -f1 /proc/uptime) s"
    [ $orc = 0 ] || rc=1
  fi
  if [[ " ${RXE_OFI_KITS:-verbs} " == *" rxm "* ]]; then
    FI_PROVIDER=verbs,ofi_rxm fi_info -p "verbs;ofi_rxm" -t FI_EP_RDM -v > $R/fi_info-verbs-rxm.txt 2>&1 \
      || echo "GUEST: fi_info -p 'verbs;ofi_rxm' found nothing"
    ( while sleep 5; do echo "$(cut -d' ' -f1 /proc/uptime) $(grep -E 'MemFree|MemAvailable|VmallocUsed|Committed_AS' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"; done > $R/meminfo-rxm.txt ) &
    memmon=$!
    env FI_PROVIDER=verbs,ofi_rxm ${RXE_FI_UNIVERSE_SIZE:+FI_UNIVERSE_SIZE=$RXE_FI_UNIVERSE_SIZE} ${RXE_FI_LOG_LEVEL:+FI_LOG_LEVEL=$RXE_FI_LOG_LEVEL} $JAVA --enable-native-access=ALL-UNNAMED -Xmx1g -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -XX:ErrorFile=$R/hs_err-ofi-rxm-%p.log -cp $OFI_CLASSPATH \
      -Dorg.slf4j.simpleLogger.defaultLogLevel=warn $RXE_OFI_JAVA_OPTS org.jdapl.provider.ofi.kit.OfiVerbsKit \
      $R/ofi-verbs-rxm-rxe.txt "${RXE_KIT_ONLY:-.*}" rxm 2>&1 | tee $R/ofi-rxm-kit.log
    xrc=${PIPESTATUS[0]}
    kill $memmon; dmesg | tail -80 > $R/dmesg-rxm.txt
    if [ $xrc -gt 1 ]; then # the JVM did not end by itself (a crash: its hs_err file is in the reports)
      echo "# the kit's JVM ended with exit $xrc after the cases above (ofi-rxm-kit.log, hs_err-ofi-rxm-*.log)" >> $R/ofi-verbs-rxm-rxe.txt
    fi
    echo "GUEST: ofi verbs;ofi_rxm conformance kit exit $xrc at $(cut -d' ' -f1 /proc/uptime) s"
    [ $xrc = 0 ] || rc=1
  fi
  # The libfabric provider's benchmark rows on the same device (ofi-bench-rxe.txt, its progress in
  # ofi-bench.log): the DAT 64 B ping-pong and 1 MiB RDMA Writes on two "verbs rxe0" IAs against
  # fi_pingpong -p verbs -e msg -d rxe0 in alternating rounds, each end bound to a vCPU as perftest's
  # are in part bench (client on 1, server on 0), C2 only as DatBench runs there. The warm-up runs
  # until the JIT is quiet (at most 150 s) and a round's iterations fit 8 s at the warm-up's pace
  # (a loaded host slows the guest's round trips from tens of microseconds to milliseconds): a few
  # minutes in all, run when RXE_OFI_BENCH=1 (a measurement, kept out of CI's time). A failure fails the part and says so in the report.
  if [ "${RXE_OFI_BENCH:-0}" = 1 ]; then
    FI_PROVIDER=verbs timeout 900 $JAVA --enable-native-access=ALL-UNNAMED -Xmx512m -XX:+UseSerialGC -XX:-TieredCompilation \
      $RXE_BENCH_JAVA_OPTS -cp $OFI_CLASSPATH -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
      org.jdapl.provider.ofi.bench.OfiPingPongBench ${OFI_BENCH_ITERS:-2000} ${OFI_BENCH_BIG_ITERS:-10} \
      --provider verbs --domain $JDAPL_RXE_DEVICE --address $JDAPL_RXE_ADDRESS \
      --rounds ${OFI_BENCH_ROUNDS:-5} --big-rounds ${OFI_BENCH_BIG_ROUNDS:-3} --warmup ${OFI_BENCH_WARMUP:-2000} \
      --warmup-seconds ${OFI_BENCH_WARMUP_SECONDS:-150} --round-seconds ${OFI_BENCH_ROUND_SECONDS:-8} \
      --cpus 1,0 --report $R/ofi-bench-rxe.txt 2>&1 | tee $R/ofi-bench.log
    brc=${PIPESTATUS[0]}
    if [ $brc != 0 ] || [ ! -s $R/ofi-bench-rxe.txt ]; then
      { echo "ofi verbs benchmark FAILED (exit $brc); the end of ofi-bench.log:"; tail -30 $R/ofi-bench.log; } \
        > $R/ofi-bench-rxe.txt
      rc=1
    fi
    echo "GUEST: ofi verbs benchmark exit $brc at $(cut -d' ' -f1 /proc/uptime) s"
  fi
fi

# 2b. The provider under faults: a peer JVM killed mid-stream, IA close with DTOs in flight, cycles.
if [[ " $parts " == *" soak "* ]]; then
  JVM="$JVM" /mnt/work/soak.sh $R 2>&1 | tee $R/soak.log
  src=${PIPESTATUS[0]}
  echo "GUEST: soak exit $src at $(cut -d' ' -f1 /proc/uptime) s"
  [ $src = 0 ] || rc=1
fi

# 3. The benchmark: DAT over the OFA provider next to perftest on the same device.
if [[ " $parts " == *" bench "* ]]; then
  /mnt/work/bench.sh $R 2>&1 | tee $R/bench.log
  echo "GUEST: benchmark done at $(cut -d' ' -f1 /proc/uptime) s"
fi

# 4. On the wire with OFED's uDAPL: dtest both ways, the C peer's cases both ways, the connection rate when asked for.
if [[ " $parts " == *" interop "* ]]; then
  /mnt/work/interop.sh $R 2>&1 | tee $R/interop.log
  irc=${PIPESTATUS[0]}
  echo "GUEST: interop exit $irc at $(cut -d' ' -f1 /proc/uptime) s"
  [ $irc = 0 ] || rc=1
fi

# 5. dapltest: a server and its clients on the OFA provider (guest-dapltest.sh).
if [[ " $parts " == *" dapltest "* ]]; then
  /mnt/work/dapltest.sh $R 2>&1 | tee $R/dapltest.log
  drc=${PIPESTATUS[0]}
  echo "GUEST: dapltest exit $drc at $(cut -d' ' -f1 /proc/uptime) s"
  [ $drc = 0 ] || rc=1
fi

# 6. The DAT layer's instructions per round trip (only in a boot with the counting plugin loaded).
if [[ " $parts " == *" insn "* ]]; then
  /mnt/work/insn.sh $R 2>&1 | tee $R/insn.log
  echo "GUEST: instruction count done at $(cut -d' ' -f1 /proc/uptime) s"
fi

echo $rc > $R/rc
echo "GUEST: exit $rc, $(cut -d' ' -f1 /proc/uptime) s since boot (started at $t0 s)"
sync
