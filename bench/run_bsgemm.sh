#!/usr/bin/env bash
# Runs the block-sparse GEMM comparison: bench_bsgemm (tessera, both tile kernels) beside DBCSR on the
# same problems, at each rank count, and prints every JSON line (dgemm_reference lines included).
#
#   cmake --preset release && cmake --build --preset release -j2
#   bench/run_bsgemm.sh [BUILD_DIR] > bsgemm.jsonl
#
# Environment: NPS (rank counts, default "1 2"), REPS (default 5), TILES (default "128:512,32:128"),
# KERNELS (tessera tile kernels, default "auto blas"), A_MEMORY (where tessera keeps A: "shared", read in
# place on one node, and/or "private", fetched through the backend; default "shared").
set -euo pipefail
build=${1:-build/release}
nps=${NPS:-1 2}
reps=${REPS:-5}
tiles=${TILES:-128:512,32:128}
kernels=${KERNELS:-auto blas}
a_memory=${A_MEMORY:-shared}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# OpenBLAS older than the CPU falls back to its SSE3 kernels; name the ones the CPU can run.
openblas_coretype="$("$(dirname "${BASH_SOURCE[0]}")/../tools/openblas-coretype.sh")"
if [ -n "$openblas_coretype" ]; then export OPENBLAS_CORETYPE="$openblas_coretype"; fi
run() { mpiexec --allow-run-as-root --oversubscribe -n "$@"; }
dbcsr="$build/bench/peers_dbcsr/bench_peer_dbcsr_bsgemm"

for np in $nps; do
  for kernel in $kernels; do
    for memory in $a_memory; do
      run "$np" "$build/bench/bench_bsgemm" --tiles "$tiles" --reps "$reps" --tile-kernel "$kernel" --a-memory "$memory"
    done
  done
  if [[ -x "$dbcsr" ]]; then run "$np" "$dbcsr" --tiles "$tiles" --reps "$reps"; fi
done
