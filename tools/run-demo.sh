#!/usr/bin/env bash
# The main job from a fresh machine: packages, release build, then sparse DNN
# inference (Graph Challenge, 1024 neurons x 120 layers, generated RadiX-Net and
# inputs) on 2 MPI ranks, checked against the serial reference. Extra arguments
# go to tessera-spdnn (try --help) and override the defaults below
# (e.g. --inputs 1000 for a quicker run).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release --target tessera-spdnn

given() {
  local a
  for a in "${@:2}"; do [ "$a" = "$1" ] && return 0; done
  return 1
}
defaults=(--check)
# The challenge's own images (--features) come with their own count.
given --inputs "$@" || given --features "$@" || defaults+=(--inputs 6000)
"${mpiexec_cmd[@]}" -n "${TESSERA_RANKS:-2}" build/release/examples/spdnn/tessera-spdnn "${defaults[@]}" "$@"
