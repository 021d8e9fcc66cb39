#pragma once
/// @file
/// Where the tiles of one dimension of a grid distribution land on their owners, and the checks
/// of a column-to-owner assignment: what block_cyclic_2d and replicated_columns share.
#include "../core/error.hpp"
#include "../core/index_types.hpp"
#include "process_grid.hpp"
#include "tiled_range.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

namespace tessera {

namespace detail {

/// Where the tiles of one dimension land on their owners: each tile's local offset, each owner's
/// local extent and its tiles in order, so local -> global is a binary search, not a scan.
struct tile_placement {
  std::vector<global_index> offset;              ///< per tile: first local index on its owner
  std::vector<global_index> extent;              ///< per owner: local extent
  std::vector<std::vector<std::size_t>> owned;   ///< per owner: its tiles, ascending

  /// `owner_of(t)` gives tile t's owner in [0, owners).
  template <class OwnerOf>
  tile_placement(const tiled_range& range, int owners, OwnerOf owner_of)
      : offset(range.num_tiles(), 0), extent(static_cast<std::size_t>(owners), 0),
        owned(static_cast<std::size_t>(owners)) {
    for (std::size_t t = 0; t < range.num_tiles(); ++t) {
      const auto o = static_cast<std::size_t>(owner_of(t));
      offset[t] = extent[o];
      extent[o] += range.size(t);
      owned[o].push_back(t);
    }
  }
  tile_placement() = default;

  /// The global index of local index l of `owner`, or -1 beyond its extent.
  [[nodiscard]] global_index global(const tiled_range& range, int owner, global_index l) const {
    const auto& mine = owned[static_cast<std::size_t>(owner)];
    // The last tile starting at or before l (a zero-width tile shares its start with the next one).
    const auto it = std::upper_bound(mine.begin(), mine.end(), l,
                                     [&](global_index v, std::size_t t) { return v < offset[t]; });
    if (it == mine.begin()) return -1;
    const std::size_t t = *(it - 1);
    return l < offset[t] + range.size(t) ? range.begin(t) + (l - offset[t]) : -1;
  }
  friend bool operator==(const tile_placement&, const tile_placement&) = default;
};

/// The grid column of every tile column: `given`, or tj mod q when empty; checked against the
/// tiling and the grid (`who` names the distribution in the message).
inline std::vector<int> checked_column_owners(std::string_view who, const process_grid& grid, const tiled_range& cols,
                                              std::vector<int> given) {
  TESSERA_REQUIRE(grid.p > 0 && grid.q > 0, invalid_argument, "{}: a {} x {} grid is empty", who, grid.p, grid.q);
  if (given.empty())
    for (std::size_t t = 0; t < cols.num_tiles(); ++t) given.push_back(static_cast<int>(t) % grid.q);
  TESSERA_REQUIRE(given.size() == cols.num_tiles(), dimension_mismatch, "{}: {} column owners for {} tile columns",
                  who, given.size(), cols.num_tiles());
  for (int c : given)
    TESSERA_REQUIRE(c >= 0 && c < grid.q, invalid_argument,
                    "{}: tile column owner {} is outside the grid's {} columns", who, c, grid.q);
  return given;
}
}  // namespace detail

}  // namespace tessera
