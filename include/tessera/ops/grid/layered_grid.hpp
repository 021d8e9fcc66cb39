#pragma once
/// @file
/// layered_grid: where a 2-D or 3-D product computes each piece of C = A * B.
///
/// The P ranks form c layers of a p x q grid (P = c p q). Rank (l, r, s) computes the part of
/// C with rows in row group r and columns in column group s, over the inner indices of layer l:
/// C(r, s) = sum over l of A(r, K_l) * B(K_l, s). With one layer (c = 1) this is SUMMA, and when
/// A and B already sit on that grid (block_cyclic_2d over one grid) the groups are their own grid
/// rows and columns, so C is computed where it is stored and nothing is reduced. With c > 1 it is
/// the split-3D algorithm of CombBLAS (Azad et al.): each layer moves 1/c of A and B over a grid
/// sqrt(c) times smaller in each dimension, and the c partial C are reduced onto C's owners.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_LAYERED_GRID_HPP
#endif

#include "../../concepts/distribution.hpp"
#include "../../core/error.hpp"
#include "../../core/index_types.hpp"
#include "../../distribution/process_grid.hpp"
#include "grid_positions.hpp"

#include <algorithm>
#include <vector>

namespace tessera {

/// The arrangement of ranks a grid product computes on, and which group each index falls in.
struct layered_grid {
  process_grid grid;  ///< p x q, within one layer
  int layers = 1;     ///< c
  global_index rows = 0, inner = 0, cols = 0;
  /// Per global row of C: its row group; per global column of C: its column group; per inner
  /// index: its layer. Kept per index (not per tile) so that any tiling, and replicated rows
  /// cut into p shares, use one lookup.
  std::vector<int> row_group, col_group, inner_layer;

  [[nodiscard]] int size() const noexcept { return layers * grid.size(); }
  /// The rank of position (layer, grid row, grid column).
  [[nodiscard]] int rank(int layer, int row, int col) const noexcept { return layer * grid.size() + grid.rank(row, col); }
  [[nodiscard]] int layer_of(int rank) const noexcept { return rank / grid.size(); }
  [[nodiscard]] int row_of(int rank) const noexcept { return grid.row_of(rank % grid.size()); }
  [[nodiscard]] int col_of(int rank) const noexcept { return grid.col_of(rank % grid.size()); }
};


/// The layered grid of C = A * B over `layers` layers (collective in its checks: call it inside
/// an agreement). One layer: A's own grid, rows grouped as A places them and columns as B does
/// (A and B must share the grid). More layers: the squarest p x q grid of P / c ranks, rows,
/// columns and inner indices cut into even contiguous shares.
template <grid_mapping MA, grid_mapping MB>
[[nodiscard]] layered_grid make_layered_grid(const MA& a, const MB& b, int layers) {
  const int ranks = a.num_ranks();
  TESSERA_REQUIRE(layers >= 1, invalid_argument, "spgemm: {} layers; the 3-D algorithm needs at least one", layers);
  TESSERA_REQUIRE(ranks % layers == 0, invalid_argument,
                  "spgemm: {} layers do not divide the {} ranks (every layer is a grid of P / c ranks)", layers, ranks);
  layered_grid g;
  g.layers = layers;
  g.rows = a.global_rows();
  g.inner = a.global_cols();
  g.cols = b.global_cols();
  g.row_group.resize(static_cast<std::size_t>(g.rows));
  g.col_group.resize(static_cast<std::size_t>(g.cols));
  g.inner_layer.resize(static_cast<std::size_t>(g.inner));
  if (layers == 1) {
    TESSERA_REQUIRE(a.grid() == b.grid(), dimension_mismatch,
                    "spgemm: A is on a {} x {} grid but B on a {} x {} grid; redistribute B to A's grid", a.grid().p,
                    a.grid().q, b.grid().p, b.grid().q);
    g.grid = a.grid();
    for (global_index i = 0; i < g.rows; ++i) g.row_group[static_cast<std::size_t>(i)] = detail::grid_row_of_row(a, i);
    for (global_index j = 0; j < g.cols; ++j) g.col_group[static_cast<std::size_t>(j)] = detail::grid_col_of_col(b, j);
  } else {
    g.grid = process_grid::squarest(ranks / layers);
    for (global_index i = 0; i < g.rows; ++i)
      g.row_group[static_cast<std::size_t>(i)] = detail::even_share(i, g.rows, g.grid.p);
    for (global_index j = 0; j < g.cols; ++j)
      g.col_group[static_cast<std::size_t>(j)] = detail::even_share(j, g.cols, g.grid.q);
  }
  for (global_index k = 0; k < g.inner; ++k)
    g.inner_layer[static_cast<std::size_t>(k)] = detail::even_share(k, g.inner, layers);
  return g;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_LAYERED_GRID_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_LAYERED_GRID_HPP
#endif
