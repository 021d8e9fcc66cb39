#!/usr/bin/env bash
# Runs the peer comparison: tessera's bench_spgemm / bench_spmm / bench_transpose beside PETSc,
# Tpetra and CombBLAS on the same inputs, plus STREAM, and prints every JSON line.
#
#   cmake --preset release && cmake --build --preset release -j2
#   bench/run_peers.sh [BUILD_DIR] > peers.jsonl
#
# Environment: NP (default 2), REPS (default 3), SPGEMM_INPUTS, SPMM_INPUTS, TRANSPOSE_INPUTS
# (generator flags separated by ';'), K (SpMM widths, default 32). CombBLAS needs a square
# number of ranks: it runs at NP and, where NP is not a square, at 1 and 4 ranks
# (COMBBLAS_NP, default "1 4"), its lines saying so through "np".
set -euo pipefail
build=${1:-build/release}
np=${NP:-2}
reps=${REPS:-3}
k=${K:-32}
IFS=';' read -r -a spgemm_inputs <<< "${SPGEMM_INPUTS:---rmat 16;--laplacian 512}"
IFS=';' read -r -a spmm_inputs <<< "${SPMM_INPUTS:---rmat 16;--laplacian 1024;--rmat 20}"
IFS=';' read -r -a transpose_inputs <<< "${TRANSPOSE_INPUTS:---rmat 16;--laplacian 1024}"
combblas_np=${COMBBLAS_NP:-1 4}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
run() { mpiexec --allow-run-as-root --oversubscribe -n "$@"; }
have() { [[ -x "$build/bench/peers/$1" ]]; }

run "$np" "$build/bench/bench_stream" --reps 5
stream_gbs=$(run "$np" "$build/bench/bench_stream" --reps 5 | sed -n 's/.*"gbs": \([0-9.]*\).*/\1/p')

for input in "${spgemm_inputs[@]}"; do
  # shellcheck disable=SC2086
  run "$np" "$build/bench/bench_spgemm" $input --reps "$reps"
  for peer in petsc tpetra; do
    # shellcheck disable=SC2086
    if have "bench_peer_${peer}_spgemm"; then run "$np" "$build/bench/peers/bench_peer_${peer}_spgemm" $input --reps "$reps"; fi
  done
  if have bench_peer_combblas_spgemm; then
    for cnp in $combblas_np; do
      # shellcheck disable=SC2086
      run "$cnp" "$build/bench/peers/bench_peer_combblas_spgemm" $input --reps "$reps"
      # shellcheck disable=SC2086
      [[ "$cnp" == "$np" ]] || run "$cnp" "$build/bench/bench_spgemm" $input --reps "$reps"
    done
  fi
done

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
  if have bench_peer_combblas_transpose; then
    for cnp in $combblas_np; do
      # shellcheck disable=SC2086
      run "$cnp" "$build/bench/peers/bench_peer_combblas_transpose" $input --reps "$reps"
      # shellcheck disable=SC2086
      [[ "$cnp" == "$np" ]] || run "$cnp" "$build/bench/bench_transpose" $input --reps "$reps"
    done
  fi
done
