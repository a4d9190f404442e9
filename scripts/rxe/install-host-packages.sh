#!/usr/bin/env bash
# Installs the Debian packages the OFA provider needs on this machine, with apt-get, when they are
# missing and we are root. Every apt-get call is bounded in time.
#
#   install-host-packages.sh headers   libibverbs-dev, librdmacm-dev and gcc (the layout probe test)
#   install-host-packages.sh vm        headers + qemu, busybox, kmod, rdma-core, perftest, libfabric with
#                                      fi_info (the Soft-RoCE guest, which runs on this machine's root)
#
# Exit status (of scripts/apt-install.sh, which installs them): 0 when everything asked for is
# installed, 2 when something is missing and cannot be
# installed (not root, no apt-get), 1 when apt-get failed.
set -uo pipefail

what=${1:-headers}
case $what in
  headers) pkgs=(gcc libc6-dev libibverbs-dev librdmacm-dev) ;;
  vm) pkgs=(gcc libc6-dev libibverbs-dev librdmacm-dev qemu-system-x86 busybox-static kmod rdma-core
            ibverbs-providers ibverbs-utils librdmacm1 rdmacm-utils perftest iproute2 cpio xz-utils zstd
            libfabric1 libfabric-bin) ;;
  *) echo "usage: $0 headers|vm" >&2; exit 64 ;;
esac

exec "$(dirname "$0")/../apt-install.sh" "${pkgs[@]}"
