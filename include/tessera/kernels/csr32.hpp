#pragma once
/// @file
/// CSR blocks with 32-bit row offsets and columns: what vendor sparse libraries (cuSPARSE) take
/// and return, where tessera's own blocks have 64-bit offsets (csr_block).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_CSR32_HPP
#endif

#include <Kokkos_Core.hpp>

namespace tessera::kernels {

/// An operand: rows x cols, row_ptr has rows + 1 entries.
template <class T, class MemorySpace>
struct csr32 {
  int rows = 0, cols = 0;
  Kokkos::View<const int*, MemorySpace> row_ptr;
  Kokkos::View<const int*, MemorySpace> col_idx;
  Kokkos::View<const T*, MemorySpace> values;
};

/// A product: row_ptr has rows + 1 entries; columns sorted within rows.
template <class T, class MemorySpace>
struct csr32_product {
  Kokkos::View<int*, MemorySpace> row_ptr;
  Kokkos::View<int*, MemorySpace> col_idx;
  Kokkos::View<T*, MemorySpace> values;
};

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_CSR32_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_CSR32_HPP
#endif
