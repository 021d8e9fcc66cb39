#pragma once
/// @file
/// Viewing the local CSR block of a dist_matrix as a KokkosSparse::CrsMatrix.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_KOKKOS_INTEROP_HPP
#endif

#include "../storage/csr.hpp"
#include "dist_matrix.hpp"

#include <KokkosSparse_CrsMatrix.hpp>

#include <concepts>

namespace tessera {

/// The KokkosSparse::CrsMatrix type of a CSR dist_matrix's local block.
template <class T, class Policy>
using local_crs_type = KokkosSparse::CrsMatrix<T, local_index, typename Policy::device_type, void, offset_type>;

/// This rank's block as a KokkosSparse::CrsMatrix sharing the same Views (no copy).
///
/// Its columns are the compressed local columns (`A.col_map()` gives their
/// global indices), so it multiplies a vector gathered in col_map order.
template <class T, class Policy>
  requires std::same_as<typename Policy::storage_type, csr>
[[nodiscard]] local_crs_type<T, Policy> local_crs(const dist_matrix<T, Policy>& a) {
  const auto& b = a.local();
  return local_crs_type<T, Policy>("tessera::local_crs", b.rows, b.cols, b.nnz(), b.values, b.row_ptr, b.col_idx);
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_KOKKOS_INTEROP_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_KOKKOS_INTEROP_HPP
#endif
