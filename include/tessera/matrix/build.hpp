#pragma once
/// @file
/// Building a dist_matrix from (row, column, value) triplets held on any rank.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_BUILD_HPP
#endif

#include "../core/combine.hpp"
#include "../concepts/distribution.hpp"
#include "../core/error.hpp"
#include "detail/assemble.hpp"
#include "detail/route.hpp"
#include "redistribute.hpp"
#include "triplets.hpp"

#include <optional>
#include <span>
#include <vector>

namespace tessera {

/// Options of build_from_triplets.
///
/// @tparam Combine how duplicates are combined: any `T(T, T)` callable in the
///         policy's execution space (default: summed).
template <matrix_policy Policy, class Combine = combine::sum>
struct build_options {
  /// The distribution and its options (e.g. row_block{row_block::balance::nonzeros}).
  typename Policy::distribution_type distribution{};
  Combine combine{};
};

/// Build a distributed matrix from triplets that each rank holds (collective).
///
/// Every rank passes its own entries, which may belong to any rank and may
/// repeat: they are routed to their owners with the policy's backend (traffic
/// counted under the scope "build"), duplicates are combined, and columns are
/// sorted within rows. No preallocation, no ordering required.
///
/// Raises tessera::error on every rank if any rank passes an index outside
/// the shape, arrays of different lengths or a negative shape.
template <matrix_value T, matrix_policy Policy, class Combine = combine::sum>
[[nodiscard]] dist_matrix<T, Policy> build_from_triplets(const communicator& comm, global_index rows, global_index cols,
                                                         std::span<const global_index> row_idx,
                                                         std::span<const global_index> col_idx,
                                                         std::span<const T> values,
                                                         const build_options<Policy, Combine>& options = {}) {
  static_assert(!tile_storage<typename Policy::storage_type>,
                "tessera::build_from_triplets builds element storages (csr, csc, coo, a user's); a tile-stored "
                "matrix is made by make_block_sparse, or from an element-sparse one by to_tiles");
  const stats_scope scope(comm, "build");
  const auto mapping = comm.collectively([&] {
    TESSERA_REQUIRE(rows >= 0 && cols >= 0, invalid_argument, "build_from_triplets: negative shape {} x {}", rows, cols);
    TESSERA_REQUIRE(row_idx.size() == values.size() && col_idx.size() == values.size(), invalid_argument,
                    "build_from_triplets: {} rows, {} columns and {} values given; the three must be equally long",
                    row_idx.size(), col_idx.size(), values.size());
    for (std::size_t k = 0; k < values.size(); ++k) {
      TESSERA_REQUIRE(row_idx[k] >= 0 && row_idx[k] < rows, index_out_of_range,
                      "build_from_triplets: entry {} has row {}, outside [0, {})", k, row_idx[k], rows);
      TESSERA_REQUIRE(col_idx[k] >= 0 && col_idx[k] < cols, index_out_of_range,
                      "build_from_triplets: entry {} has column {}, outside [0, {})", k, col_idx[k], cols);
    }
    return options.distribution.make_mapping(comm.size(), rows, cols);
  });

  const typename Policy::backend_type backend{};
  auto owned = detail::route_to_owners<T>(comm, backend, mapping, row_idx, col_idx, values);
  if constexpr (rebalancing_distribution<typename Policy::distribution_type>) {
    std::optional<dist_matrix<T, Policy>> matrix(std::in_place,
                                                 detail::assemble_owned<T, Policy>(comm, mapping, owned, options.combine));
    const auto better = options.distribution.rebalance(comm, matrix->mapping(), local_row_counts(*matrix));
    if (!better) return std::move(*matrix);
    // The entries this rank received go once more to their owners under the better split and
    // are assembled as before: the same two instantiations again, none of redistribute's.
    matrix.reset();
    const auto moved = detail::route_to_owners<T>(comm, backend, *better, std::span<const global_index>(owned.rows),
                                                  std::span<const global_index>(owned.cols),
                                                  std::span<const T>(owned.values));
    owned = {};
    return detail::assemble_owned<T, Policy>(comm, *better, moved, options.combine);
  } else {
    return detail::assemble_owned<T, Policy>(comm, mapping, owned, options.combine);
  }
}

/// Overload taking a triplets<T> (collective).
template <matrix_value T, matrix_policy Policy, class Combine = combine::sum>
[[nodiscard]] dist_matrix<T, Policy> build_from_triplets(const communicator& comm, global_index rows, global_index cols,
                                                         const triplets<T>& entries,
                                                         const build_options<Policy, Combine>& options = {}) {
  return build_from_triplets<T, Policy, Combine>(comm, rows, cols, std::span<const global_index>(entries.rows),
                                                 std::span<const global_index>(entries.cols),
                                                 std::span<const T>(entries.values), options);
}

}  // namespace tessera

#ifdef TESSERA_USE_INSTANTIATIONS  // compiled once in tessera::instantiations, not in this unit
#include "../instantiations/use.hpp"
TESSERA_FOR_EACH_INSTANTIATED_POLICY(TESSERA_INSTANTIATE_BUILD, extern)
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_BUILD_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_BUILD_HPP
#endif
