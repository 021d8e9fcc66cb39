#pragma once
/// @file
/// replicated_columns: whole tile columns over a 1 x q grid, replicated over p grid rows.
///
/// This is how bsgemm keeps B stationary: every grid row holds a full copy of
/// B's columns, split over the q grid columns, so the p grid rows multiply
/// their own slice of A with no communication of B at all. p trades memory
/// (p copies of B) for traffic of A (divided by p).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_REPLICATED_COLUMNS_HPP
#endif

// Seen by tessera::instantiations' extern declarations (instantiations/declarations.hpp).
#define TESSERA_COMPONENT_replicated_columns 1

#include "../core/error.hpp"
#include "../core/index_types.hpp"
#include "process_grid.hpp"
#include "tile_placement.hpp"
#include "tiled_range.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tessera {

/// Grid columns for items of the given weights, in mirrored-cyclic order (the seed's §3.2.1):
/// items sorted by non-decreasing weight are dealt to grid columns 0..q-1, then q-1..0, and so on,
/// so the reverse pass compensates the imbalance of the forward one. Ties keep index order.
[[nodiscard]] inline std::vector<int> mirrored_cyclic_assignment(std::span<const double> weights, int q) {
  TESSERA_REQUIRE(q > 0, invalid_argument, "mirrored_cyclic_assignment: {} grid columns", q);
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] < weights[b]; });
  std::vector<int> owner(weights.size(), 0);
  const auto qq = static_cast<std::size_t>(q);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t pass = k / qq, pos = k % qq;
    owner[order[k]] = static_cast<int>(pass % 2 == 0 ? pos : qq - 1 - pos);
  }
  return owner;
}

/// Improve an assignment of weighted items to q grid columns in place: while it lowers the
/// heaviest column's load, move one item from the heaviest to the lightest column, or swap one
/// item of each. Mirrored-cyclic order balances many similar items; with few, unequal ones (13
/// tile columns of 128 to 512 at 2 ranks) it left a 56/44 split that this reduces to a few percent.
inline void rebalance_assignment(std::span<const double> weights, std::vector<int>& owner, int q) {
  TESSERA_REQUIRE(owner.size() == weights.size() && q > 0, invalid_argument,
                  "rebalance_assignment: {} owners for {} weights on {} grid columns", owner.size(), weights.size(), q);
  std::vector<double> load(static_cast<std::size_t>(q), 0.0);
  for (std::size_t i = 0; i < weights.size(); ++i) load[static_cast<std::size_t>(owner[i])] += weights[i];
  for (std::size_t round = 0; round < 4 * weights.size() + 4; ++round) {
    const auto heavy = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
    const auto light = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    const double gap = load[static_cast<std::size_t>(heavy)] - load[static_cast<std::size_t>(light)];
    // The best move or swap shifts a weight d with 0 < d < gap, as close to gap / 2 as possible.
    double best = 0;
    std::size_t from = weights.size(), to = weights.size();
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (owner[i] != heavy) continue;
      auto consider = [&](double d, std::size_t j) {
        if (d > 0 && d < gap && std::min(d, gap - d) > std::min(best, gap - best)) {
          best = d;
          from = i;
          to = j;
        }
      };
      consider(weights[i], weights.size());
      for (std::size_t j = 0; j < weights.size(); ++j)
        if (owner[j] == light) consider(weights[i] - weights[j], j);
    }
    if (from == weights.size()) break;
    owner[from] = light;
    if (to != weights.size()) owner[to] = heavy;
    load[static_cast<std::size_t>(heavy)] -= best;
    load[static_cast<std::size_t>(light)] += best;
  }
}

/// Distribution policy: columns over 1 x q, replicated over the p rows of a p x q grid.
///
/// Entry (i, j) has p replicas, on grid positions (r, column_owner(tile of j))
/// for every r, and an element-sparse dist_matrix stores all of them: building,
/// redistributing and every operation's result fill each replica. Its `owner`
/// (the primary copy, in grid row 0) is the one counted once: local_triplets,
/// gathers and global_nnz read primaries only; readers may use any replica.
struct replicated_columns {
  std::optional<process_grid> grid;  ///< default: 1 x P (no replication)
  global_index block_cols = 64;      ///< column block of element-sparse matrices

  static constexpr std::string_view name() noexcept { return "replicated_columns"; }

  class mapping {
   public:
    mapping() = default;

    /// `rows` is kept whole; `column_owner[tj]` (default tj mod q) is tile column tj's grid column.
    mapping(process_grid grid, tiled_range rows, tiled_range cols, std::vector<int> column_owner = {})
        : grid_(grid),
          rows_(std::move(rows)),
          cols_(std::move(cols)),
          column_owner_(detail::checked_column_owners("replicated_columns", grid_, cols_, std::move(column_owner))) {
      col_place_ = detail::tile_placement(cols_, grid_.q, [&](std::size_t t) { return column_owner_[t]; });
    }

