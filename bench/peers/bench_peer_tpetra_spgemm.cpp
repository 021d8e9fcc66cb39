// bench_peer_tpetra_spgemm: Tpetra 13.2's C = A * A and C = A * A^T (Tpetra::MatrixMatrix::Multiply
// into a new CrsMatrix, fill-completed, each run) on the same matrix as bench_spgemm; A^T is formed
// once outside the timing, as bench_spgemm does. One JSON line each.
//
//   mpiexec -n 2 bench_peer_tpetra_spgemm --rmat 14 [--reps 3]
#include "tpetra_support.hpp"

#include <TpetraExt_MatrixMatrix.hpp>
#include <Tpetra_RowMatrixTransposer.hpp>

namespace {

using namespace tessera::bench::peer;

void run(const tessera::communicator& comm, const peer_args& args) {
  const local_csr rows = input_rows(comm, args.base);
  const auto a = tpetra_matrix_from(comm, rows);
  const auto at = Tpetra::RowMatrixTransposer<double>(a).createTranspose();
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  for (const auto& [op, b] : {std::pair<const char*, Teuchos::RCP<tpetra_matrix>>{"A*A", a},
                              std::pair<const char*, Teuchos::RCP<tpetra_matrix>>{"A*At", at}}) {
    if (rows.rows != rows.cols && b == a) continue;
    Teuchos::RCP<tpetra_matrix> c;
    const double seconds = tessera::bench::median_seconds(comm, args.base.reps, [&] {
      c = Teuchos::rcp(new tpetra_matrix(a->getRowMap(), 0));
      Tpetra::MatrixMatrix::Multiply(*a, false, *b, false, *c);
    });
    result r = measured(comm, args, "tpetra", "spgemm", op, rows.global_nnz, seconds);
    r.nnz_out = static_cast<tessera::global_index>(c->getGlobalNumEntries());
    r.checksum = tpetra_checksum(comm, *c);
    r.peak_rss_before_mb = rss_before;
    r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
    print(comm, r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse(argc, argv);
  tessera::environment env(args.rest_count, args.rest_argv);
  Tpetra::ScopeGuard tpetra(&args.rest_count, &args.rest_argv);
  run(env.world(), args);
  return 0;
}
