#!/bin/bash
# Runs inside the Soft-RoCE guest after rxe0 is up (called by guest.sh with the reports directory):
# dapltest as operators run it, on the OFA provider's IA ofa-v2-rxe0-1 (the provider's default name
# for port 1 of rxe0; rdma_cm loops the connections back through rxe0). A server JVM (-T S) serves
# two client JVMs at once: one runs every functional feature (-T F), the performance test (-T P)
# blocking and polling, the limit test (-T L) and a transaction test through the shell, then stops
# the server (-T Q); the other runs a validated transaction test with two threads of two endpoint
# pairs. Exit status 0 only if every run passed and the server closed its IA gracefully.
# DAPLTEST_IA and DAPLTEST_APP (with JAVA) let it run elsewhere, e.g. on the emulated tcp fabric.
R=${1:?reports directory}
[ -f /mnt/work/env.sh ] && . /mnt/work/env.sh
APP=${DAPLTEST_APP:-/mnt/work/jdapl}
IA=${DAPLTEST_IA:-ofa-v2-rxe0-1}
# user.home: the shell keeps its history there (the guest's /root is read-only).
JVM=("$JAVA" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=deny -Xmx384m -XX:+UseSerialGC
     -XX:TieredStopAtLevel=1 -Duser.home=/tmp -jar "$APP/lib/jdapl-launcher.jar")
now() { cut -d' ' -f1 /proc/uptime; }
fail() { echo "DAPLTEST: FAILED: $*"; exit 1; }
[ -f "$APP/lib/jdapl-launcher.jar" ] || fail "no application in $APP"

"${JVM[@]}" dapltest -T S -D $IA > $R/dapltest-server.txt 2>&1 &
server=$!
for _ in $(seq 1 600); do
  grep -q "listening at" $R/dapltest-server.txt && break
  kill -0 $server 2>/dev/null || break
  sleep 0.5
done
grep -q "listening at" $R/dapltest-server.txt || { kill $server 2>/dev/null; cat $R/dapltest-server.txt; fail "the server did not listen"; }
# The server prints how its clients reach it: "-s HOST" (OFA) or "-s HOST:PORT" (emulated tcp fabric).
HOST=$(sed -n 's/^dapltest server: run clients as: .* -s \([^ ]*\) -D .*/\1/p' $R/dapltest-server.txt)
[ -n "$HOST" ] || { kill $server; fail "the server printed no address"; }
echo "DAPLTEST: server listening at $HOST at $(now) s"

script=""
for f in hwconn cqmgt endpoint pz mem connmgt queryinfo dataxfer dataxfer_client ns; do
  script+="dat:dapltest -T F -s $HOST -D $IA -f $f"$'\n'
done
script+="dat:dapltest -T P -s $HOST -D $IA -i 2000 -m b RW 65536"$'\n'
script+="dat:dapltest -T P -s $HOST -D $IA -i 2000 -m p RW 65536"$'\n'
script+="dat:dapltest -T P -s $HOST -D $IA -i 2000 -m b RR 4096"$'\n'
script+="dat:dapltest -T P -s $HOST -D $IA -i 2000 -m p SR 4096"$'\n'
script+="dat:dapltest -T P -s $HOST -D $IA -i 2000 -p 1 -m p SR 64"$'\n'
script+="dat:dapltest -T L -D $IA -m 64"$'\n'
script+="dat:dapltest -T T -s $HOST -D $IA -V -i 20 client SR 4096 3 server RW 65536 2 client RR 8192"$'\n'

timeout 600 "${JVM[@]}" dapltest -T T -s $HOST -D $IA -V -t 2 -w 2 -i 50 > $R/dapltest-transaction.txt 2>&1 &
transaction=$!
printf '%s' "$script" | timeout 900 "${JVM[@]}" > $R/dapltest-client.txt 2>&1
crc=$?
wait $transaction; trc=$?
echo "DAPLTEST: clients done at $(now) s (shell $crc, transaction $trc)"
timeout 300 "${JVM[@]}" dapltest -T Q -s $HOST -D $IA > $R/dapltest-quit.txt 2>&1; qrc=$?
for _ in $(seq 1 240); do kill -0 $server 2>/dev/null || break; sleep 0.5; done
kill -0 $server 2>/dev/null && { kill $server; fail "the server did not stop after -T Q"; }
wait $server; src=$?
cat $R/dapltest-transaction.txt $R/dapltest-client.txt $R/dapltest-quit.txt $R/dapltest-server.txt
passed=$(grep -c "^dapltest: PASSED" $R/dapltest-client.txt)
rc=0
[ $crc = 0 ] && [ $trc = 0 ] && [ $qrc = 0 ] && [ $src = 0 ] || rc=1
grep -q "Result: FAIL" $R/dapltest-client.txt && rc=1
[ "$passed" = 17 ] || { echo "DAPLTEST: $passed of 17 shell runs passed"; rc=1; }
grep -q "dapltest: PASSED (data validated), the server's side too" $R/dapltest-transaction.txt || rc=1
grep -q "0 failed; every object freed" $R/dapltest-server.txt || rc=1
echo "DAPLTEST: exit $rc at $(now) s"
exit $rc
