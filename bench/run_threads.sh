#!/usr/bin/env bash
# Threads inside a rank against ranks: every benchmark at 1 rank x T threads and at T ranks x 1
# thread, alternated in one run so that both see the same machine. Needs a build against a threaded
# Kokkos (OpenMP; docs/gpu.md); on Debian's Serial Kokkos every line says "threads": 1.
# One JSON line per measurement on stdout (each carries "np" and "threads").
#
#   bench/run_threads.sh --build BUILD_DIR [--threads 2] [--reps 5] [--rounds 2]
set -euo pipefail
build="" threads=2 reps=5 rounds=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$build" ]] || { echo "usage: $0 --build BUILD_DIR [--threads 2] [--reps 5] [--rounds 2]" >&2; exit 2; }
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tools/common.sh  # mpiexec_cmd: unpinned (--bind-to none), so a rank's threads may use every core
export OPENBLAS_NUM_THREADS=1 OMP_PROC_BIND=false OMP_WAIT_POLICY=active

# name | program and arguments (relative to the build directory)
benchmarks=(
  "spmm|bench/bench_spmm --laplacian 1024 --k 8 --reps $reps"
  "spgemm|bench/bench_spgemm --rmat 16 --reps $reps"
  "transpose|bench/bench_transpose --rmat 18 --reps $reps"
  "build|bench/bench_build --rmat 18 --reps $reps"
  "bsgemm|bench/bench_bsgemm --tiles 128:512 --densities 0.1 --no-contract --reps $reps"
  "spdnn|examples/spdnn/tessera-spdnn --inputs 6000 --quiet"
)
for ((round = 0; round < rounds; ++round)); do
  for entry in "${benchmarks[@]}"; do
    command="${entry#*|}"
    read -r -a words <<<"$command"
    words[0]="$build/${words[0]}"
    OMP_NUM_THREADS=$threads "${mpiexec_cmd[@]}" -n 1 "${words[@]}" | grep '^{'
    OMP_NUM_THREADS=1 "${mpiexec_cmd[@]}" -n "$threads" "${words[@]}" | grep '^{'
  done
done
