#pragma once
// A distribution written outside the library: rows dealt round-robin, row i on rank i mod P at
// local position i / P (every rank gets rows from all over the matrix, so a banded or power-law
// matrix spreads its heavy rows evenly). It states the general mapping plus the one capability the
// 1-D operations need, whole rows on each rank (tessera::whole_row_mapping), and nothing else:
// spmm, spgemm, transpose, dist_dense and the element-wise operations then run on it unchanged.
#include <tessera/tessera.hpp>

#include <string_view>

namespace custom {

using tessera::global_index;

// [row_cyclic]
struct row_cyclic {
  static constexpr std::string_view name() noexcept { return "row_cyclic"; }

  class mapping {
   public:
    mapping() = default;
    mapping(int ranks, global_index rows, global_index cols) : ranks_(ranks), rows_(rows), cols_(cols) {}

    // The general mapping (tessera::distribution_mapping).
    [[nodiscard]] int num_ranks() const noexcept { return ranks_; }
    [[nodiscard]] global_index global_rows() const noexcept { return rows_; }
    [[nodiscard]] global_index global_cols() const noexcept { return cols_; }
    [[nodiscard]] int owner(global_index i, global_index /*j*/) const noexcept { return row_owner(i); }
    [[nodiscard]] tessera::local_coordinate to_local(global_index i, global_index j) const noexcept {
      return {row_owner(i), local_row(i), j};
    }
    [[nodiscard]] tessera::global_coordinate to_global(int rank, global_index li, global_index lj) const noexcept {
      return {li * ranks_ + rank, lj};
    }
    [[nodiscard]] tessera::local_extents extents(int rank) const noexcept {
      return {rows_ > rank ? (rows_ - rank + ranks_ - 1) / ranks_ : 0, cols_};
    }

    // Whole rows on each rank (tessera::whole_row_mapping).
    [[nodiscard]] int row_owner(global_index i) const noexcept { return static_cast<int>(i % ranks_); }
    [[nodiscard]] global_index local_row(global_index i) const noexcept { return i / ranks_; }
    [[nodiscard]] mapping with_shape(global_index rows, global_index cols) const { return {ranks_, rows, cols}; }

    friend bool operator==(const mapping&, const mapping&) = default;

   private:
    int ranks_ = 1;
    global_index rows_ = 0, cols_ = 0;
  };

  [[nodiscard]] mapping make_mapping(int num_ranks, global_index rows, global_index cols) const {
    return {num_ranks, rows, cols};
  }
};
// [row_cyclic]

static_assert(tessera::distribution_policy<row_cyclic>);
static_assert(tessera::whole_row_mapping<row_cyclic::mapping>);
static_assert(!tessera::contiguous_row_mapping<row_cyclic::mapping>);

}  // namespace custom
