#pragma once
/// @file
/// Block-sparse storage: the shape (which tiles are nonzero, and each one's
/// Frobenius norm) and a rank's nonzero tiles as dense column-major blocks.
///
/// Only nonzero tiles are stored, back to back in ONE View, in shape order:
/// one allocation per rank, one registered segment for one-sided fetches, and
/// the offset of any tile on any rank follows from the (replicated) shape
/// alone, so an inspector can plan a fetch without asking the owner.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_BLOCK_SPARSE_HPP
#endif

#include "../core/error.hpp"
#include "../core/index_types.hpp"
#include "../distribution/tiled_range.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tessera {

template <class T>
  requires std::is_trivially_copyable_v<T>
class node_shared_array;

/// One nonzero tile of a shape.
struct tile_norm {
  std::int64_t row = 0;  ///< tile row
  std::int64_t col = 0;  ///< tile column
  double norm = 0;       ///< Frobenius norm of the tile
  friend bool operator==(const tile_norm&, const tile_norm&) = default;
};

/// The nonzero pattern of a block-sparse matrix and its tiles' Frobenius norms.
///
/// Tiles are kept sorted by (row, col); per-row and per-column indices make
/// the inspector's walks (A by rows, B by columns) linear. The same on every
/// rank: it is what lets each rank plan alone.
class block_sparse_shape {
 public:
  block_sparse_shape() = default;

