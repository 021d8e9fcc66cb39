#pragma once
/// @file
/// The storage policy `tiles`: dense tiles with irregular boundaries, only nonzero tiles stored.
///
/// `dist_matrix<T, policy<block_cyclic_2d, tiles, Backend>>` is tessera's block-sparse matrix.
/// Its local block is the replicated shape (which tiles are nonzero, and their norms) plus the
/// tiles this rank holds, back to back in one View (storage/block_sparse.hpp). Tiles keep their
/// global tile coordinates, so the block addresses the whole tiling: it has no column map.
///
/// Tiles have no per-entry conversion through COO (a tile's place needs the mapping's tilings),
/// so this storage is not an `element_storage`; element-sparse matrices convert to it with
/// `to_tiles` and back with `to_elements` (matrix/convert_tiles.hpp).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_TILES_HPP
#endif

#include "../core/index_types.hpp"
#include "block_sparse.hpp"

#include <string_view>
#include <type_traits>
#include <utility>

namespace tessera {

/// A rank's block of a tile-stored matrix: the replicated shape and this rank's tiles.
///
/// `index`, `offset`, `values` and `node_shared` are those of block_sparse_tiles; `shape` is the
/// same on every rank.
template <class T, class MemorySpace>
struct tile_block : block_sparse_tiles<T, MemorySpace> {
  static_assert(std::is_floating_point_v<T>, "tessera::tiles: tiles hold float or double values");

  block_sparse_shape shape;

  tile_block() = default;
  tile_block(block_sparse_tiles<T, MemorySpace> local, block_sparse_shape s)
      : block_sparse_tiles<T, MemorySpace>(std::move(local)), shape(std::move(s)) {}

  /// Rows of the tiling (tiles keep global coordinates).
  [[nodiscard]] local_index num_rows() const noexcept { return static_cast<local_index>(shape.row_tiles().extent()); }
  /// Columns of the tiling.
  [[nodiscard]] local_index num_cols() const noexcept { return static_cast<local_index>(shape.col_tiles().extent()); }
  /// Elements this rank stores (every element of every local tile, zeros included).
  [[nodiscard]] offset_type nnz() const noexcept { return static_cast<offset_type>(this->num_elements()); }
};

/// Storage policy: block-sparse dense tiles (needs a distribution that places whole tiles,
/// `grid_mapping`: block_cyclic_2d, replicated_columns or a user's).
struct tiles {
  static constexpr std::string_view name() noexcept { return "tiles"; }
  template <class T, class MemorySpace>
  using block = tile_block<T, MemorySpace>;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_TILES_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_TILES_HPP
#endif
