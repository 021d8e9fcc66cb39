// bench_peer_petsc_spgemm: PETSc 3.18's C = A * A and C = A * A^T (MatMatMult of two MPIAIJ
// matrices, symbolic and numeric both timed, as tessera::spgemm is), on the same matrix as
// bench_spgemm; A^T is formed once outside the timing, as bench_spgemm does. One JSON line each.
//
//   mpiexec -n 2 bench_peer_petsc_spgemm --rmat 14 [--reps 3]
#include "petsc_support.hpp"

namespace {

using namespace tessera::bench::peer;

void run(const tessera::communicator& comm, const peer_args& args) {
  const local_csr rows = input_rows(comm, args.base);
  Mat a = petsc_matrix(comm, rows);
  Mat at = nullptr;
  TESSERA_PETSC(MatTranspose(a, MAT_INITIAL_MATRIX, &at));
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  for (const auto& [op, b] : {std::pair<const char*, Mat>{"A*A", a}, std::pair<const char*, Mat>{"A*At", at}}) {
    if (rows.rows != rows.cols && b == a) continue;
    Mat c = nullptr;
    const double seconds = tessera::bench::median_seconds(comm, args.base.reps, [&] {
      if (c != nullptr) TESSERA_PETSC(MatDestroy(&c));
      TESSERA_PETSC(MatMatMult(a, b, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &c));
    });
    result r = measured(comm, args, "petsc", "spgemm", op, rows.global_nnz, seconds);
    r.nnz_out = petsc_nnz(c);
    r.checksum = petsc_checksum(comm, c);
    r.peak_rss_before_mb = rss_before;
    r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
    print(comm, r);
    TESSERA_PETSC(MatDestroy(&c));
  }
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
