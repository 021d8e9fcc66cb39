// bench_peer_petsc_spmm: PETSc 3.18's Y = A * X on the same matrix as bench_spmm: MatMatMult of an
// MPIAIJ A and a dense X of k columns (the symbolic product once, MAT_REUSE_MATRIX timed), and
// MatMult for k = 1. One JSON line each.
//
//   mpiexec -n 2 bench_peer_petsc_spmm --rmat 14 [--k 1,16,64] [--reps 5]
#include "petsc_support.hpp"

namespace {

using namespace tessera::bench::peer;

void run(const tessera::communicator& comm, const peer_args& args) {
  const local_csr rows = input_rows(comm, args.base);
  Mat a = petsc_matrix(comm, rows);
  PetscInt col_first = 0, col_last = 0;
  TESSERA_PETSC(MatGetOwnershipRangeColumn(a, &col_first, &col_last));
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  result r;
  r.peer = "petsc";
  r.matrix = tessera::bench::matrix_name(args.base);
  r.np = comm.size();
  r.reps = args.base.reps;
  r.nnz_in = rows.global_nnz;
  for (long k : args.widths) {
    Mat x = nullptr, y = nullptr;
    TESSERA_PETSC(MatCreateDense(comm.get(), col_last - col_first, PETSC_DECIDE, static_cast<PetscInt>(rows.cols),
                                 static_cast<PetscInt>(k), nullptr, &x));
    {
      PetscScalar* data = nullptr;
      PetscInt lda = 0;
      TESSERA_PETSC(MatDenseGetLDA(x, &lda));
      TESSERA_PETSC(MatDenseGetArrayWrite(x, &data));
      for (PetscInt j = 0; j < k; ++j)
        for (PetscInt i = col_first; i < col_last; ++i) data[j * lda + (i - col_first)] = x_value(i, j);
      TESSERA_PETSC(MatDenseRestoreArrayWrite(x, &data));
    }
    TESSERA_PETSC(MatMatMult(a, x, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &y));  // symbolic + numeric, untimed
    const double seconds = tessera::bench::median_seconds(
        comm, args.base.reps, [&] { TESSERA_PETSC(MatMatMult(a, x, MAT_REUSE_MATRIX, PETSC_DEFAULT, &y)); });
    double local = 0;
    {
      const PetscScalar* data = nullptr;
      PetscInt lda = 0, m = 0;
      TESSERA_PETSC(MatDenseGetLDA(y, &lda));
      TESSERA_PETSC(MatGetLocalSize(y, &m, nullptr));
      TESSERA_PETSC(MatDenseGetArrayRead(y, &data));
      for (PetscInt j = 0; j < k; ++j)
        for (PetscInt i = 0; i < m; ++i) local += data[j * lda + i];
      TESSERA_PETSC(MatDenseRestoreArrayRead(y, &data));
    }
    r.bench = "peer_petsc_spmm";
    r.op = "MatMatMult";
    r.k = k;
    r.seconds = seconds;
    r.checksum = comm.sum(local);
    r.peak_rss_before_mb = rss_before;
    r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
    print(comm, r);
    TESSERA_PETSC(MatDestroy(&y));
    TESSERA_PETSC(MatDestroy(&x));

    if (k == 1) {
      Vec xv = nullptr, yv = nullptr;
      TESSERA_PETSC(MatCreateVecs(a, &xv, &yv));
      PetscScalar* data = nullptr;
      TESSERA_PETSC(VecGetArray(xv, &data));
      for (PetscInt i = col_first; i < col_last; ++i) data[i - col_first] = x_value(i, 0);
      TESSERA_PETSC(VecRestoreArray(xv, &data));
      const double mv_seconds =
          tessera::bench::median_seconds(comm, args.base.reps, [&] { TESSERA_PETSC(MatMult(a, xv, yv)); });
      PetscScalar sum = 0;
      TESSERA_PETSC(VecSum(yv, &sum));
      r.op = "MatMult";
      r.seconds = mv_seconds;
      r.checksum = sum;
      r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
      print(comm, r);
      TESSERA_PETSC(VecDestroy(&xv));
      TESSERA_PETSC(VecDestroy(&yv));
    }
  }
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
