#!/usr/bin/env bash
# What the soak run across network namespaces needs on the host: ip and tc (iproute2) and nft
# (nftables, which stands in for netem where the kernel has no sch_netem). Installs only what is
# missing; needs root for apt-get.
set -euo pipefail
# A root shell with a user's PATH (/usr/bin:/bin) still has tc and nft in the sbin directories.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
missing=()
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || missing+=(iproute2)
command -v nft >/dev/null 2>&1 || missing+=(nftables)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-host-packages.sh: root is needed to install ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 -q install -y --no-install-recommends "${missing[@]}" >/dev/null \
    || { apt-get -o DPkg::Lock::Timeout=600 -q update >/dev/null && \
         apt-get -o DPkg::Lock::Timeout=600 -q install -y --no-install-recommends "${missing[@]}" >/dev/null; }
