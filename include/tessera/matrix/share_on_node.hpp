#pragma once
/// @file
/// share_on_node: a block-sparse matrix whose local tiles, or a dense block whose
/// local rows, live in memory the ranks of a node share, so that operations read
/// node peers' data in place (bsgemm reads A this way, spmm X: no staging copy, no fetch).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_SHARE_ON_NODE_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../comm/node_shared_array.hpp"
#include "dist_dense.hpp"
#include "make_block_sparse.hpp"

#include <Kokkos_Core.hpp>

#include <memory>
#include <type_traits>

namespace tessera {

/// A copy of `a` with its local tiles in node-shared memory (collective).
///
/// Write new values into the result's `local().values` in place (the
/// tensor-contraction loop refines A this way) and it stays shared; a new
/// View assigned to `values` is private again. The shared memory is freed
/// collectively over each node with the last copy of the tiles (the matrix
/// and its copies, not Views taken from them: `values` is an unmanaged View,
/// so keep the matrix alive while you use one): destroy such matrices in the
/// same order on every rank. `ranks_per_node` > 0 emulates
/// smaller nodes (node_shared_array).
template <class T, matrix_policy Policy>
  requires tile_storage<typename Policy::storage_type>
[[nodiscard]] dist_matrix<T, Policy> share_on_node(const dist_matrix<T, Policy>& a, int ranks_per_node = 0) {
  using memory_space = typename Policy::memory_space;
  static_assert(std::is_same_v<memory_space, Kokkos::HostSpace>,
                "tessera::share_on_node: node-shared memory is host memory; the matrix's execution space must use "
                "Kokkos::HostSpace");
  auto memory = std::make_shared<node_shared_array<T>>(a.comm(), a.local().num_elements(), ranks_per_node);
  auto tiles = a.local();
  tiles.values = Kokkos::View<T*, memory_space>(memory->local().data(), memory->local().size());
  tessera::detail::deep_copy(tiles.values, a.local().values);
  tiles.node_shared = std::move(memory);
  return dist_matrix<T, Policy>(a.comm(), a.mapping(), std::move(tiles));
}

/// True when `a`'s local tiles are (still) the node-shared memory share_on_node gave them.
template <class T, matrix_policy Policy>
  requires tile_storage<typename Policy::storage_type>
[[nodiscard]] bool is_node_shared(const dist_matrix<T, Policy>& a) noexcept {
  const auto& tiles = a.local();
  return tiles.node_shared != nullptr && tiles.values.data() == tiles.node_shared->local().data() &&
         tiles.values.extent(0) == tiles.node_shared->local().size();
}

/// A copy of `x` with its local rows in node-shared memory, the node's rows one array
/// (node_layout::contiguous; collective).
///
/// spmm(A, X) then reads the rows of X that node peers own where they lie, with plain loads: no
/// staging copy, no packing, no fetch through the backend, when every rank passes such an X and
/// every rank it reads from shares its node (otherwise it fetches as usual). Write new values into
/// `local()` in place between products and the block stays shared; the product orders those
/// writes against its reads (barriers on both sides). The memory is freed collectively over each
/// node with the last copy of the block: destroy such blocks in the same order on every rank.
/// `ranks_per_node` > 0 emulates smaller nodes (node_shared_array).
template <class T, matrix_policy Policy>
[[nodiscard]] dist_dense<T, Policy> share_on_node(const dist_dense<T, Policy>& x, int ranks_per_node = 0) {
  using memory_space = typename Policy::memory_space;
  static_assert(std::is_same_v<memory_space, Kokkos::HostSpace>,
                "tessera::share_on_node: node-shared memory is host memory; the block's execution space must use "
                "Kokkos::HostSpace");
  auto memory = std::make_shared<node_shared_array<T>>(x.comm(), x.local().span(), ranks_per_node, node_layout::contiguous);
  dist_dense<T, Policy> shared(x.comm(), x.mapping(), x.num_vectors(), std::move(memory));
  tessera::detail::deep_copy(shared.local(), x.local());
  return shared;
}

/// True when `x`'s local rows lie in node-shared memory (share_on_node).
template <class T, matrix_policy Policy>
[[nodiscard]] bool is_node_shared(const dist_dense<T, Policy>& x) noexcept {
  return x.node_shared() != nullptr;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_SHARE_ON_NODE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_SHARE_ON_NODE_HPP
#endif
