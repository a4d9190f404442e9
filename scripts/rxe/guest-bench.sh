#!/bin/bash
# Runs inside the Soft-RoCE guest: perftest's ib_send_lat and ib_write_bw on rxe0 (server and client
# in this guest over 192.168.77.1), then the same measurements through the DAT API on the OFA
# provider (org.jdapl.provider.ofa.rxe.DatBench), and prints the table with the ratios. Results go
# to $1/bench.txt.
R=$1
. /mnt/work/env.sh
ITERS_LAT=${BENCH_LAT_ITERS:-2000}
ITERS_BW=${BENCH_BW_ITERS:-1000}
B=/tmp/bench
mkdir -p $B

# perftest: the server listens on the default port; the client connects over rdma_cm (-R).
perf() { # name tool args...
  local name=$1; shift
  local tool=$1; shift
  timeout 120 $tool -d rxe0 -R "$@" > $B/$name.server 2>&1 &
  local spid=$!
  sleep 1
  timeout 120 $tool -d rxe0 -R "$@" 192.168.77.1 > $B/$name.client 2>&1
  wait $spid
}
# Three latency rounds of both sizes in turn (as DatBench does); the median of the rounds' t_typical.
for round in 1 2 3; do
  perf lat2.$round ib_send_lat -s 2 -n $ITERS_LAT
  perf lat64.$round ib_send_lat -s 64 -n $ITERS_LAT
done
perf bw64k ib_write_bw -s 65536 -n $ITERS_BW
# ib_send_lat: "#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] ..."
lat1() { awk '$1 ~ /^[0-9]+$/ && NF >= 6 {print $5; exit}' $B/$1.client; }
lat() { for round in 1 2 3; do lat1 $1.$round; done | sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }
# ib_write_bw: "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]"
bw() { awk '$1 ~ /^[0-9]+$/ && NF >= 4 {print $4; exit}' $B/$1.client; }
P_LAT2=$(lat lat2); P_LAT64=$(lat lat64); P_BW=$(bw bw64k)
cat $B/lat2.*.client $B/lat64.*.client $B/bw64k.client > $R/perftest.txt 2>/dev/null

# No JIT options: DatBench warms up until the JIT has stopped compiling (tens of seconds under the
# emulated CPU). The serial collector, as for a small heap on a small machine.
JVM="$JAVA --enable-native-access=ALL-UNNAMED -Xmx512m -XX:+UseSerialGC -cp $CLASSPATH"
(cd $B && timeout 420 $JVM org.jdapl.provider.ofa.rxe.DatBench rxe0 $ITERS_LAT $ITERS_BW > $B/dat.txt 2> $B/dat.err)
cp $B/hs_err_pid*.log $R/ 2>/dev/null
cat $B/dat.txt
D_LAT2=$(awk '$1=="lat2" {print $2}' $B/dat.txt)
D_LAT64=$(awk '$1=="lat64" {print $2}' $B/dat.txt)
D_BW=$(awk '$1=="bw64k" {print $2}' $B/dat.txt)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
{
  echo "benchmark on rxe0 (Soft-RoCE, emulated CPU; compare the ratios)"
  printf "%-34s %14s %14s %8s\n" "measurement" "DAT (jdapl)" "perftest" "ratio"
  printf "%-34s %14s %14s %8s\n" "send/recv latency 2 B [us]" "${D_LAT2:-n/a}" "${P_LAT2:-n/a}" "$(ratio "$D_LAT2" "$P_LAT2")"
  printf "%-34s %14s %14s %8s\n" "send/recv latency 64 B [us]" "${D_LAT64:-n/a}" "${P_LAT64:-n/a}" "$(ratio "$D_LAT64" "$P_LAT64")"
  printf "%-34s %14s %14s %8s\n" "RDMA Write bandwidth 64 KiB [MB/s]" "${D_BW:-n/a}" "${P_BW:-n/a}" "$(ratio "$P_BW" "$D_BW")"
  echo "latency: ib_send_lat t_typical (half round trip) vs DAT ping-pong median half round trip (median of 3 rounds each);"
  echo "bandwidth: ib_write_bw BW average vs DAT RDMA Writes; ratio = perftest is that many times better (1.00 = equal)"
} | tee $R/bench.txt
[ -s $B/dat.err ] && { echo "DatBench stderr:"; tail -20 $B/dat.err; }
exit 0
