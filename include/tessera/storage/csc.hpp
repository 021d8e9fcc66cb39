#pragma once
/// @file
/// CSC storage: compressed columns, rows sorted within each column.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_CSC_HPP
#endif

#include "../kernels/bucket_sort.hpp"
#include "coo.hpp"

#include <Kokkos_Core.hpp>

#include <string_view>

namespace tessera {

/// A rank's local block in CSC form. Local column c's entries are
/// [col_ptr(c), col_ptr(c+1)), rows ascending.
template <class T, class MemorySpace>
struct csc_block {
  using value_type = T;
  using memory_space = MemorySpace;

  local_index rows = 0;
  local_index cols = 0;
  Kokkos::View<offset_type*, MemorySpace> col_ptr;  ///< cols + 1 entries
  Kokkos::View<local_index*, MemorySpace> row_idx;
  Kokkos::View<T*, MemorySpace> values;

  [[nodiscard]] local_index num_rows() const noexcept { return rows; }
  [[nodiscard]] local_index num_cols() const noexcept { return cols; }
  [[nodiscard]] offset_type nnz() const noexcept { return static_cast<offset_type>(values.extent(0)); }
};

/// Storage policy: compressed sparse columns.
struct csc {
  static constexpr std::string_view name() noexcept { return "csc"; }

  template <class T, class MemorySpace>
  using block = csc_block<T, MemorySpace>;

  template <class ExecSpace, class T, class MemorySpace>
  static csc_block<T, MemorySpace> from_coo(const ExecSpace& exec, const coo_block<T, MemorySpace>& sorted) {
    auto grouped = kernels::group_and_sort<ExecSpace, local_index, T, MemorySpace>(exec, sorted.cols, sorted.col_idx,
                                                                                 sorted.row_idx, sorted.values);
    return {sorted.rows, sorted.cols, grouped.ptr, grouped.keys, grouped.values};
  }

  template <class ExecSpace, class T, class MemorySpace>
  static coo_block<T, MemorySpace> to_coo(const ExecSpace& exec, const csc_block<T, MemorySpace>& block) {
    auto cols = kernels::expand_groups<ExecSpace, MemorySpace>(exec, block.col_ptr);
    // Regroup by row to get back to row-major order.
    auto by_row = kernels::group_and_sort<ExecSpace, local_index, T, MemorySpace>(exec, block.rows, block.row_idx, cols,
                                                                                 block.values);
    auto rows = kernels::expand_groups<ExecSpace, MemorySpace>(exec, by_row.ptr);
    return {block.rows, block.cols, rows, by_row.keys, by_row.values};
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_CSC_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_CSC_HPP
#endif
