// bench_peer_combblas_spgemm: CombBLAS 1.6's C = A * A and C = A * A^T (Mult_AnXBn_Synch, the
// synchronous 2-D SUMMA SpGEMM, with PlusTimesSRing) on the same matrix as bench_spgemm. The
// second operand is a separate copy (CombBLAS's operands must not alias); A^T is formed once
// outside the timing, as bench_spgemm does. Square process counts only (1, 4, 9, ...).
//
//   OMP_NUM_THREADS=1 mpiexec -n 4 bench_peer_combblas_spgemm --rmat 14 [--reps 3]
#include "combblas_support.hpp"

namespace {

using namespace tessera::bench::peer;

void run(const tessera::communicator& comm, const peer_args& args) {
  if (combblas_grid_side(comm) == 0) {
    print_skipped(comm, "peer_combblas_spgemm", args.base, "CombBLAS needs a square number of ranks");
    return;
  }
  const local_csr rows = input_rows(comm, args.base);
  combblas_matrix a = combblas_matrix_from(comm, rows);
  combblas_matrix a2(a);
  combblas_matrix at(a);
  at.Transpose();
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  using semiring = combblas::PlusTimesSRing<double, double>;
  using dcols = combblas::SpDCCols<std::int64_t, double>;
  for (const auto& [op, b] : {std::pair<const char*, combblas_matrix*>{"A*A", &a2},
                              std::pair<const char*, combblas_matrix*>{"A*At", &at}}) {
    if (rows.rows != rows.cols && b == &a2) continue;
    std::optional<combblas_matrix> c;
    const double seconds = tessera::bench::median_seconds(comm, args.base.reps, [&] {
      c.reset();
      c.emplace(combblas::Mult_AnXBn_Synch<semiring, double, dcols>(a, *b, false, false));
    });
    result r = measured(comm, args, "combblas", "spgemm", op, rows.global_nnz, seconds);
    r.nnz_out = c->getnnz();
    r.checksum = combblas_checksum(*c);
    r.peak_rss_before_mb = rss_before;
    r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
    print(comm, r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse(argc, argv);
  tessera::environment env(args.rest_count, args.rest_argv);
  run(env.world(), args);
  return 0;
}
