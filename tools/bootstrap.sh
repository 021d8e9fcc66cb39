#!/usr/bin/env bash
# Installs the Debian packages tessera needs, only those missing (idempotent:
# about a second when everything is present). Installing needs root or sudo;
# as a user, sudo may ask for your password once.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  openmpi-bin libopenmpi-dev
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libopenblas-dev
  libfmt-dev doctest-dev
)

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  # Not Debian: CMake's configure names whatever is missing.
  echo "bootstrap: no dpkg/apt-get here; install the equivalents of: ${packages[*]}" >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || {
    echo "bootstrap: need root or sudo to install ${missing[*]}; as root: apt-get install ${missing[*]}" >&2
    exit 1
  }
  if ! sudo -n true 2>/dev/null && ! [ -t 0 ]; then
    echo "bootstrap: sudo wants a password and there is no terminal to ask on; run: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  # sudo drops the caller's environment, so DEBIAN_FRONTEND goes through env.
  as_root=(sudo)
fi
echo "bootstrap: installing ${missing[*]}${as_root:+ (with sudo)}"
apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
# A fresh machine (a container image) has no package lists; a failed update is not fatal by
# itself, since the lists it has may still name every package.
"${apt[@]}" update -qq || echo "bootstrap: apt-get update failed; trying to install with the package lists present" >&2
"${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}"
