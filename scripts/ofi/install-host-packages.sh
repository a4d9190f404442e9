#!/usr/bin/env bash
# Installs the Debian packages the libfabric (OFI) provider needs on this machine, with apt-get, when
# they are missing and we are root. Every apt-get call is bounded in time.
#
#   install-host-packages.sh runtime   libfabric1 (the provider opens IAs)
#   install-host-packages.sh headers   runtime + libfabric-dev, gcc (the layout probe test)
#   install-host-packages.sh bench     headers + libfabric-bin (fi_info, fi_pingpong: the baseline)
#
# Exit status (of scripts/apt-install.sh, which installs them): 0 when everything asked for is
# installed, 2 when something is missing and cannot be
# installed (not root, no apt-get), 1 when apt-get failed.
set -uo pipefail

what=${1:-headers}
case $what in
  runtime) pkgs=(libfabric1) ;;
  headers) pkgs=(libfabric1 libfabric-dev gcc libc6-dev) ;;
  bench) pkgs=(libfabric1 libfabric-dev gcc libc6-dev libfabric-bin) ;;
  *) echo "usage: $0 runtime|headers|bench" >&2; exit 64 ;;
esac

exec "$(dirname "$0")/../apt-install.sh" "${pkgs[@]}"
