#!/bin/bash
# Runs inside the Soft-RoCE guest: jdapl's OFA provider on the wire with OFED's uDAPL (libdat2 and its
# cma provider, libdaplofa, unpacked from Debian's packages by run-guest-tests.sh, never installed), on
# rxe0, each case in both directions:
#   - OFED's dtest (dapl2-utils) as server with jdapl's dtest -O as client, and the other way round;
#   - OFED's dtestx (RDMA Write with immediate data, compare-and-swap, fetch-and-add) against jdapl's
#     dtest -X, both ways;
#   - dat-interop.c (C, libdat2) against InteropPeer (Java): a reject with private data, graceful and
#     abrupt disconnects initiated by either side, DISCONNECTED on both;
#   - the connection rate: ConnRate (Java) and OFED's dtestcm, server on vCPU 0 and client on vCPU 1.
# Writes $1/ofa-interop.txt ("name PASS|FAIL detail", one line per case and direction) and appends the
# connection rate to $1/bench.txt. Exits 1 if a case failed. RXE_INTEROP_CASES (from env.sh) selects the
# groups: "dtest dtestx peers" by default, "rate" (the connection rate, a measurement) when named; RATE_CONNS, RATE_BURST, RATE_ROUNDS, RATE_WARMUP,
# RATE_TIMED and RATE_JAVA_OPTS set where run-guest-tests.sh runs reach the connection rate here too.
R=$1
. /mnt/work/env.sh
D=/mnt/work/dapl
B=/tmp/interop
rm -rf $B; mkdir -p $B
ADDR=$JDAPL_RXE_ADDRESS
DEV=${JDAPL_RXE_DEVICE:-rxe0}
JIA=ofa-v2-$DEV-1            # jdapl's default IA of the device (what its dtest server tells OFED's client)
CIA=ofa-v2-rxe-c             # OFED's IA for the same device
BUF=${INTEROP_BUF:-4096}
BURST=${INTEROP_BURST:-100}
CONNS=${RATE_CONNS:-100}
RATE_BURST=${RATE_BURST:-50}
RATE_ROUNDS=${RATE_ROUNDS:-3}
RATE_WARMUP=${RATE_WARMUP:-10}  # untimed cycles of ConnRate before its timed ones (the JIT compiles the path)
RATE_TIMED=${RATE_TIMED:-3}     # timed rounds of each kind per ConnRate run, and dtestcm runs per round
SERVER_CPU=0
CLIENT_CPU=1
# OFED's client of dtest opens the IA its server names, so OFED's dat.conf has jdapl's name too.
for name in $CIA $JIA; do
  printf '%s u2.0 nonthreadsafe default %s/libdaplofa.so.2 dapl.2.0 "%s 0" ""\n' "$name" $D "$JDAPL_RXE_NETDEV"
done > $B/dat.conf
C=(env DAT_OVERRIDE=$B/dat.conf LD_LIBRARY_PATH=$D)
JVM="$JAVA --enable-native-access=ALL-UNNAMED -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp $CLASSPATH"
# ConnRate's JVM runs C1 only, at a tenth of its usual invocation counts, so that its first warm-up
# cycles compile the connection path and the timed rounds run it compiled with no compiler beside them
# on the vCPU (ConnRate waits until the JIT is idle before each timed round and prints the JIT's time
# per round: 0 to 55 ms; at the usual counts the first timed round still compiled for up to 409 ms).
# It compiles what it runs often and nothing else: with -Xcomp (every method compiled before its first
# run, the default before) one ConnRate run of both JVMs made QEMU translate about 900 MB of guest code,
# against about 410 MB at C1's usual counts, and QEMU flushes its 1 GiB translation cache when it is
# full, after which every block of every program running, dtestcm's too, is translated anew
# (provider-ofa-bundle/BENCHMARK.md). ConnRate's own methods called once a round run interpreted. The
# JVM starts with its whole heap, so that no young collection falls into a timed round (-Xlog:gc shows
# them).
RATE_JAVA_DEFAULT="-XX:TieredStopAtLevel=1 -XX:CompileThresholdScaling=0.1"
RATE_JVM="$JAVA --enable-native-access=ALL-UNNAMED -Xms512m -Xmx512m -XX:+UseSerialGC -Xlog:gc \
  -XX:CompileCommand=quiet -XX:CompileCommand=exclude,org/jdapl/provider/ofa/rxe/ConnRate.main \
  -XX:CompileCommand=exclude,org/jdapl/provider/ofa/rxe/ConnRate.serve \
  -XX:CompileCommand=exclude,org/jdapl/provider/ofa/rxe/ConnRate.connect \
  ${RATE_JAVA_OPTS-$RATE_JAVA_DEFAULT} -cp $CLASSPATH"
