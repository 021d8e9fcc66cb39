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
  for (std::size_t i = 0; i + 1 < a.row_ptr.size(); ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      rows[static_cast<std::size_t>(k)] = a.row_begin + static_cast<std::int64_t>(i);
  combblas::FullyDistVec<std::int64_t, std::int64_t> drows(rows, grid), dcols(cols, grid);
  combblas::FullyDistVec<std::int64_t, double> dvals(a.values, grid);
  return combblas_matrix(a.rows, a.cols, drows, dcols, dvals, false);
}

/// Sum of the stored values (collective).
inline double combblas_checksum(combblas_matrix& m) {
  const auto row_sums = m.Reduce(combblas::Row, std::plus<double>(), 0.0);
  return row_sums.Reduce(std::plus<double>(), 0.0);
}

}  // namespace tessera::bench::peer
