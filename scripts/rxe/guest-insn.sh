#!/bin/bash
# Runs inside the Soft-RoCE guest when qemu has loaded insn-count-plugin.so: the DAT ping-pong and the
# bare-verbs one on rxe0, counted in guest instructions (org.jdapl.provider.ofa.rxe.InstructionCountBench).
# The table goes to $1/insn.txt.
R=$1
. /mnt/work/env.sh
B=/tmp/insn
rm -rf $B; mkdir -p $B
# The same JVM settings as the timed benchmark (guest-bench.sh): C2 only, the serial collector.
JVM="$JAVA --enable-native-access=ALL-UNNAMED -Xmx512m -XX:+UseSerialGC -XX:-TieredCompilation $RXE_BENCH_JAVA_OPTS -cp $CLASSPATH"
cd $B && timeout 600 $JVM org.jdapl.provider.ofa.rxe.InstructionCountBench rxe0 /mnt/work/insn-marker.so \
  /mnt/work/insn-plugin.txt ${INSN_ITERS:-2000} ${INSN_BLOCKS:-3} 1 > $B/out.txt 2> $B/err.txt
echo "InstructionCountBench exit $?"
grep -v '^warmup' $B/out.txt > $R/insn.txt
cp /tmp/perf-*.map $R/perf.map 2>/dev/null # the compiled methods' addresses, for the plugin's blocks
cat $B/out.txt
[ -s $B/err.txt ] && { echo "stderr:"; tail -20 $B/err.txt; }
exit 0
