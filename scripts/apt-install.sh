#!/usr/bin/env bash
# Installs the Debian packages named as arguments with apt-get, those that are missing, when we are
# root. Every apt-get call is bounded in time. The providers' install-host-packages.sh scripts
# choose the packages and run this.
#
# Exit status: 0 when every package is installed, 2 when something is missing and cannot be
# installed (not root, no apt-get), 1 when apt-get failed.
set -uo pipefail

pkgs=("$@")

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "missing packages ${missing[*]} and cannot install them (needs root and apt-get)" >&2
  exit 2
fi

echo "installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only when they are older than a day (or absent).
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
  timeout 300 apt-get update -q >&2 || echo "apt-get update failed; trying the lists there are" >&2
fi
if ! timeout 600 apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
  echo "apt-get install ${missing[*]} failed" >&2
  exit 1
fi
exit 0
