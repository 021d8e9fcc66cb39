#pragma once
/// @file
/// CSR storage: compressed rows, columns sorted within each row.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_CSR_HPP
#endif

#include "../kernels/bucket_sort.hpp"
#include "coo.hpp"

#include <Kokkos_Core.hpp>

#include <string_view>

namespace tessera {

/// A rank's local block in CSR form. Row r's entries are [row_ptr(r), row_ptr(r+1)),
/// columns ascending. Column indices are local (see dist_matrix::col_map()).
template <class T, class MemorySpace>
struct csr_block {
  using value_type = T;
  using memory_space = MemorySpace;

  local_index rows = 0;
  local_index cols = 0;
  Kokkos::View<offset_type*, MemorySpace> row_ptr;  ///< rows + 1 entries
  Kokkos::View<local_index*, MemorySpace> col_idx;
  Kokkos::View<T*, MemorySpace> values;

  [[nodiscard]] local_index num_rows() const noexcept { return rows; }
  [[nodiscard]] local_index num_cols() const noexcept { return cols; }
  [[nodiscard]] offset_type nnz() const noexcept { return static_cast<offset_type>(values.extent(0)); }
};

/// Storage policy: compressed sparse rows.
struct csr {
  static constexpr std::string_view name() noexcept { return "csr"; }

  template <class T, class MemorySpace>
  using block = csr_block<T, MemorySpace>;

  template <class ExecSpace, class T, class MemorySpace>
  static csr_block<T, MemorySpace> from_coo(const ExecSpace& exec, const coo_block<T, MemorySpace>& sorted) {
    // Already sorted row-major: only the row pointers are new.
    auto grouped = kernels::group_and_sort<ExecSpace, local_index, T, MemorySpace>(exec, sorted.rows, sorted.row_idx,
                                                                                 sorted.col_idx, sorted.values);
    return {sorted.rows, sorted.cols, grouped.ptr, grouped.keys, grouped.values};
  }

  template <class ExecSpace, class T, class MemorySpace>
  static coo_block<T, MemorySpace> to_coo(const ExecSpace& exec, const csr_block<T, MemorySpace>& block) {
    auto rows = kernels::expand_groups<ExecSpace, MemorySpace>(exec, block.row_ptr);
    return {block.rows, block.cols, rows, block.col_idx, block.values};
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_CSR_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_CSR_HPP
#endif
