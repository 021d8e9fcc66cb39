#pragma once
/// @file
/// COO storage: one (row, column, value) triplet per nonzero, sorted row-major.
///
/// Sorted, duplicate-free COO is also the interchange format between storage
/// policies: every storage converts to and from it.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_COO_HPP
#endif

#include "../core/index_types.hpp"

#include <Kokkos_Core.hpp>

#include <string_view>

namespace tessera {

/// A rank's local block in COO form (sorted by row, then column; no duplicates).
template <class T, class MemorySpace>
struct coo_block {
  using value_type = T;
  using memory_space = MemorySpace;

  local_index rows = 0;
  local_index cols = 0;
  Kokkos::View<local_index*, MemorySpace> row_idx;
  Kokkos::View<local_index*, MemorySpace> col_idx;
  Kokkos::View<T*, MemorySpace> values;

  [[nodiscard]] local_index num_rows() const noexcept { return rows; }
  [[nodiscard]] local_index num_cols() const noexcept { return cols; }
  [[nodiscard]] offset_type nnz() const noexcept { return static_cast<offset_type>(values.extent(0)); }
};

/// Storage policy: coordinate triplets.
struct coo {
  static constexpr std::string_view name() noexcept { return "coo"; }

  template <class T, class MemorySpace>
  using block = coo_block<T, MemorySpace>;

  template <class ExecSpace, class T, class MemorySpace>
  static coo_block<T, MemorySpace> from_coo(const ExecSpace&, const coo_block<T, MemorySpace>& sorted) {
    return sorted;
  }
  template <class ExecSpace, class T, class MemorySpace>
  static coo_block<T, MemorySpace> to_coo(const ExecSpace&, const coo_block<T, MemorySpace>& block) {
    return block;
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_COO_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_STORAGE_COO_HPP
#endif