  /// From tiles in any order (duplicates not allowed).
  block_sparse_shape(tiled_range rows, tiled_range cols, std::vector<tile_norm> tiles)
      : rows_(std::move(rows)), cols_(std::move(cols)), tiles_(std::move(tiles)) {
    std::sort(tiles_.begin(), tiles_.end(),
              [](const tile_norm& a, const tile_norm& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
    const auto nr = static_cast<std::int64_t>(rows_.num_tiles()), nc = static_cast<std::int64_t>(cols_.num_tiles());
    for (std::size_t k = 0; k < tiles_.size(); ++k) {
      const auto& t = tiles_[k];
      TESSERA_REQUIRE(t.row >= 0 && t.row < nr && t.col >= 0 && t.col < nc, index_out_of_range,
                      "block_sparse_shape: tile ({}, {}) lies outside the {} x {} tile grid", t.row, t.col, nr, nc);
      TESSERA_REQUIRE(k == 0 || tiles_[k - 1].row != t.row || tiles_[k - 1].col != t.col, invalid_argument,
                      "block_sparse_shape: tile ({}, {}) is listed twice", t.row, t.col);
    }
    row_ptr_.assign(rows_.num_tiles() + 1, 0);
    for (const auto& t : tiles_) ++row_ptr_[static_cast<std::size_t>(t.row) + 1];
    for (std::size_t r = 0; r < rows_.num_tiles(); ++r) row_ptr_[r + 1] += row_ptr_[r];
    col_ptr_.assign(cols_.num_tiles() + 1, 0);
    for (const auto& t : tiles_) ++col_ptr_[static_cast<std::size_t>(t.col) + 1];
    for (std::size_t c = 0; c < cols_.num_tiles(); ++c) col_ptr_[c + 1] += col_ptr_[c];
    by_col_.resize(tiles_.size());
    std::vector<std::size_t> next(col_ptr_.begin(), col_ptr_.end() - 1);
    for (std::size_t k = 0; k < tiles_.size(); ++k) by_col_[next[static_cast<std::size_t>(tiles_[k].col)]++] = k;
  }

  [[nodiscard]] const tiled_range& row_tiles() const noexcept { return rows_; }
  [[nodiscard]] const tiled_range& col_tiles() const noexcept { return cols_; }
  /// Nonzero tiles sorted by (row, col).
  [[nodiscard]] const std::vector<tile_norm>& tiles() const noexcept { return tiles_; }
  /// Whether `other` has the same tilings and the same nonzero tiles (norms aside): what a plan
  /// made for one shape needs of the shape it is applied to.
  [[nodiscard]] bool same_pattern_as(const block_sparse_shape& other) const noexcept {
    if (!(rows_ == other.rows_) || !(cols_ == other.cols_) || tiles_.size() != other.tiles_.size()) return false;
    for (std::size_t k = 0; k < tiles_.size(); ++k)
      if (tiles_[k].row != other.tiles_[k].row || tiles_[k].col != other.tiles_[k].col) return false;
    return true;
  }
  /// Whether `other` has the same tilings and each of its nonzero tiles is nonzero here.
  [[nodiscard]] bool covers(const block_sparse_shape& other) const noexcept {
    if (!(rows_ == other.rows_) || !(cols_ == other.cols_)) return false;
    for (const auto& t : other.tiles_)
      if (find(static_cast<std::size_t>(t.row), static_cast<std::size_t>(t.col)) == npos) return false;
    return true;
  }
  [[nodiscard]] std::size_t num_nonzero_tiles() const noexcept { return tiles_.size(); }
  /// Positions in tiles() of tile row r: [row_begin(r), row_end(r)).
  [[nodiscard]] std::size_t row_begin(std::size_t r) const noexcept { return row_ptr_[r]; }
  [[nodiscard]] std::size_t row_end(std::size_t r) const noexcept { return row_ptr_[r + 1]; }
  /// Positions in tiles() of tile column c, ascending rows: by_col()[col_begin(c) .. col_end(c)).
  [[nodiscard]] std::size_t col_begin(std::size_t c) const noexcept { return col_ptr_[c]; }
  [[nodiscard]] std::size_t col_end(std::size_t c) const noexcept { return col_ptr_[c + 1]; }
  [[nodiscard]] const std::vector<std::size_t>& by_col() const noexcept { return by_col_; }

  /// Position of tile (r, c) in tiles(), or npos when it is zero.
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  [[nodiscard]] std::size_t find(std::size_t r, std::size_t c) const noexcept {
    const auto first = tiles_.begin() + static_cast<std::ptrdiff_t>(row_ptr_[r]);
    const auto last = tiles_.begin() + static_cast<std::ptrdiff_t>(row_ptr_[r + 1]);
    const auto it = std::lower_bound(first, last, static_cast<std::int64_t>(c),
                                     [](const tile_norm& t, std::int64_t col) { return t.col < col; });
    return it != last && it->col == static_cast<std::int64_t>(c) ? static_cast<std::size_t>(it - tiles_.begin()) : npos;
  }

  /// Elements in tile k of tiles().
  [[nodiscard]] std::size_t tile_elements(std::size_t k) const noexcept {
    return static_cast<std::size_t>(rows_.size(static_cast<std::size_t>(tiles_[k].row)) *
                                    cols_.size(static_cast<std::size_t>(tiles_[k].col)));
  }
  /// Fraction of the matrix's elements that lie in nonzero tiles.
  [[nodiscard]] double density() const noexcept {
    const double total = static_cast<double>(rows_.extent()) * static_cast<double>(cols_.extent());
    double stored = 0;
    for (std::size_t k = 0; k < tiles_.size(); ++k) stored += static_cast<double>(tile_elements(k));
    return total > 0 ? stored / total : 0.0;
  }
  /// Frobenius norm of the whole matrix.
  [[nodiscard]] double norm() const noexcept {
    double s = 0;
    for (const auto& t : tiles_) s += t.norm * t.norm;
    return std::sqrt(s);
  }

  friend bool operator==(const block_sparse_shape& a, const block_sparse_shape& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.tiles_ == b.tiles_;
  }

 private:
  tiled_range rows_, cols_;
  std::vector<tile_norm> tiles_;
  std::vector<std::size_t> row_ptr_{0}, col_ptr_{0}, by_col_;
};

/// A rank's nonzero tiles: dense, column-major, back to back in one View.
///
/// `index[k]` is the position in the shape's tiles() of local tile k, and
/// `offset[k]` its first element in `values`; both are host metadata of the
/// plan, the values live in `MemorySpace`. When `node_shared` is set,
/// `values` is its local part (share_on_node), which the ranks of a node read
/// in place.
template <class T, class MemorySpace>
struct block_sparse_tiles {
  using value_type = T;
  using memory_space = MemorySpace;
  /// One tile: a column-major view into `values`.
  using tile_view = Kokkos::View<T**, Kokkos::LayoutLeft, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  std::vector<std::size_t> index;
  std::vector<std::size_t> offset{0};  ///< one more than index: offset.back() is the element count
  Kokkos::View<T*, MemorySpace> values;
  /// The node-shared memory `values` lives in, if any (matrix/share_on_node.hpp); it owns that
  /// memory, `values` is then an unmanaged View into it.
  std::shared_ptr<node_shared_array<T>> node_shared;

  [[nodiscard]] std::size_t num_tiles() const noexcept { return index.size(); }
  [[nodiscard]] std::size_t num_elements() const noexcept { return offset.back(); }
  /// Local tile k as an m x n column-major View (in MemorySpace).
  [[nodiscard]] tile_view tile(std::size_t k, std::size_t m, std::size_t n) const {
    return tile_view(values.data() + offset[k], m, n);
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_BLOCK_SPARSE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_BLOCK_SPARSE_HPP
#endif
