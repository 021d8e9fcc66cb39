// bench_peer_tpetra_transpose: Tpetra 13.2's A^T (RowMatrixTransposer::createTranspose, a new
// fill-completed CrsMatrix each run) on the same matrix as bench_transpose. One JSON line.
//
//   mpiexec -n 2 bench_peer_tpetra_transpose --rmat 16 [--reps 3]
#include "tpetra_support.hpp"

#include <Tpetra_RowMatrixTransposer.hpp>

namespace {

using namespace tessera::bench::peer;

void run(const tessera::communicator& comm, const peer_args& args) {
  const local_csr rows = input_rows(comm, args.base);
  const auto a = tpetra_matrix_from(comm, rows);
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  Teuchos::RCP<tpetra_matrix> at;
  const double seconds = tessera::bench::median_seconds(comm, args.base.reps, [&] {
    at = Teuchos::null;
    at = Tpetra::RowMatrixTransposer<double>(a).createTranspose();
  });
  result r = measured(comm, args, "tpetra", "transpose", "A^T", rows.global_nnz, seconds);
  r.nnz_out = static_cast<tessera::global_index>(at->getGlobalNumEntries());
  r.checksum = tpetra_checksum(comm, *at);
  r.peak_rss_before_mb = rss_before;
  r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
  print(comm, r);
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse(argc, argv);
  tessera::environment env(args.rest_count, args.rest_argv);
  Tpetra::ScopeGuard tpetra(&args.rest_count, &args.rest_argv);
  run(env.world(), args);
  return 0;
}
