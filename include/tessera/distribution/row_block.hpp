#pragma once
/// @file
/// row_block: 1-D distribution of contiguous row ranges, all columns on the owner.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_ROW_BLOCK_HPP
#endif

// Seen by tessera::instantiations' extern declarations (instantiations/declarations.hpp).
#define TESSERA_COMPONENT_row_block 1

#include "../comm/communicator.hpp"
#include "../core/error.hpp"
#include "../core/index_types.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tessera {

/// Distribution policy: rank r owns rows [row_begin(r), row_end(r)) and every column of them.
///
/// Rows are split evenly by default (the first `rows % P` ranks get one more),
/// or so that every rank gets about the same number of nonzeros:
/// @code
/// auto A = tessera::build_from_triplets<double, P>(comm, m, n, entries,
///            {.distribution = tessera::row_block{tessera::row_block::balance::nonzeros}});
/// @endcode
struct row_block {
  /// How rows are split over ranks.
  enum class balance {
    rows,      ///< the same number of rows per rank (±1)
    nonzeros,  ///< row ranges chosen so every rank holds about nnz / P entries
  };
  balance split = balance::rows;

  static constexpr std::string_view name() noexcept { return "row_block"; }

  /// Who owns what: row offsets of every rank.
  ///
  /// The offsets are shared, immutable, between copies and between the mappings with_shape
  /// derives (A, C = A * B, Y = A * X): copying a mapping and comparing two that share offsets
  /// cost O(1), not O(P), so an operation that checks its operands' splits on every call does no
  /// work that grows with the number of ranks.
  class mapping {
   public:
    mapping() : offsets_(std::make_shared<const std::vector<global_index>>(std::vector<global_index>{0, 0})) {}

    /// Even split of `rows` over `num_ranks`.
    mapping(int num_ranks, global_index rows, global_index cols) : cols_(cols) {
      TESSERA_REQUIRE(num_ranks > 0, invalid_argument, "row_block: {} ranks", num_ranks);
      TESSERA_REQUIRE(rows >= 0 && cols >= 0, invalid_argument, "row_block: negative shape {} x {}", rows, cols);
      std::vector<global_index> offsets(static_cast<std::size_t>(num_ranks) + 1);
      const global_index base = rows / num_ranks, extra = rows % num_ranks;
      offsets[0] = 0;
      for (int r = 0; r < num_ranks; ++r)
        offsets[static_cast<std::size_t>(r) + 1] = offsets[static_cast<std::size_t>(r)] + base + (r < extra ? 1 : 0);
      offsets_ = std::make_shared<const std::vector<global_index>>(std::move(offsets));
    }

    /// Explicit split: rank r owns rows [row_offsets[r], row_offsets[r+1]).
    mapping(std::vector<global_index> row_offsets, global_index cols) : cols_(cols) {
      TESSERA_REQUIRE(row_offsets.size() >= 2 && row_offsets.front() == 0, invalid_argument,
                      "row_block: row offsets must start at 0 and have one entry per rank plus one");
      TESSERA_REQUIRE(std::is_sorted(row_offsets.begin(), row_offsets.end()), invalid_argument,
                      "row_block: row offsets must not decrease");
      TESSERA_REQUIRE(cols >= 0, invalid_argument, "row_block: negative column count {}", cols);
      offsets_ = std::make_shared<const std::vector<global_index>>(std::move(row_offsets));
    }

    [[nodiscard]] int num_ranks() const noexcept { return static_cast<int>(offsets_->size()) - 1; }
    [[nodiscard]] global_index global_rows() const noexcept { return offsets_->back(); }
    [[nodiscard]] global_index global_cols() const noexcept { return cols_; }

    [[nodiscard]] global_index row_begin(int rank) const noexcept { return (*offsets_)[static_cast<std::size_t>(rank)]; }
    [[nodiscard]] global_index row_end(int rank) const noexcept { return (*offsets_)[static_cast<std::size_t>(rank) + 1]; }
    [[nodiscard]] const std::vector<global_index>& row_offsets() const noexcept { return *offsets_; }

    /// The rank owning global row i (the last of several ranks with an empty range never owns anything).
    [[nodiscard]] int row_owner(global_index i) const noexcept {
      const auto it = std::upper_bound(offsets_->begin(), offsets_->end(), i);
      return static_cast<int>(it - offsets_->begin()) - 1;
    }
    [[nodiscard]] int owner(global_index i, global_index /*j*/) const noexcept { return row_owner(i); }
    /// Row i's position on its owner.
    [[nodiscard]] global_index local_row(global_index i) const noexcept { return i - row_begin(row_owner(i)); }

    /// The same split over `cols` columns when `rows` is unchanged (results keep A's rows on
    /// their ranks; the offsets are shared, not copied); an even split of the new rows otherwise.
    [[nodiscard]] mapping with_shape(global_index rows, global_index cols) const {
      if (rows == global_rows()) {
        mapping same = *this;
        same.cols_ = cols;
        return same;
      }
      return mapping(num_ranks(), rows, cols);
    }

    [[nodiscard]] local_coordinate to_local(global_index i, global_index j) const noexcept {
      const int r = row_owner(i);
      return {r, i - row_begin(r), j};
    }
    [[nodiscard]] global_coordinate to_global(int rank, global_index li, global_index lj) const noexcept {
      return {row_begin(rank) + li, lj};
    }
    [[nodiscard]] local_extents extents(int rank) const noexcept { return {row_end(rank) - row_begin(rank), cols_}; }

    /// Equal splits: O(1) when the offsets are shared (the usual case), O(P) otherwise.
    friend bool operator==(const mapping& a, const mapping& b) noexcept {
      return a.cols_ == b.cols_ && (a.offsets_ == b.offsets_ || *a.offsets_ == *b.offsets_);
    }

   private:
    std::shared_ptr<const std::vector<global_index>> offsets_;
    global_index cols_ = 0;
  };

  [[nodiscard]] mapping make_mapping(int num_ranks, global_index rows, global_index cols) const {
    return mapping(num_ranks, rows, cols);
  }

  /// Collective. With balance::nonzeros, the split that gives every rank about
  /// nnz / P entries, computed exactly from each rank's row counts under `current`.
  [[nodiscard]] std::optional<mapping> rebalance(const communicator& comm, const mapping& current,
                                                 std::span<const offset_type> local_row_nnz) const {
    if (split != balance::nonzeros) return std::nullopt;
    const int p = comm.size();
    offset_type local_total = 0;
    for (auto c : local_row_nnz) local_total += c;
    const offset_type before = comm.exclusive_prefix_sum(local_total);
    const offset_type total = comm.sum(local_total);
    const global_index rows = current.global_rows();
    if (total == 0 || p == 1) return std::nullopt;

    // Boundary k is the first row after which at least k * total / P nonzeros lie.
    std::vector<global_index> offsets(static_cast<std::size_t>(p) + 1, rows);
    offsets[0] = 0;
    offset_type running = before;
    std::size_t k = 1;
    const global_index first_row = current.row_begin(comm.rank());
    for (std::size_t li = 0; li < local_row_nnz.size() && k < static_cast<std::size_t>(p); ++li) {
      running += local_row_nnz[li];
      while (k < static_cast<std::size_t>(p) && running * p >= total * static_cast<offset_type>(k)) {
        offsets[k] = first_row + static_cast<global_index>(li) + 1;
        ++k;
      }
    }
    comm.allreduce_inplace(offsets, MPI_MIN);
    mapping balanced(std::move(offsets), current.global_cols());
    if (balanced == current) return std::nullopt;
    return balanced;
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_ROW_BLOCK_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_ROW_BLOCK_HPP
#endif
