#pragma once
/// @file
/// What dist_matrix checks of a local block a user hands it: every index an operation will
/// follow (row offsets, column positions, the column map's global columns) must be in range,
/// or a fetch reads past a buffer on one rank while the others wait for it. Kernels on the
/// block's execution space count the violations, so a device block is never copied to the host.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/matrix/detail/adopted_block_checks.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/deep_copy.hpp"
#include "../../core/error.hpp"
#include "../../core/index_types.hpp"
#include "../../concepts/storage.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace tessera::detail {

/// Entries of `index` outside [0, bound).
template <class ExecSpace, class View>
[[nodiscard]] std::int64_t count_out_of_range(const View& index, std::int64_t bound) {
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "tessera::check::out_of_range", Kokkos::RangePolicy<ExecSpace>(0, index.extent(0)),
      KOKKOS_LAMBDA(const std::size_t k, std::int64_t& sum) {
        const auto v = static_cast<std::int64_t>(index(k));
        if (v < 0 || v >= bound) ++sum;
      },
      bad);
  return bad;
}

/// Positions k with index(k) > index(k + 1) (strict: index(k) >= index(k + 1)).
template <class ExecSpace, class View>
[[nodiscard]] std::int64_t count_descents(const View& index, bool strict) {
  std::int64_t bad = 0;
  if (index.extent(0) < 2) return 0;
  Kokkos::parallel_reduce(
      "tessera::check::descents", Kokkos::RangePolicy<ExecSpace>(0, index.extent(0) - 1),
      KOKKOS_LAMBDA(const std::size_t k, std::int64_t& sum) {
        if (index(k) > index(k + 1) || (strict && index(k) == index(k + 1))) ++sum;
      },
      bad);
  return bad;
}

/// The first and last entries of an offsets View (host copies of two scalars).
template <class View>
[[nodiscard]] std::pair<std::int64_t, std::int64_t> first_and_last(const View& offsets) {
  const auto n = offsets.extent(0);
  typename View::non_const_value_type first{}, last{};
  tessera::detail::deep_copy(first, Kokkos::subview(offsets, 0));
  tessera::detail::deep_copy(last, Kokkos::subview(offsets, n - 1));
  return {static_cast<std::int64_t>(first), static_cast<std::int64_t>(last)};
}

/// Throws invalid_argument naming what is wrong with compressed offsets `ptr` over `groups`
/// groups (rows of CSR, columns of CSC) and the `entries` they address.
template <class ExecSpace, class View>
void check_offsets(const View& ptr, local_index groups, std::size_t entries, const char* what) {
  TESSERA_REQUIRE(ptr.extent(0) == static_cast<std::size_t>(groups) + 1, invalid_argument,
                  "dist_matrix: the local block's {} has {} entries, not {} + 1", what, ptr.extent(0), groups);
  const auto [first, last] = first_and_last(ptr);
  TESSERA_REQUIRE(first == 0 && last == static_cast<std::int64_t>(entries), invalid_argument,
                  "dist_matrix: the local block's {} runs from {} to {}, not from 0 to its {} entries", what, first,
                  last, entries);
  const auto descents = count_descents<ExecSpace>(ptr, false);
  TESSERA_REQUIRE(descents == 0, invalid_argument, "dist_matrix: the local block's {} decreases at {} places", what,
                  descents);
}

inline void check_values(std::size_t values, std::size_t entries) {
  TESSERA_REQUIRE(values >= entries, invalid_argument, "dist_matrix: the local block has {} entries but {} values",
                  entries, values);
}

/// Throws invalid_argument unless every index of `block` is in range and `col_map` holds
/// distinct ascending global columns below `global_cols`. A user's storage that has none of the
/// compressed-rows, compressed-columns or coordinates capabilities is checked for its shape only.
template <class ExecSpace, class Block, class ColMap>
void check_adopted_block(const Block& block, const ColMap& col_map, global_index global_cols) {
  const auto rows = block.num_rows();
  const auto cols = block.num_cols();
  if constexpr (compressed_row_block<Block>) {
    check_offsets<ExecSpace>(block.row_ptr, rows, block.col_idx.extent(0), "row_ptr");
    check_values(block.values.extent(0), block.col_idx.extent(0));
    const auto bad = count_out_of_range<ExecSpace>(block.col_idx, cols);
    TESSERA_REQUIRE(bad == 0, invalid_argument,
                    "dist_matrix: {} column positions of the local block are outside [0, {}) (its column map's length)",
                    bad, cols);
  } else if constexpr (compressed_column_block<Block>) {
    check_offsets<ExecSpace>(block.col_ptr, cols, block.row_idx.extent(0), "col_ptr");
    check_values(block.values.extent(0), block.row_idx.extent(0));
    const auto bad = count_out_of_range<ExecSpace>(block.row_idx, rows);
    TESSERA_REQUIRE(bad == 0, invalid_argument,
                    "dist_matrix: {} row indices of the local block are outside [0, {}) (its local rows)", bad, rows);
  } else if constexpr (coordinate_block<Block>) {
    TESSERA_REQUIRE(block.row_idx.extent(0) == block.col_idx.extent(0), invalid_argument,
                    "dist_matrix: the local block has {} row indices but {} column indices", block.row_idx.extent(0),
                    block.col_idx.extent(0));
    check_values(block.values.extent(0), block.row_idx.extent(0));
    const auto bad_rows = count_out_of_range<ExecSpace>(block.row_idx, rows);
    const auto bad_cols = count_out_of_range<ExecSpace>(block.col_idx, cols);
    TESSERA_REQUIRE(bad_rows == 0 && bad_cols == 0, invalid_argument,
                    "dist_matrix: {} row indices and {} column positions of the local block are outside [0, {}) and "
                    "[0, {})",
                    bad_rows, bad_cols, rows, cols);
  }
  const auto outside = count_out_of_range<ExecSpace>(col_map, static_cast<std::int64_t>(global_cols));
  TESSERA_REQUIRE(outside == 0, invalid_argument,
                  "dist_matrix: {} entries of the column map name columns outside the matrix's {} columns", outside,
                  global_cols);
  const auto unsorted = count_descents<ExecSpace>(col_map, true);
  TESSERA_REQUIRE(unsorted == 0, invalid_argument,
                  "dist_matrix: the column map is not strictly ascending ({} places out of order or repeated)",
                  unsorted);
}

}  // namespace tessera::detail