OUT=$R/ofa-interop.txt
: > $OUT
rc=0
record() { # name PASS|FAIL detail
  echo "$1 $2 $3" | tee -a $OUT
  [ "$2" = PASS ] || rc=1
}
# Waits until file $1 has a line matching $2 or process $3 ended (at most 120 s).
await_line() {
  local i
  for i in $(seq 1 1200); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
# Waits until TCP port 15828 (OFED dtest's and dtestcm's parameter exchange) listens or process $1 ended.
await_port() {
  local i
  for i in $(seq 1 1200); do
    grep -qiE '^ *[0-9]+: [0-9A-F]+:3DD4 [0-9A-F]+:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
# One line of detail from a side's output: its last line that says why.
why() { grep -ahE "FAIL|Error|ERR|dtest:|expected|timed out" "$1" 2>/dev/null | tail -1 | tr -s ' \t' ' ' | cut -c1-160; }

has() { [[ " ${RXE_INTEROP_CASES:-dtest dtestx peers} " == *" $1 "* ]]; }

# 1. dtest: OFED's server, jdapl's client.
if has dtest; then
timeout 300 "${C[@]}" taskset -c $SERVER_CPU /mnt/work/dtest -s -P $CIA -b $BUF -B $BURST > $B/ofed-dtest-s.log 2>&1 &
spid=$!
timeout 300 taskset -c $CLIENT_CPU $JVM org.jdapl.provider.ofa.rxe.DtestMain -O -h $ADDR -P $JIA -b $BUF -B $BURST \
  -t 60 -W 120 > $B/jdapl-dtest-c.log 2>&1
crc=$?
wait $spid; src=$?
if [ $crc = 0 ] && grep -q "dtest: PASSED" $B/jdapl-dtest-c.log && grep -q "Test Complete. PASSED" $B/ofed-dtest-s.log; then
  record dtest:ofed-server,jdapl-client PASS "$(grep -a 'ping-pong latency' $B/jdapl-dtest-c.log | tr -s ' ' | cut -c1-80)"
else
  record dtest:ofed-server,jdapl-client FAIL "jdapl exit $crc: $(why $B/jdapl-dtest-c.log) | OFED exit $src: $(why $B/ofed-dtest-s.log)"
fi
cp $B/ofed-dtest-s.log $B/jdapl-dtest-c.log $R/ 2>/dev/null

# 2. dtest: jdapl's server, OFED's client (which fetches the server's parameters once, without retrying).
timeout 300 taskset -c $SERVER_CPU $JVM org.jdapl.provider.ofa.rxe.DtestMain -O -s -P $JIA -b $BUF -B $BURST \
  -t 60 -W 120 > $B/jdapl-dtest-s.log 2>&1 &
spid=$!
if await_line $B/jdapl-dtest-s.log "parameters on TCP port" $spid && await_port $spid; then
  timeout 300 "${C[@]}" taskset -c $CLIENT_CPU /mnt/work/dtest -h $ADDR -b $BUF -B $BURST > $B/ofed-dtest-c.log 2>&1
  crc=$?
else
  crc=255
fi
wait $spid; src=$?
if [ $src = 0 ] && grep -q "dtest: PASSED" $B/jdapl-dtest-s.log && grep -q "Test Complete. PASSED" $B/ofed-dtest-c.log; then
  record dtest:jdapl-server,ofed-client PASS "$(grep -a 'PingPong' $B/ofed-dtest-c.log | tr -s ' ' | cut -c1-100)"
else
  record dtest:jdapl-server,ofed-client FAIL "jdapl exit $src: $(why $B/jdapl-dtest-s.log) | OFED exit $crc: $(why $B/ofed-dtest-c.log)"
fi
cp $B/ofed-dtest-c.log $B/jdapl-dtest-s.log $R/ 2>/dev/null
fi

# 1b. dtestx: OFED's extensions on the wire (dtestx's RC test: its server listens on conn_qual 31112).
dtestx_case() { # name ofed-log jdapl-log jdapl-exit ofed-exit
  if [ $4 = 0 ] && [ $5 = 0 ] && grep -q "immed/atomic test PASSED" $B/$2 && grep -q "dtestx: IB extension test - immed/atomic test PASSED" $B/$3; then
    record $1 PASS "$(grep -a 'received immed_data' $B/$2 | tr -s ' ' | cut -c1-60)"
  else
    record $1 FAIL "jdapl exit $4: $(why $B/$3) | OFED exit $5: $(why $B/$2)"
  fi
  cp $B/$2 $B/$3 $R/ 2>/dev/null
}
if has dtestx; then
timeout 150 "${C[@]}" taskset -c $SERVER_CPU /mnt/work/dtestx -s -P $CIA > $B/ofed-dtestx-s.log 2>&1 &
spid=$!
sleep 2
timeout 150 taskset -c $CLIENT_CPU $JVM org.jdapl.provider.ofa.rxe.DtestMain -X -h $ADDR -P $JIA -t 60 \
  > $B/jdapl-dtestx-c.log 2>&1
crc=$?
wait $spid; src=$?
dtestx_case dtestx:ofed-server,jdapl-client ofed-dtestx-s.log jdapl-dtestx-c.log $crc $src

timeout 150 taskset -c $SERVER_CPU $JVM org.jdapl.provider.ofa.rxe.DtestMain -X -s -P $JIA -t 60 \
  > $B/jdapl-dtestx-s.log 2>&1 &
spid=$!
if await_line $B/jdapl-dtestx-s.log "waiting to snd addr" $spid && await_port $spid; then
  timeout 150 "${C[@]}" taskset -c $CLIENT_CPU /mnt/work/dtestx -h $ADDR -P $CIA > $B/ofed-dtestx-c.log 2>&1
  crc=$?
else
  crc=255
fi
wait $spid; src=$?
dtestx_case dtestx:jdapl-server,ofed-client ofed-dtestx-c.log jdapl-dtestx-s.log $src $crc
fi

# 3. The C peer and its Java twin, each case both ways. The Java side is one JVM (InteropPeer reading
#    its commands from standard input) for every case; the C side is a process per case.
if has peers; then
coproc JP { exec timeout 1200 $JVM org.jdapl.provider.ofa.rxe.InteropPeer $DEV - 2>> $B/jp.err; }
jp_read() { # pattern -> the first line of the Java peer's output matching it (120 s at most)
  local line
  while read -t 120 -r -u ${JP[0]} line; do
    echo "$line" >> $B/jp.log
    [[ $line =~ $1 ]] && { echo "$line"; return 0; }
  done
  return 1
}
jp_read '^ready' > /dev/null || echo "InteropPeer did not start: $(tail -3 $B/jp.err 2>/dev/null)"
peer_case() { # case server-kind(c|java)
  local kase=$1 skind=$2 name spid src jline cline
  : > $B/c.log
  if [ $skind = c ]; then
    name="$kase:ofed-server,jdapl-client"
    timeout 120 "${C[@]}" /mnt/work/dat-interop $CIA server $kase > $B/c.log 2>&1 &
    spid=$!
    if await_line $B/c.log listening $spid; then
      echo "client $kase $ADDR" >&${JP[1]}
      jline=$(jp_read "^(PASS|FAIL) ")
    fi
    wait $spid; src=$?
  else
    name="$kase:jdapl-server,ofed-client"
    echo "server $kase" >&${JP[1]}
    if jp_read '^listening' > /dev/null; then
      timeout 120 "${C[@]}" /mnt/work/dat-interop $CIA client $kase $ADDR > $B/c.log 2>&1
      src=$?
      jline=$(jp_read "^(PASS|FAIL) ")
    else
      src=255
    fi
  fi
  cline=$(grep -a -E '^(PASS|FAIL)' $B/c.log | tail -1)
  if [ $src = 0 ] && [[ $jline == PASS* ]] && [[ $cline == PASS* ]]; then
    record "$name" PASS "C: $cline; Java: $jline"
  else
    record "$name" FAIL "C exit $src: ${cline:-$(why $B/c.log)} | Java: ${jline:-no answer ($(tail -1 $B/jp.err 2>/dev/null))}"
  fi
  { echo "== $name C"; cat $B/c.log; } >> $R/interop-peers.log
}
for kase in reject disc-client-graceful disc-client-abrupt disc-server-graceful disc-server-abrupt; do
  peer_case $kase c
  peer_case $kase java
done
echo quit >&${JP[1]} 2>/dev/null
wait $JP_PID 2>/dev/null
{ echo "== Java peer"; cat $B/jp.log $B/jp.err 2>/dev/null; } >> $R/interop-peers.log
fi

# 4. The connection rate: ConnRate and dtestcm in interleaved rounds. In each round one ConnRate run
#    (a JVM per side) makes RATE_TIMED timed rounds of each kind after its warm-up, and dtestcm runs
#    RATE_TIMED times; the figures are the medians of all their timed rounds (one round of 100
#    connections takes a few hundred milliseconds, and on the emulated CPUs one in three or four is off
#    by half or more, for both alike).
has rate || exit $rc
for round in $(seq 1 $RATE_ROUNDS); do
  timeout 600 taskset -c $SERVER_CPU $RATE_JVM org.jdapl.provider.ofa.rxe.ConnRate $DEV server $CONNS $RATE_BURST $RATE_WARMUP \
    $RATE_TIMED > $B/rate-s.log 2>&1 &
  spid=$!
  if await_line $B/rate-s.log listening $spid; then
    timeout 600 taskset -c $CLIENT_CPU $RATE_JVM org.jdapl.provider.ofa.rxe.ConnRate $DEV client $CONNS $RATE_BURST $RATE_WARMUP \
      $RATE_TIMED $ADDR > $B/rate-c.log 2>&1
  fi
  wait $spid
  awk '$1 == "connrate" && $2 == "poll" {print $5}' $B/rate-c.log >> $B/j.cps
  awk '$1 == "connrate" && $2 == "poll" {print $6}' $B/rate-c.log >> $B/j.full
  awk '$1 == "connrate" && $2 == "wait" {print $5}' $B/rate-c.log >> $B/j.wait
  cat $B/rate-s.log $B/rate-c.log >> $R/conn-rate.log
  for run in $(seq 1 $RATE_TIMED); do
    # The kernel still retires the last run's connections (TIMEWAIT, then the QPs and IDs) for a second
    # or two after dtestcm has exited; ConnRate's rounds begin once its DISCONNECTED events (which
    # follow TIMEWAIT_EXIT) are in and after a pause of its own, so each dtestcm run begins as quietly.
    sleep 3
    timeout 300 "${C[@]}" taskset -c $SERVER_CPU /mnt/work/dtestcm -s -P $CIA -c $CONNS -b $RATE_BURST > $B/cm-s.log 2>&1 &
    spid=$!
    await_port $spid
    timeout 300 "${C[@]}" taskset -c $CLIENT_CPU /mnt/work/dtestcm -h $ADDR -P $CIA -c $CONNS -b $RATE_BURST > $B/cm-c.log 2>&1
    wait $spid
    # " Connections:  XXXX usec, CPS  YYYY Total ..."
    sed -n 's/.*Connections: *[0-9.]* usec, CPS *\([0-9.]*\).*/\1/p' $B/cm-c.log >> $B/c.cps
    cat $B/cm-s.log $B/cm-c.log >> $R/conn-rate.log
  done
  echo "connection rate round $round: jdapl $(awk '$1 == "connrate" && $2 == "poll" {printf "%s ", $5}' $B/rate-c.log)(waiting $(awk '$1 == "connrate" && $2 == "wait" {printf "%s ", $5}' $B/rate-c.log)) dtestcm $(tail -$RATE_TIMED $B/c.cps 2>/dev/null | tr '\n' ' ')per s"
done
median() { [ -s $B/$1 ] && sort -g $B/$1 | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
J=$(median j.cps); F=$(median j.full); O=$(median c.cps); W=$(median j.wait)
ratio=$(awk -v a="$J" -v b="$O" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }')
if [ -n "$J" ] && [ -n "$O" ]; then
  record conn-rate:jdapl,dtestcm PASS "jdapl $J/s, dtestcm $O/s, ratio $ratio"
else
  record conn-rate:jdapl,dtestcm FAIL "jdapl '${J}' dtestcm '${O}' (see conn-rate.log)"
fi
{
  echo
  echo "connection rate on rxe0 ($CONNS connections in bursts of $RATE_BURST, two processes, server on vCPU $SERVER_CPU,"
  echo "client on vCPU $CLIENT_CPU; as OFED's dtestcm measures: EPs created first, the time until all are established"
  echo "at the client; full cycle: connect, accept, established on both sides, disconnect, DISCONNECTED on both;"
  echo "both busy-poll their EVDs (dtestcm's default; the dat_evd_wait row: jdapl waiting instead); jdapl's JVM"
  echo "runs the cycle $RATE_WARMUP times untimed first, with ${RATE_JAVA_OPTS-$RATE_JAVA_DEFAULT},"
  echo "so that its connection path runs compiled, then collects and waits until the JIT is idle before each"
  echo "timed round; the server accepts each request as it comes, then takes the"
  echo "ESTABLISHED events, as dtestcm's server does)"
  printf "%-34s %12s %10s %7s\n" "measurement" "DAT (jdapl)" "dtestcm" "ratio"
  printf "%-34s %12s %10s %7s\n" "connections per second" "${J:-n/a}" "${O:-n/a}" "$ratio"
  printf "%-34s %12s %10s\n" "full cycles per second" "${F:-n/a}" "n/a"
  printf "%-34s %12s %10s\n" "connections/s, dat_evd_wait" "${W:-n/a}" "n/a"
  echo "ratio = jdapl's rate over dtestcm's (above 1.00: jdapl connects faster); medians of $RATE_ROUNDS x $RATE_TIMED timed rounds each:"
  echo "  jdapl: $(tr '\n' ' ' < $B/j.cps 2>/dev/null)| dtestcm: $(tr '\n' ' ' < $B/c.cps 2>/dev/null)| jdapl full: $(tr '\n' ' ' < $B/j.full 2>/dev/null)| jdapl waiting: $(tr '\n' ' ' < $B/j.wait 2>/dev/null)"
} | tee -a $R/bench.txt
exit $rc
