#pragma once
/// @file
/// row_partition: 1-D distribution with every row's owner given explicitly.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_ROW_PARTITION_HPP
#endif

// Seen by tessera::instantiations' extern declarations (instantiations/declarations.hpp).
#define TESSERA_COMPONENT_row_partition 1

#include "../core/error.hpp"
#include "../core/index_types.hpp"

#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

namespace tessera {

/// Distribution policy: row i lives, with all its columns, on the rank `owners[i]` names; each
/// rank keeps its rows in ascending global order.
///
/// For a partitioner's output (METIS, a hypergraph model) and for dense blocks laid out to match
/// a 2-D matrix (grid_aligned_rows). Whole rows on each rank, so spmm, spgemm, transpose,
/// dist_dense and the element-wise operations run on it as on row_block. Every rank keeps one
/// owner and one local position per row (shared between copies and derived mappings), so this
/// suits matrices whose row count fits every rank's memory many times over.
/// @code
/// // P = tessera::policy<tessera::row_partition, tessera::csr, tessera::mpi_rma>
/// tessera::row_partition parts{std::make_shared<const std::vector<int>>(my_partitioner(graph))};
/// auto A = tessera::build_from_triplets<double, P>(comm, n, n, entries, {.distribution = parts});
/// tessera::dist_dense<double, P> x(comm, A.mapping(), /*vectors=*/4);
/// @endcode
struct row_partition {
  /// The owner of every row of the matrices built with this distribution (their row count must
  /// be its size); none: an even contiguous split, as row_block's.
  std::shared_ptr<const std::vector<int>> owners;

  static constexpr std::string_view name() noexcept { return "row_partition"; }

  class mapping {
   public:
    mapping() : mapping(std::vector<int>{}, 1, 0) {}

    /// Even contiguous split of `rows` over `num_ranks` (as row_block's), as an owner list.
    mapping(int num_ranks, global_index rows, global_index cols) : mapping(even_owners(num_ranks, rows), num_ranks, cols) {}

    /// Row i on rank owners[i]. Throws invalid_argument naming the first row whose owner is not a
    /// rank of `num_ranks`.
    mapping(std::vector<int> owners, int num_ranks, global_index cols) : cols_(cols) {
      TESSERA_REQUIRE(num_ranks > 0, invalid_argument, "row_partition: {} ranks", num_ranks);
      TESSERA_REQUIRE(cols >= 0, invalid_argument, "row_partition: negative column count {}", cols);
      auto layout = std::make_shared<shared_layout>();
      layout->owner = std::move(owners);
      layout->local.resize(layout->owner.size());
      layout->rank_begin.assign(static_cast<std::size_t>(num_ranks) + 1, 0);
      for (std::size_t i = 0; i < layout->owner.size(); ++i) {
        const int r = layout->owner[i];
        TESSERA_REQUIRE(r >= 0 && r < num_ranks, invalid_argument,
                        "row_partition: row {} is given to rank {}, outside the {} ranks", i, r, num_ranks);
        layout->local[i] = layout->rank_begin[static_cast<std::size_t>(r) + 1]++;
      }
      for (std::size_t r = 0; r < static_cast<std::size_t>(num_ranks); ++r)
        layout->rank_begin[r + 1] += layout->rank_begin[r];
      layout->rows_by_rank.resize(layout->owner.size());
      for (std::size_t i = 0; i < layout->owner.size(); ++i) {
        const auto r = static_cast<std::size_t>(layout->owner[i]);
        layout->rows_by_rank[static_cast<std::size_t>(layout->rank_begin[r] + layout->local[i])] = static_cast<global_index>(i);
      }
      layout_ = std::move(layout);
    }

    [[nodiscard]] int num_ranks() const noexcept { return static_cast<int>(layout_->rank_begin.size()) - 1; }
    [[nodiscard]] global_index global_rows() const noexcept { return static_cast<global_index>(layout_->owner.size()); }
    [[nodiscard]] global_index global_cols() const noexcept { return cols_; }

    [[nodiscard]] int row_owner(global_index i) const noexcept { return layout_->owner[static_cast<std::size_t>(i)]; }
    [[nodiscard]] global_index local_row(global_index i) const noexcept { return layout_->local[static_cast<std::size_t>(i)]; }
    /// The owner of every row.
    [[nodiscard]] const std::vector<int>& owners() const noexcept { return layout_->owner; }

    [[nodiscard]] int owner(global_index i, global_index /*j*/) const noexcept { return row_owner(i); }
    [[nodiscard]] local_coordinate to_local(global_index i, global_index j) const noexcept {
      return {row_owner(i), local_row(i), j};
    }
    [[nodiscard]] global_coordinate to_global(int rank, global_index li, global_index lj) const noexcept {
      return {layout_->rows_by_rank[static_cast<std::size_t>(layout_->rank_begin[static_cast<std::size_t>(rank)] + li)], lj};
    }
    [[nodiscard]] local_extents extents(int rank) const noexcept {
      const auto r = static_cast<std::size_t>(rank);
      return {layout_->rank_begin[r + 1] - layout_->rank_begin[r], cols_};
    }

    /// The same rows over `cols` columns when `rows` is unchanged (the owner list is shared, not
    /// copied); an even contiguous split of the new rows otherwise.
    [[nodiscard]] mapping with_shape(global_index rows, global_index cols) const {
      if (rows == global_rows()) {
        mapping same = *this;
        same.cols_ = cols;
        return same;
      }
      return mapping(num_ranks(), rows, cols);
    }

    /// Equal partitions: O(1) when the owner list is shared, O(rows) otherwise.
    friend bool operator==(const mapping& a, const mapping& b) noexcept {
      return a.cols_ == b.cols_ && (a.layout_ == b.layout_ || (a.num_ranks() == b.num_ranks() &&
                                                               a.layout_->owner == b.layout_->owner));
    }

   private:
    struct shared_layout {
      std::vector<int> owner;                 // per row
      std::vector<global_index> local;        // per row: position on its owner
      std::vector<global_index> rank_begin;   // per rank + 1: where its rows start in rows_by_rank
      std::vector<global_index> rows_by_rank; // the rows of rank 0, then of rank 1, ...
    };

    static std::vector<int> even_owners(int num_ranks, global_index rows) {
      TESSERA_REQUIRE(num_ranks > 0, invalid_argument, "row_partition: {} ranks", num_ranks);
      TESSERA_REQUIRE(rows >= 0, invalid_argument, "row_partition: negative row count {}", rows);
      std::vector<int> owners(static_cast<std::size_t>(rows));
      const global_index base = rows / num_ranks, extra = rows % num_ranks;
      global_index i = 0;
      for (int r = 0; r < num_ranks; ++r)
        for (global_index n = base + (r < extra ? 1 : 0); n > 0; --n) owners[static_cast<std::size_t>(i++)] = r;
      return owners;
    }

    std::shared_ptr<const shared_layout> layout_;
    global_index cols_ = 0;
  };

  [[nodiscard]] mapping make_mapping(int num_ranks, global_index rows, global_index cols) const {
    if (!owners) return mapping(num_ranks, rows, cols);
    TESSERA_REQUIRE(static_cast<global_index>(owners->size()) == rows, invalid_argument,
                    "row_partition: {} owners given for a matrix of {} rows", owners->size(), rows);
    return mapping(*owners, num_ranks, cols);
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_ROW_PARTITION_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_DISTRIBUTION_ROW_PARTITION_HPP
#endif
