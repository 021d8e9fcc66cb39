#pragma once
// CombBLAS side of the peer benchmarks: a SpParMat<int64_t, double, SpDCCols> on a square
// sqrt(P) x sqrt(P) process grid, built from this rank's tuples of the same input (CombBLAS
// redistributes them to its 2-D blocks). CombBLAS runs only on a square number of ranks; on any
// other count the benchmark prints one JSON line saying so ("skipped") and exits 0.
#include "peer_common.hpp"

#include <CombBLAS/CombBLAS.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace tessera::bench::peer {

using combblas_matrix = combblas::SpParMat<std::int64_t, double, combblas::SpDCCols<std::int64_t, double>>;

/// The side of the square process grid over `comm`, or 0 if its size is not a square.
inline int combblas_grid_side(const communicator& comm) {
  const int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(comm.size()))));
  return side * side == comm.size() ? side : 0;
}

/// A line that says why nothing was measured, with the usual identifying fields.
inline void print_skipped(const communicator& comm, const std::string& bench, const args& a, const std::string& why) {
  if (comm.rank() == 0)
    fmt::print("{{\"bench\": \"{}\", \"peer\": \"combblas\", \"matrix\": \"{}\", \"np\": {}, \"backend\": \"mpi\", "
               "\"skipped\": \"{}\"}}\n",
               bench, matrix_name(a), comm.size(), why);
}

inline combblas_matrix combblas_matrix_from(const communicator& comm, const local_csr& a) {
  auto grid = std::make_shared<combblas::CommGrid>(comm.get(), combblas_grid_side(comm), combblas_grid_side(comm));
  std::vector<std::int64_t> rows(a.col_idx.size()), cols(a.col_idx.begin(), a.col_idx.end());
  std::vector<double> values(a.values);
  for (std::size_t i = 0; i + 1 < a.row_ptr.size(); ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      rows[static_cast<std::size_t>(k)] = a.row_begin + static_cast<std::int64_t>(i);
  // CombBLAS 1.6's FullyDistVec(std::vector, grid) is broken when the ranks' vectors differ in
  // length (its redistribution sends from the still-empty member array, and it does not compile for
  // double values). Equal lengths take its other path, which keeps each rank's vector as is.
  // So every rank pads its tuples to the longest rank's count with explicit zeros at an entry
  // that exists (the first entry of the lowest rank that has one); the matrix is built with
  // SumDuplicates, which folds them away: the same entries and values as A.
  const auto longest = comm.max(static_cast<std::int64_t>(rows.size()));
  const int donor = comm.min(rows.empty() ? comm.size() : comm.rank());
  std::int64_t pad_row = donor == comm.rank() ? rows.front() : 0, pad_col = donor == comm.rank() ? cols.front() : 0;
  if (donor < comm.size()) {
    MPI_Bcast(&pad_row, 1, MPI_INT64_T, donor, comm.get());
    MPI_Bcast(&pad_col, 1, MPI_INT64_T, donor, comm.get());
  }
  rows.resize(static_cast<std::size_t>(longest), pad_row);
  cols.resize(static_cast<std::size_t>(longest), pad_col);
  values.resize(static_cast<std::size_t>(longest), 0.0);
  combblas::FullyDistVec<std::int64_t, std::int64_t> drows(rows, grid), dcols(cols, grid);
  // The vector constructor does not compile for double (see above): set the values one by one
  // into a vector of the same length, hence the same layout as drows and dcols.
  combblas::FullyDistVec<std::int64_t, double> dvals(grid, drows.TotalLength(), 0.0);
  const std::int64_t first = drows.LengthUntil();
  for (std::size_t i = 0; i < values.size(); ++i) dvals.SetElement(first + static_cast<std::int64_t>(i), values[i]);
  return combblas_matrix(a.rows, a.cols, drows, dcols, dvals, true);
}

/// Sum of the stored values (collective).
inline double combblas_checksum(combblas_matrix& m) {
  const auto row_sums = m.Reduce(combblas::Row, std::plus<double>(), 0.0);
  return row_sums.Reduce(std::plus<double>(), 0.0);
}

}  // namespace tessera::bench::peer
