#pragma once
/// @file
/// How the element-sparse operations (spgemm, spmm, transpose) take a tile-stored matrix: its
/// nonzero elements as a CSR matrix on the same kind of grid (to_elements: one exchange of the
/// entries, O(nnz)), and the result cut back into tiles (to_tiles: one exchange, O(nnz)). bsgemm
/// and summa multiply tiles natively; these conversions are what lets every operation accept
/// every storage.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/tiles_as_elements.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../matrix/convert_tiles.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../policy.hpp"
#include "../../storage/csr.hpp"

namespace tessera::detail {

/// The element policy of a tile policy: the same distribution, backend and space, CSR storage.
template <matrix_policy Policy>
using element_policy_of = rebind_storage_t<Policy, csr>;

/// A tile-stored matrix's nonzero elements as CSR on the same grid (its distribution's default
/// blocks; collective, counted under "build").
template <matrix_value T, matrix_policy Policy>
dist_matrix<T, element_policy_of<Policy>> tiles_as_elements(const dist_matrix<T, Policy>& a) {
  using D = typename Policy::distribution_type;
  build_options<element_policy_of<Policy>> options{};
  if constexpr (requires(D d) { d.grid = a.mapping().grid(); }) options.distribution.grid = a.mapping().grid();
  return to_elements<element_policy_of<Policy>>(a, options);
}

}  // namespace tessera::detail
