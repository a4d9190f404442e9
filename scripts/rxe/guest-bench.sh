#!/bin/bash
# Runs inside the Soft-RoCE guest: perftest's ib_send_lat and ib_write_bw on rxe0 (server and client
# in this guest over 192.168.77.1) and the same measurements through the DAT API on the OFA provider
# (org.jdapl.provider.ofa.rxe.DatBench), in interleaved rounds, and prints the table with the
# ratios. Results go to $1/bench.txt.
#
# DatBench stays up between its rounds (it warms up once, for tens of seconds under the emulated
# CPU) and measures when asked on its standard input; perftest runs between its rounds, so that the
# emulator's slow and fast phases fall on both alike. Each figure is the median of its rounds.
R=$1
. /mnt/work/env.sh
ITERS_LAT=${BENCH_LAT_ITERS:-2000}
ITERS_BW=${BENCH_BW_ITERS:-1000}
ROUNDS=${BENCH_ROUNDS:-7}
BW_ROUNDS=${BENCH_BW_ROUNDS:-3}
# Each end of a ping-pong is bound to a vCPU of its own, perftest's processes with taskset and DatBench's
# threads with sched_setaffinity, the client on one and the server on the other. Left to the guest's
# scheduler, the rounds of one run fell into two groups (DAT 15 or 22 us); bound so, they agree within
# a few percent. The client takes vCPU 1: with it on vCPU 0, perftest, DAT and bare verbs alike had
# slower rounds more often.
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
B=/tmp/bench
rm -rf $B; mkdir -p $B
trap '' PIPE

# perftest: the server listens on the default port; the client connects over rdma_cm (-R).
perf() { # name tool args...
  local name=$1; shift
  local tool=$1; shift
  timeout 120 taskset -c $SERVER_CPU $tool -d rxe0 -R "$@" > $B/$name.server 2>&1 &
  local spid=$!
  sleep 1
  timeout 120 taskset -c $CLIENT_CPU $tool -d rxe0 -R "$@" 192.168.77.1 > $B/$name.client 2>&1
  wait $spid
  cat $B/$name.client >> $R/perftest.txt
}
# The C baseline: the same ping-pong through OFED's uDAPL (dat-send-lat.c on libdat2 and its cma
# provider, libdaplofa, over rxe0's netdev; run-guest-tests.sh puts both in the share), bound to the
# same vCPUs. It sends inline up to perftest's default inline size (DAPL_MAX_INLINE), as perftest and
# DatBench send 2 B and 64 B.
printf 'ofa-v2-rxe-c u2.0 nonthreadsafe default /mnt/work/dapl/libdaplofa.so.2 dapl.2.0 "%s 0" ""\n' \
  "$JDAPL_RXE_NETDEV" > $B/dat.conf
c_dat() { # size -> prints the median half round trip
  local env=(env DAT_OVERRIDE=$B/dat.conf DAPL_MAX_INLINE=236)
  timeout 60 taskset -c $SERVER_CPU "${env[@]}" /mnt/work/dat-send-lat ofa-v2-rxe-c $1 $ITERS_LAT > $B/c.server 2>&1 &
  local spid=$! i
  for i in $(seq 1 300); do
    grep -q listening $B/c.server && break
    kill -0 $spid 2>/dev/null || break # the server failed: the client fails at once, and says why
    sleep 0.1
  done
  timeout 60 taskset -c $CLIENT_CPU "${env[@]}" /mnt/work/dat-send-lat ofa-v2-rxe-c $1 $ITERS_LAT $JDAPL_RXE_ADDRESS \
    > $B/c.client 2>&1
  wait $spid
  awk '$1 == "dat-send-lat" {print $3}' $B/c.client
  grep -h "dat-send-lat:" $B/c.server $B/c.client >&2
}
# ib_send_lat: "#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] ..."
p_lat() { awk '$1 ~ /^[0-9]+$/ && NF >= 6 && $5 ~ /^[0-9.]+$/ {print $5; exit}' $B/$1.client; }
# ib_write_bw: "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]"
p_bw() { awk '$1 ~ /^[0-9]+$/ && NF >= 4 && $4 ~ /^[0-9.]+$/ {print $4; exit}' $B/$1.client; }

