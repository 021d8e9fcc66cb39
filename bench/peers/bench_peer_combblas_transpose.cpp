// bench_peer_combblas_transpose: CombBLAS 1.6's A^T (SpParMat::Transpose, in place: each run
// transposes the previous result, so the runs alternate A^T and A) on the same matrix as
// bench_transpose. Square process counts only (1, 4, 9, ...).
//
//   OMP_NUM_THREADS=1 mpiexec -n 4 bench_peer_combblas_transpose --rmat 16 [--reps 3]
#include "combblas_support.hpp"

namespace {

using namespace tessera::bench::peer;

void run(const tessera::communicator& comm, const peer_args& args) {
  if (combblas_grid_side(comm) == 0) {
    print_skipped(comm, "peer_combblas_transpose", args.base, "CombBLAS needs a square number of ranks");
    return;
  }
  const local_csr rows = input_rows(comm, args.base);
  combblas_matrix a = combblas_matrix_from(comm, rows);
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  const double seconds = tessera::bench::median_seconds(comm, args.base.reps, [&] { a.Transpose(); });
  // reps + 1 transposes: A^T when that count is odd; the checksum and entry count are the same either way.
  result r = measured(comm, args, "combblas", "transpose", "A^T", rows.global_nnz, seconds);
  r.nnz_out = a.getnnz();
  r.checksum = combblas_checksum(a);
  r.peak_rss_before_mb = rss_before;
  r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
  r.extra = ", \"in_place\": true";
  print(comm, r);
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse(argc, argv);
  tessera::environment env(args.rest_count, args.rest_argv);
  run(env.world(), args);
  return 0;
}
