#!/bin/bash
# Runs inside the Soft-RoCE guest after rxe0 is up (called by guest.sh for RXE_PARTS "soak"): the OFA
# provider under faults: a peer JVM killed mid-stream, IAs closed with DTOs in flight, and IA
# open/close cycles with descriptors, threads, pinned memory and the kernel's RDMA resources checked.
# $1: the reports directory. RXE_SOAK_CYCLES: the number of cycles (default 1000).
R=$1
$JVM -Dorg.slf4j.simpleLogger.defaultLogLevel=warn org.jdapl.provider.ofa.rxe.OfaRxeSoak \
  $R/ofa-soak.txt "${RXE_SOAK_CYCLES:-1000}"
