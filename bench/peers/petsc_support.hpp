#pragma once
// PETSc side of the peer benchmarks: MPI and Kokkos are started by tessera::environment, then
// PETSc on top (PETSc leaves MPI running at PetscFinalize when it did not start it).
#include "peer_common.hpp"

#include <petscmat.h>

#include <cstdlib>
#include <vector>

#define TESSERA_PETSC(call)                                                                          \
  do {                                                                                               \
    const PetscErrorCode tessera_petsc_error_ = (call);                                              \
    if (tessera_petsc_error_ != 0) {                                                                 \
      fmt::print(stderr, "{}:{}: PETSc error {} in {}\n", __FILE__, __LINE__, static_cast<int>(tessera_petsc_error_), #call); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                  \
    }                                                                                                \
  } while (0)

namespace tessera::bench::peer {

/// PetscInitialize / PetscFinalize around a scope (after tessera::environment started MPI).
class petsc_scope {
 public:
  petsc_scope(int& argc, char**& argv) { TESSERA_PETSC(PetscInitialize(&argc, &argv, nullptr, nullptr)); }
  petsc_scope(const petsc_scope&) = delete;
  petsc_scope& operator=(const petsc_scope&) = delete;
  ~petsc_scope() { PetscFinalize(); }
};

/// An MPIAIJ matrix with exactly the rows of `a` on each rank (columns split like rows when square).
inline Mat petsc_matrix(const communicator& comm, const local_csr& a) {
  std::vector<PetscInt> ptr(a.row_ptr.begin(), a.row_ptr.end());
  std::vector<PetscInt> cols(a.col_idx.begin(), a.col_idx.end());
  std::vector<PetscScalar> vals(a.values.begin(), a.values.end());
  const PetscInt local_cols = a.rows == a.cols ? static_cast<PetscInt>(a.local_rows()) : PETSC_DECIDE;
  Mat m = nullptr;
  TESSERA_PETSC(MatCreateMPIAIJWithArrays(comm.get(), static_cast<PetscInt>(a.local_rows()), local_cols,
                                          static_cast<PetscInt>(a.rows), static_cast<PetscInt>(a.cols), ptr.data(),
                                          cols.data(), vals.data(), &m));
  return m;
}

/// Sum of the stored values of an AIJ matrix (collective).
inline double petsc_checksum(const communicator& comm, Mat m) {
  PetscInt first = 0, last = 0;
  TESSERA_PETSC(MatGetOwnershipRange(m, &first, &last));
  double local = 0;
  for (PetscInt i = first; i < last; ++i) {
    PetscInt n = 0;
    const PetscScalar* v = nullptr;
    TESSERA_PETSC(MatGetRow(m, i, &n, nullptr, &v));
    for (PetscInt k = 0; k < n; ++k) local += v[k];
    TESSERA_PETSC(MatRestoreRow(m, i, &n, nullptr, &v));
  }
  return comm.sum(local);
}

/// Stored entries over all ranks.
inline global_index petsc_nnz(Mat m) {
  MatInfo info{};
  TESSERA_PETSC(MatGetInfo(m, MAT_GLOBAL_SUM, &info));
  return static_cast<global_index>(info.nz_used);
}

}  // namespace tessera::bench::peer
