#!/usr/bin/env bash
# The SpDNN benchmark: tessera-spdnn for N = 1024 and 4096, L = 120, every mode
# and parallel scheme, then SuiteSparse:GraphBLAS on the same network where
# bench_peer_graphblas_spdnn was built. One JSON line per run on stdout.
#
#   bench/run_spdnn.sh [--np 2] [--inputs 60000] [--neurons "1024 4096"] [--backends "rma"] [--build build/release]
set -euo pipefail
np=2 inputs=60000 neurons="1024 4096" backends="rma" build=build/release layers=120
while [[ $# -gt 0 ]]; do
  case "$1" in
    --np) np=$2; shift 2 ;;
    --inputs) inputs=$2; shift 2 ;;
    --neurons) neurons=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --backends) backends=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# OpenBLAS older than the CPU falls back to its SSE3 kernels; name the ones the CPU can run.
openblas_coretype="$("$(dirname "${BASH_SOURCE[0]}")/../tools/openblas-coretype.sh")"
if [ -n "$openblas_coretype" ]; then export OPENBLAS_CORETYPE="$openblas_coretype"; fi
spdnn="$build/examples/spdnn/tessera-spdnn"
peer="$build/bench/peers_graphblas/bench_peer_graphblas_spdnn"
[[ -x "$spdnn" ]] || { echo "build tessera-spdnn first: cmake --build --preset release --target tessera-spdnn" >&2; exit 1; }
for n in $neurons; do
  for backend in $backends; do
    for mode in fused spmm spgemm; do
      for parallel in data model; do
        [[ $mode == fused && $parallel == model ]] && continue  # the fused mode is data-parallel only
        procs=$np
        [[ $backend == progress ]] && procs=$((np + 1))  # one progress rank on this node
        mpiexec --oversubscribe -n "$procs" "$spdnn" --neurons "$n" --layers "$layers" --inputs "$inputs" \
          --mode "$mode" --parallel "$parallel" --backend "$backend" --quiet
      done
    done
  done
  if [[ -x "$peer" ]]; then
    "$peer" --neurons "$n" --layers "$layers" --inputs "$inputs" --threads "$np"
  fi
done
