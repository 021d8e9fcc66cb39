#!/usr/bin/env bash
# Runs the peer comparison: tessera's bench_spgemm / bench_spmm / bench_transpose beside PETSc,
# Tpetra and CombBLAS on the same inputs, plus STREAM, and prints every JSON line.
#
#   cmake --preset release && cmake --build --preset release -j2
#   bench/run_peers.sh [BUILD_DIR] > peers.jsonl
#
# Environment: NP (default 2), REPS (default 3; SPGEMM_REPS for SpGEMM, default 1: PETSc takes
# half a minute per R-MAT 16 product here), SPGEMM_INPUTS, SPMM_INPUTS, TRANSPOSE_INPUTS,
# COMBBLAS_INPUTS (generator flags separated by ';'), K (SpMM widths, default 32). CombBLAS needs
# a square number of ranks: it runs at COMBBLAS_NP (default "1 4") beside tessera at the same
# counts, on smaller inputs (CombBLAS is several times slower), its lines saying so through "np";
# at NP = 2 it prints a "skipped" line.
set -euo pipefail
build=${1:-build/release}
np=${NP:-2}
reps=${REPS:-3}
spgemm_reps=${SPGEMM_REPS:-1}
k=${K:-32}
IFS=';' read -r -a spgemm_inputs <<< "${SPGEMM_INPUTS:---rmat 16;--laplacian 512}"
IFS=';' read -r -a spmm_inputs <<< "${SPMM_INPUTS:---rmat 16;--laplacian 1024;--rmat 20}"
IFS=';' read -r -a transpose_inputs <<< "${TRANSPOSE_INPUTS:---rmat 16;--laplacian 1024}"
IFS=';' read -r -a combblas_inputs <<< "${COMBBLAS_INPUTS:---rmat 14;--laplacian 512}"
combblas_np=${COMBBLAS_NP:-1 4}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# OpenBLAS older than the CPU falls back to its SSE3 kernels; name the ones the CPU can run.
openblas_coretype="$("$(dirname "${BASH_SOURCE[0]}")/../tools/openblas-coretype.sh")"
if [ -n "$openblas_coretype" ]; then export OPENBLAS_CORETYPE="$openblas_coretype"; fi
run() { mpiexec --allow-run-as-root --oversubscribe -n "$@"; }
have() { [[ -x "$build/bench/peers/$1" ]]; }

stream_line=$(run "$np" "$build/bench/bench_stream" --reps 5)
echo "$stream_line"
stream_gbs=$(sed -n 's/.*"gbs": \([0-9.]*\).*/\1/p' <<< "$stream_line")

for input in "${spgemm_inputs[@]}"; do
  # shellcheck disable=SC2086
  run "$np" "$build/bench/bench_spgemm" $input --reps "$spgemm_reps"
  for peer in petsc tpetra; do
    # shellcheck disable=SC2086
    if have "bench_peer_${peer}_spgemm"; then run "$np" "$build/bench/peers/bench_peer_${peer}_spgemm" $input --reps "$spgemm_reps"; fi
  done
done
if have bench_peer_combblas_spgemm; then
  # shellcheck disable=SC2086
  run "$np" "$build/bench/peers/bench_peer_combblas_spgemm" ${combblas_inputs[0]} --reps "$spgemm_reps"  # "skipped" unless square
  for input in "${combblas_inputs[@]}"; do
    for cnp in $combblas_np; do
      # shellcheck disable=SC2086
      run "$cnp" "$build/bench/peers/bench_peer_combblas_spgemm" $input --reps "$spgemm_reps"
      # shellcheck disable=SC2086
      run "$cnp" "$build/bench/bench_spgemm" $input --reps "$spgemm_reps"
    done
  done
fi

for input in "${spmm_inputs[@]}"; do
  # shellcheck disable=SC2086
  run "$np" "$build/bench/bench_spmm" $input --k "$k" --reps "$reps" --stream-gbs "$stream_gbs"
  for peer in petsc tpetra; do
    # shellcheck disable=SC2086
    if have "bench_peer_${peer}_spmm"; then run "$np" "$build/bench/peers/bench_peer_${peer}_spmm" $input --k "$k" --reps "$reps"; fi
  done
done

for input in "${transpose_inputs[@]}"; do
  # shellcheck disable=SC2086
  run "$np" "$build/bench/bench_transpose" $input --reps "$reps"
  for peer in petsc tpetra; do
    # shellcheck disable=SC2086
    if have "bench_peer_${peer}_transpose"; then run "$np" "$build/bench/peers/bench_peer_${peer}_transpose" $input --reps "$reps"; fi
  done
done
if have bench_peer_combblas_transpose; then
  for input in "${transpose_inputs[@]}"; do
    for cnp in $combblas_np; do
      # shellcheck disable=SC2086
      run "$cnp" "$build/bench/peers/bench_peer_combblas_transpose" $input --reps "$reps"
      # shellcheck disable=SC2086
      run "$cnp" "$build/bench/bench_transpose" $input --reps "$reps"
    done
  done
fi
