#pragma once
/// @file
/// grid_aligned_rows: the row distribution of a dense block that sits next to a matrix on a
/// process grid, so the 2-D SpMM moves X only within grid columns and Y only within grid rows.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_GRID_ALIGNED_ROWS_HPP
#endif

#include "../../concepts/distribution.hpp"
#include "../../core/index_types.hpp"
#include "../../distribution/row_partition.hpp"
#include "grid_positions.hpp"

#include <vector>

namespace tessera {

/// Which dimension of a grid matrix a dense block lines up with.
enum class grid_side {
  rows,     ///< Y of Y = A * X: A's rows, each grid row's rows split over its q ranks
  columns,  ///< X of Y = A * X: A's columns, each grid column's columns split over its p ranks
};

/// The row distribution, over A's rows or A's columns, of a dense block next to an A distributed
/// by `a` (block_cyclic_2d, replicated_columns, a user's grid mapping).
///
/// side::columns (X): the columns of A that grid column c holds are split, in order, into p
/// nearly equal runs, run r on rank (r, c). The rows of X a rank's entries name are then all in
/// its own grid column: the 2-D SpMM fetches X by a broadcast within grid columns.
/// side::rows (Y): the rows grid row r multiplies (under replicated_columns, its 1.5-D share) are
/// split into q runs, run c on rank (r, c): partial rows of Y are reduced within grid rows.
/// Words per rank: k n / q fetched from p - 1 peers and k m / p reduced onto q - 1 peers.
/// @code
/// using V = tessera::policy<tessera::row_partition, tessera::csr, tessera::mpi_rma>;
/// tessera::dist_dense<double, V> x(comm, tessera::grid_aligned_rows(A.mapping(), tessera::grid_side::columns), k);
/// tessera::dist_dense<double, V> y(comm, tessera::grid_aligned_rows(A.mapping(), tessera::grid_side::rows), k);
/// tessera::spmm(A, x, y);
/// @endcode
template <grid_mapping M>
[[nodiscard]] row_partition::mapping grid_aligned_rows(const M& a, grid_side side) {
  const auto& grid = a.grid();
  const bool by_columns = side == grid_side::columns;
  const global_index n = by_columns ? a.global_cols() : a.global_rows();
  const int lines = by_columns ? grid.q : grid.p;      // grid columns (or rows) holding the indices
  const int across = by_columns ? grid.p : grid.q;     // ranks of one line sharing its indices
  std::vector<int> line(static_cast<std::size_t>(n));
  std::vector<global_index> count(static_cast<std::size_t>(lines), 0);
  for (global_index i = 0; i < n; ++i) {
    const int l = by_columns ? detail::grid_col_of_col(a, i) : detail::grid_row_of_row(a, i);
    line[static_cast<std::size_t>(i)] = l;
    ++count[static_cast<std::size_t>(l)];
  }
  std::vector<global_index> seen(static_cast<std::size_t>(lines), 0);
  std::vector<int> owners(static_cast<std::size_t>(n));
  for (global_index i = 0; i < n; ++i) {
    const auto l = static_cast<std::size_t>(line[static_cast<std::size_t>(i)]);
    const int run = detail::even_share(seen[l]++, count[l], across);
    owners[static_cast<std::size_t>(i)] =
        by_columns ? grid.rank(run, static_cast<int>(l)) : grid.rank(static_cast<int>(l), run);
  }
  return row_partition::mapping(std::move(owners), a.num_ranks(), 0);
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_GRID_ALIGNED_ROWS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_GRID_ALIGNED_ROWS_HPP
#endif