    [[nodiscard]] int num_ranks() const noexcept { return grid_.size(); }
    [[nodiscard]] global_index global_rows() const noexcept { return rows_.extent(); }
    [[nodiscard]] global_index global_cols() const noexcept { return cols_.extent(); }
    [[nodiscard]] const process_grid& grid() const noexcept { return grid_; }
    [[nodiscard]] const tiled_range& row_tiles() const noexcept { return rows_; }
    [[nodiscard]] const tiled_range& col_tiles() const noexcept { return cols_; }
    [[nodiscard]] const std::vector<int>& column_owners() const noexcept { return column_owner_; }
    [[nodiscard]] int tile_col_owner(std::size_t tj) const noexcept { return column_owner_[tj]; }
    /// True when `rank` holds a replica of tile (ti, tj).
    [[nodiscard]] bool holds(int rank, std::size_t /*ti*/, std::size_t tj) const noexcept {
      return grid_.col_of(rank) == column_owner_[tj];
    }
    /// The primary copy of tile (ti, tj): grid row 0.
    [[nodiscard]] int tile_owner(std::size_t /*ti*/, std::size_t tj) const noexcept {
      return grid_.rank(0, column_owner_[tj]);
    }

    [[nodiscard]] int owner(global_index /*i*/, global_index j) const noexcept {
      return tile_owner(0, cols_.tile_of(j));
    }
    /// The p ranks holding entry (i, j), grid row 0 first.
    [[nodiscard]] std::vector<int> replicas(global_index /*i*/, global_index j) const {
      std::vector<int> r;
      for (int row = 0; row < grid_.p; ++row) r.push_back(grid_.rank(row, column_owner_[cols_.tile_of(j)]));
      return r;
    }
    [[nodiscard]] local_coordinate to_local(global_index i, global_index j) const noexcept {
      const std::size_t tj = cols_.tile_of(j);
      return {tile_owner(0, tj), i, col_place_.offset[tj] + (j - cols_.begin(tj))};
    }
    [[nodiscard]] global_coordinate to_global(int rank, global_index li, global_index lj) const noexcept {
      return {li, col_place_.global(cols_, grid_.col_of(rank), lj)};
    }
    /// Every replica holds the whole column block of its grid column (all rows).
    [[nodiscard]] local_extents extents(int rank) const noexcept {
      return {rows_.extent(), col_place_.extent[static_cast<std::size_t>(grid_.col_of(rank))]};
    }

    /// The same grid over other tilings (C = A * B: A's rows, B's columns and their owners).
    [[nodiscard]] mapping with_tiles(const tiled_range& rows, const tiled_range& cols,
                                     const std::vector<int>& column_owner) const {
      return mapping(grid_, rows, cols, column_owner);
    }
    /// The mapping of the transpose on the same grid: the tilings swap (a tile-stored A^T keeps
    /// A's tiles), except that rows kept whole as one tile (element-sparse matrices) are cut into
    /// column blocks of A's first column block's width, so A^T's columns spread over the grid.
    [[nodiscard]] mapping transposed() const {
      if (rows_.num_tiles() > 1 || grid_.q == 1) return mapping(grid_, cols_, rows_);
      const global_index block = cols_.num_tiles() > 0 ? std::max<global_index>(cols_.size(0), 1) : 64;
      return mapping(grid_, tiled_range::uniform(cols_.extent(), std::max<global_index>(cols_.extent(), 1)),
                     tiled_range::uniform(rows_.extent(), block));
    }

    friend bool operator==(const mapping&, const mapping&) = default;

   private:
    process_grid grid_{};
    tiled_range rows_, cols_;
    std::vector<int> column_owner_;
    detail::tile_placement col_place_;
  };

  [[nodiscard]] mapping make_mapping(int num_ranks, global_index rows, global_index cols) const {
    const process_grid g = grid.value_or(process_grid{1, num_ranks});
    detail::require_grid(g, num_ranks, "replicated_columns");
    return mapping(g, tiled_range::uniform(rows, std::max<global_index>(rows, 1)), tiled_range::uniform(cols, block_cols));
  }

  /// The mapping of a block-sparse matrix with the given tilings and tile-column owners.
  [[nodiscard]] mapping make_tile_mapping(int num_ranks, const tiled_range& rows, const tiled_range& cols,
                                          std::vector<int> column_owner = {}) const {
    const process_grid g = grid.value_or(process_grid{1, num_ranks});
    detail::require_grid(g, num_ranks, "replicated_columns");
    return mapping(g, rows, cols, std::move(column_owner));
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_REPLICATED_COLUMNS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_REPLICATED_COLUMNS_HPP
#endif
