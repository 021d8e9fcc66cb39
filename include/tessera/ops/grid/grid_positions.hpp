#pragma once
/// @file
/// Where a row or column of a grid matrix sits on its process grid (the grid algorithms share
/// these: layered grids, grid_aligned_rows).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_GRID_POSITIONS_HPP
#endif

#include "../../concepts/distribution.hpp"
#include "../../core/index_types.hpp"

namespace tessera {

namespace detail {

/// Group of index i of n when n indices are cut into `groups` contiguous, nearly equal shares.
[[nodiscard]] inline int even_share(global_index i, global_index n, int groups) {
  return n == 0 ? 0 : static_cast<int>((i * groups) / n);
}

/// The grid row of row i of a grid mapping: that of the rank owning (i, first column), or an
/// even share of the rows over the grid rows when the mapping replicates (every grid row holds
/// every row: the replicas then split the rows between them).
template <grid_mapping M>
[[nodiscard]] int grid_row_of_row(const M& m, global_index i) {
  if constexpr (replicated_mapping<M>) {
    return even_share(i, m.global_rows(), m.grid().p);
  } else {
    if (m.global_cols() == 0) return even_share(i, m.global_rows(), m.grid().p);
    return m.grid().row_of(m.owner(i, 0));
  }
}

/// The grid column of column j of a grid mapping: that of the rank owning (first row, j).
template <grid_mapping M>
[[nodiscard]] int grid_col_of_col(const M& m, global_index j) {
  if (m.global_rows() == 0) return even_share(j, m.global_cols(), m.grid().q);
  return m.grid().col_of(m.owner(0, j));
}

}  // namespace detail

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_GRID_POSITIONS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_GRID_POSITIONS_HPP
#endif
