// bench_peer_graphblas_spgemm: SuiteSparse:GraphBLAS's C = A * A and C = A * A^T (GrB_mxm,
// plus-times, FP64; A^T through the descriptor, as GraphBLAS users write it) on the same matrix as
// bench_spgemm, built by tessera's generators with the same seed. GraphBLAS is shared-memory: run it
// on ONE rank with --threads T (default 2, the cores tessera's 2 ranks use). Each product is timed
// from an empty C to a finished one (GrB_wait), as tessera::spgemm returns a finished C. One JSON
// line each, with bench_spgemm's nnz_out and checksum (the sum of the stored values).
//
//   mpiexec -n 1 bench_peer_graphblas_spgemm --rmat 16 [--threads 2] [--reps 3]
#include "peers/peer_common.hpp"

extern "C" {
#include <GraphBLAS.h>
}

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace tessera::bench::peer;

void check(GrB_Info info, const char* what) {
  if (info != GrB_SUCCESS) {
    fmt::print(stderr, "GraphBLAS: {} failed ({})\n", what, static_cast<int>(info));
    std::exit(1);
  }
}

GrB_Matrix to_graphblas(const local_csr& a) {
  std::vector<GrB_Index> r, c;
  r.reserve(a.col_idx.size());
  c.reserve(a.col_idx.size());
  for (tessera::global_index i = 0; i < a.local_rows(); ++i)
    for (auto e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      r.push_back(static_cast<GrB_Index>(a.row_begin + i));
      c.push_back(static_cast<GrB_Index>(a.col_idx[static_cast<std::size_t>(e)]));
    }
  GrB_Matrix m = nullptr;
  check(GrB_Matrix_new(&m, GrB_FP64, static_cast<GrB_Index>(a.rows), static_cast<GrB_Index>(a.cols)), "GrB_Matrix_new");
  check(GrB_Matrix_build_FP64(m, r.data(), c.data(), a.values.data(), r.size(), GrB_PLUS_FP64), "GrB_Matrix_build");
  check(GrB_Matrix_wait(m, GrB_MATERIALIZE), "GrB_Matrix_wait");
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  // --threads is this peer's own option; the rest follow bench_common's conventions.
  int threads = 2;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else rest.push_back(argv[i]);
  }
  auto args = parse(static_cast<int>(rest.size()), rest.data());
  tessera::environment env(args.rest_count, args.rest_argv);
  const auto& comm = env.world();
  if (comm.size() != 1) {
    if (comm.rank() == 0)
      fmt::print("{{\"bench\": \"peer_graphblas_spgemm\", \"peer\": \"graphblas\", \"np\": {}, \"skipped\": "
                 "\"GraphBLAS runs on one rank with --threads; run with -n 1\"}}\n",
                 comm.size());
    return 0;
  }
  const local_csr rows = input_rows(comm, args.base);
  check(GrB_init(GrB_NONBLOCKING), "GrB_init");
  check(GxB_Global_Option_set(GxB_GLOBAL_NTHREADS, threads), "GxB_set(NTHREADS)");
  GrB_Matrix a = to_graphblas(rows);
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  for (const std::string op : {"A*A", "A*At"}) {
    if (op == "A*A" && rows.rows != rows.cols) continue;
    const GrB_Descriptor transpose_b = op == "A*At" ? GrB_DESC_T1 : nullptr;
    const GrB_Index c_rows = static_cast<GrB_Index>(rows.rows);
    const GrB_Index c_cols = static_cast<GrB_Index>(op == "A*At" ? rows.rows : rows.cols);
    GrB_Matrix c = nullptr;
    const double seconds = tessera::bench::median_seconds(comm, args.base.reps, [&] {
      if (c != nullptr) GrB_Matrix_free(&c);  // the previous product goes first, as in bench_spgemm
      check(GrB_Matrix_new(&c, GrB_FP64, c_rows, c_cols), "GrB_Matrix_new");
      check(GrB_mxm(c, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP64, a, a, transpose_b), "GrB_mxm");
      check(GrB_Matrix_wait(c, GrB_MATERIALIZE), "GrB_Matrix_wait");
    });
    GrB_Index nvals = 0;
    check(GrB_Matrix_nvals(&nvals, c), "GrB_Matrix_nvals");
    double sum = 0;
    check(GrB_Matrix_reduce_FP64(&sum, nullptr, GrB_PLUS_MONOID_FP64, c, nullptr), "GrB_reduce");
    result r = measured(comm, args, "graphblas", "spgemm", op, rows.global_nnz, seconds);
    r.nnz_out = static_cast<tessera::global_index>(nvals);
    r.checksum = sum;
    r.peak_rss_before_mb = rss_before;
    r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
    r.extra = fmt::format(", \"threads\": {}, \"graphblas\": \"{}.{}.{}\"", threads, GxB_IMPLEMENTATION_MAJOR,
                          GxB_IMPLEMENTATION_MINOR, GxB_IMPLEMENTATION_SUB);
    print(comm, r);
    GrB_Matrix_free(&c);
  }
  GrB_Matrix_free(&a);
  GrB_finalize();
  return 0;
}