# DatBench as a coprocess. C2 only (no tiered compilation): under the emulated CPU with two vCPUs,
# the JIT replacing a method's code while the other vCPU runs it crashed the JVM now and then, and a
# single compilation per method leaves the fewest such replacements. The serial collector, as for a
# small heap on a small machine. A JVM that dies is started again (at most three starts).
JVM="$JAVA --enable-native-access=ALL-UNNAMED -Xmx512m -XX:+UseSerialGC -XX:-TieredCompilation $RXE_BENCH_JAVA_OPTS -cp $CLASSPATH"
starts=0
dat_up=0
dat_start() {
  while [ $starts -lt 3 ]; do
    starts=$((starts + 1))
    coproc DAT { cd $B && exec timeout 1200 $JVM org.jdapl.provider.ofa.rxe.DatBench rxe0 $ITERS_LAT $ITERS_BW $CLIENT_CPU $SERVER_CPU 2>> $B/dat.err; }
    local line=
    while read -t 420 -r -u ${DAT[0]} line && [[ $line != warmup* ]]; do :; done
    if [[ $line == warmup* ]]; then
      echo "DatBench start $starts: $line"
      dat_up=1
      return 0
    fi
    echo "DatBench start $starts did not warm up: ${line:-no output}"
    tail -20 $B/dat.err 2>/dev/null
    kill $DAT_PID 2>/dev/null; wait $DAT_PID 2>/dev/null
  done
  return 1
}
dat() { # command -> prints the value
  local try line
  for try in 1 2; do
    [ $dat_up = 1 ] || dat_start || return 1
    if echo "$1" >&${DAT[1]} && read -t 300 -r -u ${DAT[0]} line; then
      echo "$line" | awk '{print $2}'
      return 0
    fi
    echo "DatBench died during '$1'" >&2
    dat_up=0
    kill $DAT_PID 2>/dev/null; wait $DAT_PID 2>/dev/null
  done
  return 1
}
record() { # file value
  [[ $2 =~ ^[0-9.]+$ ]] && echo "$2" >> $B/$1
}

: > $R/perftest.txt
echo "clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
dat_start
for round in $(seq 1 $ROUNDS); do
  for size in 2 64; do
    perf lat$size.$round ib_send_lat -s $size -n $ITERS_LAT
    p=$(p_lat lat$size.$round)
    d=$(dat "lat $size")
    record p.lat$size "$p"
    record d.lat$size "$d"
    record f.lat$size "$(dat "floor $size")"
    record c.lat$size "$(c_dat $size)"
    if [[ $p =~ ^[0-9.]+$ && $d =~ ^[0-9.]+$ ]]; then echo "$p $d" >> $B/pairs.lat$size; fi
  done
  echo "round $round: 2 B perftest $(tail -1 $B/p.lat2 2>/dev/null) DAT $(tail -1 $B/d.lat2 2>/dev/null);" \
       "64 B perftest $(tail -1 $B/p.lat64 2>/dev/null) DAT $(tail -1 $B/d.lat64 2>/dev/null) us;" \
       "C uDAPL $(tail -1 $B/c.lat2 2>/dev/null) / $(tail -1 $B/c.lat64 2>/dev/null) us"
done
for round in $(seq 1 $BW_ROUNDS); do
  perf bw64k.$round ib_write_bw -s 65536 -n $ITERS_BW
  record p.bw "$(p_bw bw64k.$round)"
  record d.bw "$(dat bw)"
  echo "bandwidth round $round: perftest $(tail -1 $B/p.bw 2>/dev/null) DAT $(tail -1 $B/d.bw 2>/dev/null) MB/s"
done
if [ $dat_up = 1 ]; then
  echo quit >&${DAT[1]}
  wait $DAT_PID 2>/dev/null
fi
cp $B/hs_err_pid*.log $R/ 2>/dev/null

