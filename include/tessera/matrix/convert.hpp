#pragma once
/// @file
/// Converting a dist_matrix to another element storage policy (csr, csc, coo, a user's).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_CONVERT_HPP
#endif

#include "../core/runtime_lifetime.hpp"
#include "../policy.hpp"
#include "dist_matrix.hpp"

#include <concepts>

namespace tessera {

/// The same matrix, distribution and backend, stored as `NewStorage`.
///
/// Purely local (no communication): the block goes through sorted COO with
/// Kokkos kernels in the policy's execution space.
/// @code
/// auto At = tessera::convert<tessera::csc>(A);
/// @endcode
template <class NewStorage, class T, class Policy>
  requires storage_policy<NewStorage>
[[nodiscard]] dist_matrix<T, rebind_storage_t<Policy, NewStorage>> convert(const dist_matrix<T, Policy>& a) {
  detail::require_runtimes_alive();  // kept past the environment: an error, not an abort
  static_assert(element_storage<NewStorage> && element_storage<typename Policy::storage_type>,
                "tessera::convert: converts between element storages (csr, csc, coo, a user's); a tile's place needs "
                "tilings, so to tiles use to_tiles<TilePolicy>(A, mapping) and back to_elements<Policy>(A) "
                "(matrix/convert_tiles.hpp)");
  using target = rebind_storage_t<Policy, NewStorage>;
  if constexpr (std::same_as<NewStorage, typename Policy::storage_type>) {
    return a;
  } else {
    const typename Policy::execution_space space{};
    auto block = NewStorage::from_coo(space, Policy::storage_type::to_coo(space, a.local()));
    space.fence();
    return dist_matrix<T, target>(detail::assembled_block, a.comm(), a.mapping(), std::move(block), a.col_map(),
                                  a.global_nnz());
  }
}

}  // namespace tessera

#ifdef TESSERA_USE_INSTANTIATIONS  // compiled once in tessera::instantiations, not in this unit
#include "../instantiations/use.hpp"
TESSERA_FOR_EACH_INSTANTIATED_POLICY(TESSERA_INSTANTIATE_CONVERT, extern)
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_CONVERT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_CONVERT_HPP
#endif
