#pragma once
/// @file
/// tiled_range: a range [0, n) cut into tiles of irregular sizes.
///
/// Block-sparse matrices are tiled along each dimension by the physics (orbital
/// clusters), not by a block size, so tile boundaries are a list. A uniform
/// block size is the special case that element-block-cyclic distributions use.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_TILED_RANGE_HPP
#endif

#include "../core/error.hpp"
#include "../core/index_types.hpp"

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace tessera {

/// Tile boundaries along one dimension: tile t covers [begin(t), end(t)).
///
/// Boundaries start at 0 and never decrease; an empty tile (two equal
/// boundaries) is allowed, so a tiling can describe zero-width clusters.
class tiled_range {
 public:
  /// The empty range (no tiles).
  tiled_range() : bounds_{0} {}

  /// From boundaries {0, b1, ..., n}.
  explicit tiled_range(std::vector<global_index> boundaries) : bounds_(std::move(boundaries)) {
    TESSERA_REQUIRE(!bounds_.empty() && bounds_.front() == 0, invalid_argument,
                    "tiled_range: boundaries must start at 0 (got {} boundaries)", bounds_.size());
    TESSERA_REQUIRE(std::is_sorted(bounds_.begin(), bounds_.end()), invalid_argument,
                    "tiled_range: boundaries must not decrease");
  }

  /// Tiles of the given sizes, in order.
  [[nodiscard]] static tiled_range from_sizes(std::span<const global_index> sizes) {
    std::vector<global_index> b{0};
    b.reserve(sizes.size() + 1);
    for (global_index s : sizes) {
      TESSERA_REQUIRE(s >= 0, invalid_argument, "tiled_range: negative tile size {}", s);
      b.push_back(b.back() + s);
    }
    return tiled_range(std::move(b));
  }

  /// [0, n) in tiles of `block` (the last one shorter): element-block-cyclic layouts.
  [[nodiscard]] static tiled_range uniform(global_index n, global_index block) {
    TESSERA_REQUIRE(n >= 0, invalid_argument, "tiled_range: negative extent {}", n);
    TESSERA_REQUIRE(block > 0, invalid_argument, "tiled_range: block size {} must be positive", block);
    std::vector<global_index> b{0};
    for (global_index x = block; x < n; x += block) b.push_back(x);
    if (n > 0) b.push_back(n);
    return tiled_range(std::move(b));
  }

  [[nodiscard]] std::size_t num_tiles() const noexcept { return bounds_.size() - 1; }
  /// The number of elements, n.
  [[nodiscard]] global_index extent() const noexcept { return bounds_.back(); }
  [[nodiscard]] global_index begin(std::size_t t) const noexcept { return bounds_[t]; }
  [[nodiscard]] global_index end(std::size_t t) const noexcept { return bounds_[t + 1]; }
  [[nodiscard]] global_index size(std::size_t t) const noexcept { return bounds_[t + 1] - bounds_[t]; }
  /// The largest tile.
  [[nodiscard]] global_index max_size() const noexcept {
    global_index m = 0;
    for (std::size_t t = 0; t < num_tiles(); ++t) m = std::max(m, size(t));
    return m;
  }
  /// The tile holding element i (0 <= i < extent()); with empty tiles, the non-empty one.
  [[nodiscard]] std::size_t tile_of(global_index i) const noexcept {
    return static_cast<std::size_t>(std::upper_bound(bounds_.begin(), bounds_.end(), i) - bounds_.begin()) - 1;
  }
  [[nodiscard]] const std::vector<global_index>& boundaries() const noexcept { return bounds_; }

  friend bool operator==(const tiled_range&, const tiled_range&) = default;

 private:
  std::vector<global_index> bounds_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_TILED_RANGE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_TILED_RANGE_HPP
#endif
