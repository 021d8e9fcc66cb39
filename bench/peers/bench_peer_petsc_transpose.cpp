// bench_peer_petsc_transpose: PETSc 3.18's A^T (MatTranspose, MAT_INITIAL_MATRIX, a new MPIAIJ
// matrix each run) on the same matrix as bench_transpose. One JSON line.
//
//   mpiexec -n 2 bench_peer_petsc_transpose --rmat 16 [--reps 3]
#include "petsc_support.hpp"

namespace {

using namespace tessera::bench::peer;

void run(const tessera::communicator& comm, const peer_args& args) {
  const local_csr rows = input_rows(comm, args.base);
  Mat a = petsc_matrix(comm, rows);
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  Mat at = nullptr;
  const double seconds = tessera::bench::median_seconds(comm, args.base.reps, [&] {
    if (at != nullptr) TESSERA_PETSC(MatDestroy(&at));
    TESSERA_PETSC(MatTranspose(a, MAT_INITIAL_MATRIX, &at));
  });
  result r = measured(comm, args, "petsc", "transpose", "A^T", rows.global_nnz, seconds);
  r.nnz_out = petsc_nnz(at);
  r.checksum = petsc_checksum(comm, at);
  r.peak_rss_before_mb = rss_before;
  r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
  print(comm, r);
  TESSERA_PETSC(MatDestroy(&at));
  TESSERA_PETSC(MatDestroy(&a));
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse(argc, argv);
  tessera::environment env(args.rest_count, args.rest_argv);
  {
    petsc_scope petsc(args.rest_count, args.rest_argv);
    run(env.world(), args);
  }
  return 0;
}
