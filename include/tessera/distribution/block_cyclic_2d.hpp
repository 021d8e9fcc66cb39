#pragma once
/// @file
/// block_cyclic_2d: tiles dealt cyclically over a p x q process grid.
///
/// Tile (ti, tj) lives on grid position (ti mod p, column_owner(tj)), where the
/// column owner is tj mod q by default (2-D cyclic, as ScaLAPACK) or any
/// assignment of tile columns to grid columns (bsgemm's C follows B's
/// flop-balanced columns). Grid position (r, c) is rank r * q + c.
///
/// With a uniform tiling of block b this is the element-block-cyclic layout of
/// an element-sparse dist_matrix; with the irregular tilings of a block-sparse
/// matrix it is tile-cyclic.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_BLOCK_CYCLIC_2D_HPP
#endif

// Seen by tessera::instantiations' extern declarations (instantiations/declarations.hpp).
#define TESSERA_COMPONENT_block_cyclic_2d 1

#include "../core/error.hpp"
#include "../core/index_types.hpp"
#include "process_grid.hpp"
#include "tile_placement.hpp"
#include "tiled_range.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

namespace tessera {

/// Distribution policy: tiles over a p x q grid, cyclic in both dimensions.
///
/// As a distribution of an element-sparse dist_matrix it cuts rows and columns
/// into blocks of `block_rows` x `block_cols` (the grid is the squarest one of
/// the communicator unless `grid` is set):
/// @code
/// using P = tessera::policy<tessera::block_cyclic_2d, tessera::csr, tessera::mpi_rma>;
/// auto A = tessera::build_from_triplets<double, P>(comm, m, n, t, {.distribution = {.grid = {2, 2}, .block_rows = 16}});
/// @endcode
/// Block-sparse matrices use make_tile_mapping with their own tilings.
struct block_cyclic_2d {
  std::optional<process_grid> grid;  ///< default: process_grid::squarest(P)
  global_index block_rows = 64;
  global_index block_cols = 64;

  static constexpr std::string_view name() noexcept { return "block_cyclic_2d"; }

  /// Who owns what: the two tilings, the grid and the tile-column owners.
  class mapping {
   public:
    mapping() = default;

    /// Tile-cyclic over `rows` x `cols` tilings; `column_owner[tj]` (default tj mod q) is tile column tj's grid column.
    mapping(process_grid grid, tiled_range rows, tiled_range cols, std::vector<int> column_owner = {})
        : grid_(grid),
          rows_(std::move(rows)),
          cols_(std::move(cols)),
          column_owner_(detail::checked_column_owners("block_cyclic_2d", grid_, cols_, std::move(column_owner))) {
      row_place_ = detail::tile_placement(
          rows_, grid_.p, [&](std::size_t t) { return static_cast<int>(t % static_cast<std::size_t>(grid_.p)); });
      col_place_ = detail::tile_placement(cols_, grid_.q, [&](std::size_t t) { return column_owner_[t]; });
    }

    [[nodiscard]] int num_ranks() const noexcept { return grid_.size(); }
    [[nodiscard]] global_index global_rows() const noexcept { return rows_.extent(); }
    [[nodiscard]] global_index global_cols() const noexcept { return cols_.extent(); }
    [[nodiscard]] const process_grid& grid() const noexcept { return grid_; }
    [[nodiscard]] const tiled_range& row_tiles() const noexcept { return rows_; }
    [[nodiscard]] const tiled_range& col_tiles() const noexcept { return cols_; }
    [[nodiscard]] const std::vector<int>& column_owners() const noexcept { return column_owner_; }

    /// Grid row of tile row ti and grid column of tile column tj.
    /// The same grid over other tilings (C = A * B: A's rows, B's columns and their owners).
    [[nodiscard]] mapping with_tiles(const tiled_range& rows, const tiled_range& cols,
                                     const std::vector<int>& column_owner) const {
      return mapping(grid_, rows, cols, column_owner);
    }

    /// The mapping of the transpose: the q x p grid over the swapped tilings. With the default
    /// (cyclic) column owners, tile (tj, ti) of A^T lands on the transposed grid position of tile
    /// (ti, tj) of A: rank (r, c) sends all it has to rank (c, r), one partner.
    [[nodiscard]] mapping transposed() const {
      return mapping(process_grid{grid_.q, grid_.p}, cols_, rows_);
    }

    [[nodiscard]] int tile_row_owner(std::size_t ti) const noexcept {
      return static_cast<int>(ti % static_cast<std::size_t>(grid_.p));
    }
    [[nodiscard]] int tile_col_owner(std::size_t tj) const noexcept { return column_owner_[tj]; }
    /// The rank storing tile (ti, tj).
    [[nodiscard]] int tile_owner(std::size_t ti, std::size_t tj) const noexcept {
      return grid_.rank(tile_row_owner(ti), tile_col_owner(tj));
    }
    /// True when `rank` stores tile (ti, tj) (each tile has one copy).
    [[nodiscard]] bool holds(int rank, std::size_t ti, std::size_t tj) const noexcept {
      return tile_owner(ti, tj) == rank;
    }

    [[nodiscard]] int owner(global_index i, global_index j) const noexcept {
      return tile_owner(rows_.tile_of(i), cols_.tile_of(j));
    }
    /// Local coordinates: the owner's tiles packed in order along each dimension.
    [[nodiscard]] local_coordinate to_local(global_index i, global_index j) const noexcept {
      const std::size_t ti = rows_.tile_of(i), tj = cols_.tile_of(j);
      return {tile_owner(ti, tj), row_place_.offset[ti] + (i - rows_.begin(ti)),
              col_place_.offset[tj] + (j - cols_.begin(tj))};
    }
    [[nodiscard]] global_coordinate to_global(int rank, global_index li, global_index lj) const noexcept {
      return {row_place_.global(rows_, grid_.row_of(rank), li), col_place_.global(cols_, grid_.col_of(rank), lj)};
    }
    [[nodiscard]] local_extents extents(int rank) const noexcept {
      return {row_place_.extent[static_cast<std::size_t>(grid_.row_of(rank))],
              col_place_.extent[static_cast<std::size_t>(grid_.col_of(rank))]};
    }

    friend bool operator==(const mapping&, const mapping&) = default;

   private:
    process_grid grid_{};
    tiled_range rows_, cols_;
    std::vector<int> column_owner_;
    detail::tile_placement row_place_, col_place_;
  };

  /// The element-block-cyclic mapping of an m x n matrix (blocks block_rows x block_cols).
  [[nodiscard]] mapping make_mapping(int num_ranks, global_index rows, global_index cols) const {
    const process_grid g = grid.value_or(process_grid::squarest(num_ranks));
    detail::require_grid(g, num_ranks, "block_cyclic_2d");
    return mapping(g, tiled_range::uniform(rows, block_rows), tiled_range::uniform(cols, block_cols));
  }

  /// The tile-cyclic mapping of a block-sparse matrix with the given tilings.
  [[nodiscard]] mapping make_tile_mapping(int num_ranks, const tiled_range& rows, const tiled_range& cols,
                                          std::vector<int> column_owner = {}) const {
    const process_grid g = grid.value_or(process_grid::squarest(num_ranks));
    detail::require_grid(g, num_ranks, "block_cyclic_2d");
    return mapping(g, rows, cols, std::move(column_owner));
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_BLOCK_CYCLIC_2D_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_BLOCK_CYCLIC_2D_HPP
#endif
