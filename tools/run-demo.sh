#!/usr/bin/env bash
# The main job from a fresh machine: packages, release build, then the demo on
# 2 MPI ranks. Extra arguments go to the demo (try --help).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$root/tools/bootstrap.sh"
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release --target tessera-rmat-summary
"${mpiexec_cmd[@]}" -n "${TESSERA_RANKS:-2}" build/release/examples/rmat_summary/tessera-rmat-summary --scale 14 "$@"
