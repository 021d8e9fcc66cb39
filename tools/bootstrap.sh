#!/usr/bin/env bash
# Installs the Debian packages tessera needs, only those missing (idempotent:
# about a second when everything is present). Needs root or sudo to install.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  openmpi-bin libopenmpi-dev
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libopenblas-dev
  libfmt-dev doctest-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bootstrap: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
