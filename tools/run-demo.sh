#!/usr/bin/env bash
# The main job from a fresh machine: packages, release build, then sparse DNN
# inference (Graph Challenge, 1024 neurons x 120 layers, generated RadiX-Net and
# inputs) on 2 MPI ranks, checked against the serial reference. Extra arguments
# go to tessera-spdnn (try --help).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$root/tools/bootstrap.sh"
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release --target tessera-spdnn
"${mpiexec_cmd[@]}" -n "${TESSERA_RANKS:-2}" build/release/examples/spdnn/tessera-spdnn --inputs 6000 --check "$@"
