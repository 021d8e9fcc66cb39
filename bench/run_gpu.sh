#!/usr/bin/env bash
# tessera on one GPU against cuSPARSE and cuBLAS, in one run of under 8 minutes: the CUDA-built
# tests at 1 and 2 ranks (sharing the GPU), tessera's benchmarks at 1 rank, bench_peer_cusparse on
# the same generated inputs, then a table of times and ratios (tessera / peer: below 1, tessera
# is faster). Every measurement is a JSON line in OUT/results.jsonl.
#
#   bench/run_gpu.sh BIN_DIR [OUT_DIR]
#
# BIN_DIR holds the CUDA build's executables (test_*, bench_*, tessera-spdnn, bench_peer_cusparse;
# a build folder works too: they are found below it). Environment: MPIRUN (default "mpirun
# --oversubscribe --bind-to none"), RUN_BUDGET (seconds, default 450), QUICK=1 for the smaller
# inputs only, KERNEL_TIMES_LIB (the built libtessera_kernel_times.so: the slowest operations run
# once more under it, into OUT/kernel-times.jsonl and the table's last part). Where Open MPI's
# single-copy shared memory fails (containers without CMA), the run falls back to
# OMPI_MCA_btl_vader_single_copy_mechanism=none and OMPI_MCA_osc=pt2pt by itself (node-shared
# test cases are then skipped, visibly).
set -u
if [ $# -lt 1 ]; then sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
BIN=$(cd "$1" && pwd)
OUT=${2:-gpu-results}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
RES=$OUT/results.jsonl; : > "$RES"
LOGS=$OUT/logs; mkdir -p "$LOGS"
MPIRUN=${MPIRUN:-mpirun --oversubscribe --bind-to none}
T0=$(date +%s); BUDGET=${RUN_BUDGET:-450}
END_TESTS=$((T0 + BUDGET * 30 / 100)); END=$((T0 + BUDGET))
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
find_bin() { [ -x "$BIN/$1" ] && echo "$BIN/$1" || find "$BIN" -name "$1" -type f -perm -u+x 2>/dev/null | head -1; }

# step NAME PHASE_END LIMIT program args...: at most LIMIT seconds, never past the phase's end.
step() {
  local name=$1 pend=$2 lim=$3 prog=$4; shift 4
  local exe; exe=$(find_bin "$prog")
  if [ -z "$exe" ]; then say "SKIP $name ($prog not built)"; echo "{\"step\": \"$name\", \"skipped\": \"not built\"}" >> "$RES"; return 0; fi
  local t=$lim n; n=$(date +%s); (( pend - n < t )) && t=$((pend - n))
  if (( t < 5 )); then say "SKIP $name (out of time)"; echo "{\"step\": \"$name\", \"skipped\": \"out of time\"}" >> "$RES"; return 0; fi
  say "RUN  $name: $prog $*"
  local s; s=$(date +%s.%N)
  timeout -k 5 "$t" ${MPIRUN} -n "${NP:-1}" "$exe" "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  grep -a '^{"bench"' "$LOGS/$name.log" | sed "s/^{/{\"step\": \"$name\", /" >> "$RES"
  local secs; secs=$(python3 -c "print(round($(date +%s.%N) - $s, 2))")
  echo "{\"step\": \"$name\", \"rc\": $rc, \"seconds\": $secs}" >> "$RES"
  say "     $name: rc=$rc ${secs}s$( (( rc == 124 || rc == 137 )) && echo ' TIMED OUT')"
}

export OMP_PROC_BIND=${OMP_PROC_BIND:-false} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# MPI: the fallback for machines where single-copy shared memory (CMA) is refused (probed with a
# test that opens one-sided windows between 2 ranks).
probe=$(find_bin test_spmm)
if [ -n "$probe" ] && ! timeout 60 ${MPIRUN} -n 2 "$probe" '--test-case=spmm with a banded A*' > "$LOGS/mpi_probe.log" 2>&1; then
  export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_osc=pt2pt
  say "MPI: single-copy shared memory refused; using vader without single copy and osc pt2pt"
fi

say "=== tests, 1 and 2 ranks at once"
tests=$(cd "$BIN" && find . -regex '.*/test_[a-z0-9_]*' -type f -perm -u+x -printf '%f\n' | sort -u)
lane() { for t in $tests; do NP=$1 OMP_NUM_THREADS=1 step "$t.np$1" "$END_TESTS" 75 "$t"; done; }
lane 1 & lane 2 & wait

say "=== benchmarks and peers, 1 rank"
E=$((END - 10))
sparse() {  # the sparse operations on one generated input, tessera then cuSPARSE
  local input=$1 tag; tag=$(echo "$1" | tr -d ' -')
  step "spmm_$tag" $E 60 bench_spmm $input --k 8,32,128 --reps 5
  step "peer_$tag" $E 40 bench_peer_cusparse $input --k 8,32,128 --ops spmm,transpose --reps 5
  step "transpose_$tag" $E 40 bench_transpose $input --algorithms route --reps 5
}
sparse "--rmat 18"
sparse "--laplacian 2048"
for input in "--laplacian 2048" "--rmat 16"; do
  tag=$(echo "$input" | tr -d ' -')
  step "spgemm_$tag" $E 60 bench_spgemm $input --reps 3
  step "peer_spgemm_$tag" $E 60 bench_peer_cusparse $input --ops spgemm --reps 3
done
step spdnn_1024 $E 90 tessera-spdnn --neurons 1024 --layers 120 --inputs 60000 --check --trace
step bsgemm_512_1024 $E 60 bench_bsgemm --tiles 512:1024 --densities 1,0.1 --m 8192 --no-contract --reps 3
step peer_dgemm $E 30 bench_peer_cusparse --dense 8192 --ops dgemm --reps 5
step bsgemm_128_512 $E 60 bench_bsgemm --tiles 128:512 --densities 1,0.1 --m 4096 --no-contract --reps 3
if [ "${QUICK:-0}" != 1 ]; then
  sparse "--rmat 20"
  step spdnn_4096 $E 90 tessera-spdnn --neurons 4096 --layers 120 --inputs 60000
fi

# Where the time goes: the slowest operations again with tools/kernel-times loaded (Kokkos fences
# after every kernel then, so these runs are slower than the ones above and are left out of the table).
if [ -n "${KERNEL_TIMES_LIB:-}" ] && [ -f "${KERNEL_TIMES_LIB}" ]; then
  say "=== where the time goes (tools/kernel-times: $OUT/kernel-times.jsonl)"
  profile() {
    local name=$1; shift
    ( export KOKKOS_TOOLS_LIBS="$KERNEL_TIMES_LIB" TESSERA_KERNEL_TIMES="$OUT/kernel-times.jsonl" TESSERA_KERNEL_TIMES_LABEL="$name"
      step "$name" "$E" 40 "$@" )
  }
  profile profile_spdnn_1024 tessera-spdnn --neurons 1024 --layers 120 --inputs 60000
  profile profile_transpose_rmat18 bench_transpose --rmat 18 --algorithms route --reps 5
  profile profile_spgemm_rmat16 bench_spgemm --rmat 16 --reps 3
  profile profile_bsgemm_512_1024 bench_bsgemm --tiles 512:1024 --densities 1 --m 8192 --no-contract --reps 3
  profile profile_spmm_rmat18 bench_spmm --rmat 18 --k 8,32,128 --reps 5
fi

say "=== table (total $(( $(date +%s) - T0 )) s)"
python3 - "$RES" "$LOGS" <<'PY' | tee "$OUT/table.txt"
import json, re, sys, glob, os
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
recs = [r for r in recs if not r.get("step", "").startswith("profile_")]  # slowed down by the profiler
print("TESTS (doctest summary; rc = mpirun's exit code)")
for r in recs:
    if r.get("step", "").startswith("test_") and "rc" in r:
        text = open(os.path.join(sys.argv[2], r["step"] + ".log"), errors="replace").read()
        m = re.findall(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed\s*\|\s*(\d+) skipped", re.sub(r"\x1b\[[0-9;]*m", "", text))
        summary = f"{m[-1][1]}/{m[-1][0]} passed, {m[-1][2]} failed, {m[-1][3]} skipped" if m else "no summary"
        print(f"  {r['step']:40s} rc={r['rc']:<4} {summary}")
mine = [r for r in recs if r.get("bench") in ("spmm", "spgemm", "transpose") and r.get("kernel", "tessera") == "tessera"]
peers = [r for r in recs if r.get("bench") == "peer_cusparse" and "seconds" in r]
def peer(op, matrix, k=None):
    for p in peers:
        if p["op"] == op and p["matrix"] == matrix and (k is None or p.get("k") == k):
            return p
print("\nSPARSE OPERATIONS, 1 rank, medians (ratio = tessera / cuSPARSE)")
print(f"  {'op':10s} {'matrix':16s} {'k':>4s} {'tessera':>12s} {'cuSPARSE':>12s} {'ratio':>7s}  checksums")
for r in mine:
    op = r["bench"]
    if op == "spgemm" and r.get("op") != "A*A": continue
    if op == "transpose" and r.get("algorithm") != "route": continue
    p = peer(op, r["matrix"], r.get("k") if op == "spmm" else None)
    ratio = f"{r['seconds'] / p['seconds']:7.2f}" if p else "      -"
    ps = f"{p['seconds'] * 1e3:9.3f} ms" if p else "           -"
    print(f"  {op:10s} {r['matrix']:16s} {str(r.get('k', '')):>4s} {r['seconds'] * 1e3:9.3f} ms {ps} {ratio}  "
          f"{r.get('checksum')} | {p.get('checksum') if p else '-'}")
dg = [p for p in peers if p["op"] == "dgemm"]
print("\nBSGEMM (GFLOP/s of the tile products) against cuBLAS DGEMM" + (f" {dg[0]['gflops']:.0f} GFLOP/s" if dg else ""))
for r in recs:
    if r.get("bench") == "bsgemm":
        g = r["flops"] / r["seconds"] / 1e9
        print(f"  {r['matrix']:40s} {g:9.0f} GFLOP/s" + (f"  {100 * g / dg[0]['gflops']:5.1f}% of DGEMM" if dg else ""))
print("\nSPDNN (target: 4e12 edges/s at 1024 neurons)")
for r in recs:
    if r.get("bench") == "spdnn":
        print(f"  {r['neurons']:6d} x {r['layers']} x {r['inputs']}  {r['edges_per_second']:.3e} edges/s  {r['seconds'] * 1e3:.1f} ms"
              f"  categories={r['categories']}  valid={r.get('valid', '-')}")
PY
if [ -s "$OUT/kernel-times.jsonl" ]; then
  python3 - "$OUT/kernel-times.jsonl" <<'PY' | tee -a "$OUT/table.txt"
import json, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows[r["label"]].append(r)
print("\nWHERE THE TIME GOES (tools/kernel-times, rank 0; every kernel fenced; whole program incl. setup)")
for label, rs in rows.items():
    rs = [r for r in rs if r["rank"] == 0]
    total = [r for r in rs if r["kind"] == "summary"]
    if total:
        t = total[0]
        print(f"  {label}: wall {t['wall_seconds']:.3f} s = kernels {t['kernel_seconds']:.3f} + copies {t['copy_seconds']:.3f}"
              f" + fences {t['fence_seconds']:.3f} + host {t['host_seconds']:.3f}")
    for r in [r for r in rs if r["kind"] == "region"][:8] + [r for r in rs if r["kind"] not in ("summary", "region")][:8]:
        print(f"    {r['kind']:7s} {r['seconds'] * 1e3:10.2f} ms {r['count']:7d}x  {r['name'][:90]}")
PY
fi
say "done: $OUT"