median() { [ -s $B/$1 ] && sort -g $B/$1 | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
rounds() { [ -s $B/$1 ] && tr '\n' ' ' < $B/$1; }
# The median of the rounds' own ratios (a round's perftest and DAT figures were taken one after the other).
paired() { [ -s $B/pairs.$1 ] && awk 'NF == 2 && $1 + 0 > 0 {print $2 / $1}' $B/pairs.$1 | sort -g \
  | awk '{v[NR] = $1} END {if (NR) printf "%.2f", v[int((NR + 1) / 2)]; else print "n/a"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
D_LAT2=$(median d.lat2); P_LAT2=$(median p.lat2)
D_LAT64=$(median d.lat64); P_LAT64=$(median p.lat64)
D_BW=$(median d.bw); P_BW=$(median p.bw)
F_LAT2=$(median f.lat2); F_LAT64=$(median f.lat64)
C_LAT2=$(median c.lat2); C_LAT64=$(median c.lat64)
{
  echo "benchmark on rxe0 (Soft-RoCE, emulated CPU; compare the ratios)"
  printf "%-34s %12s %10s %7s %7s %11s %8s %7s\n" "measurement" "DAT (jdapl)" "perftest" "ratio" "paired" \
    "bare verbs" "C uDAPL" "ratio"
  printf "%-34s %12s %10s %7s %7s %11s %8s %7s\n" "send/recv latency 2 B [us]" "${D_LAT2:-n/a}" "${P_LAT2:-n/a}" \
    "$(ratio "$D_LAT2" "$P_LAT2")" "$(paired lat2)" "${F_LAT2:-n/a}" "${C_LAT2:-n/a}" "$(ratio "$C_LAT2" "$P_LAT2")"
  printf "%-34s %12s %10s %7s %7s %11s %8s %7s\n" "send/recv latency 64 B [us]" "${D_LAT64:-n/a}" "${P_LAT64:-n/a}" \
    "$(ratio "$D_LAT64" "$P_LAT64")" "$(paired lat64)" "${F_LAT64:-n/a}" "${C_LAT64:-n/a}" "$(ratio "$C_LAT64" "$P_LAT64")"
  printf "%-34s %12s %10s %7s\n" "RDMA Write bandwidth 64 KiB [MB/s]" "${D_BW:-n/a}" "${P_BW:-n/a}" "$(ratio "$P_BW" "$D_BW")"
  echo "the ping-pongs' clients ran on vCPU $CLIENT_CPU and their servers on vCPU $SERVER_CPU;"
  echo "latency: ib_send_lat t_typical (half round trip, post to post) vs the DAT ping-pong's median half"
  echo "round trip, timed the same way; bandwidth: ib_write_bw BW average vs DAT RDMA Writes;"
  echo "ratio = perftest is that many times better (1.00 = equal), of the medians; paired = the median of"
  echo "the rounds' own ratios; bare verbs = the same ping-pong with bare ibv_poll_cq/ibv_post_recv/"
  echo "ibv_post_send through the same downcalls in the same JVM (what Java costs without the DAT layer);"
  echo "C uDAPL = the same DAT ping-pong in C through OFED's uDAPL (libdapl's cma provider; dat-send-lat.c),"
  echo "timed the same way, and its ratio to perftest;"
  echo "each figure is the median of interleaved rounds (DatBench JVM starts: $starts):"
  echo "  2 B    DAT: $(rounds d.lat2)| perftest: $(rounds p.lat2)"
  echo "  64 B   DAT: $(rounds d.lat64)| perftest: $(rounds p.lat64)"
  echo "  bare verbs 2 B: $(rounds f.lat2)| 64 B: $(rounds f.lat64)"
  echo "  C uDAPL 2 B: $(rounds c.lat2)| 64 B: $(rounds c.lat64)"
  echo "  64 KiB DAT: $(rounds d.bw)| perftest: $(rounds p.bw)"
} | tee $R/bench.txt
# The libfabric provider's rows on the same device, when part ofi ran before (guest-tests.sh).
if [ -s $R/ofi-bench-rxe.txt ]; then
  { echo; echo "the libfabric provider (verbs) on rxe0 against fi_pingpong, part ofi (ofi-bench-rxe.txt):"
    cat $R/ofi-bench-rxe.txt; } | tee -a $R/bench.txt
fi
[ -s $B/dat.err ] && { echo "DatBench stderr:"; tail -20 $B/dat.err; }
exit 0
