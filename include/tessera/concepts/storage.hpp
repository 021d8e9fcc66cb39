#pragma once
/// @file
/// The requirements of a storage policy.
///
/// A storage is a tag with a nested `block<T, MemorySpace>` template (the
/// container of a rank's local entries, on Kokkos Views). Element storages add
/// two conversions through the interchange format, sorted COO; tile storages
/// keep dense tiles and the replicated shape. Operations ask for the capability
/// they use (compressed rows, compressed columns, coordinates, tiles).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_STORAGE_HPP
#endif

#include "../storage/block_sparse.hpp"
#include "../storage/coo.hpp"
#include "../core/index_types.hpp"

#include <Kokkos_Core.hpp>

#include <concepts>
#include <string_view>

namespace tessera {

/// A rank's local nonzeros in some storage format.
template <class B>
concept local_block = std::copyable<B> && requires(const B& b) {
  typename B::value_type;
  typename B::memory_space;
  { b.num_rows() } -> std::same_as<local_index>;
  { b.num_cols() } -> std::same_as<local_index>;
  { b.nnz() } -> std::same_as<offset_type>;
};

namespace detail {
using probe_space = Kokkos::HostSpace;
using probe_exec = Kokkos::DefaultHostExecutionSpace;
}  // namespace detail

/// Capability "entries convert through COO": a storage whose block converts from and to the
/// interchange format, sorted COO. Every element-sparse storage (csr, csc, coo, a user's sliced
/// ELLPACK) is one; every conversion between two of them goes through those two functions, so
/// a new storage works with all the others the moment it provides them. Checked on a probe
/// instantiation (double values in host memory).
template <class S>
concept element_storage = requires {
  { S::name() } -> std::convertible_to<std::string_view>;
  typename S::template block<double, detail::probe_space>;
} && local_block<typename S::template block<double, detail::probe_space>> &&
    requires(const detail::probe_exec& exec, const coo_block<double, detail::probe_space>& sorted,
             const typename S::template block<double, detail::probe_space>& block) {
      { S::from_coo(exec, sorted) } -> std::same_as<typename S::template block<double, detail::probe_space>>;
      { S::to_coo(exec, block) } -> std::same_as<coo_block<double, detail::probe_space>>;
    };

/// Capability "tiles": a block of dense tiles addressed by global tile coordinates, with the
/// replicated shape (storage/tiles.hpp). bsgemm and summa read such blocks.
template <class B>
concept tile_block_storage = local_block<B> && requires(const B& b) {
  { b.shape } -> std::convertible_to<const block_sparse_shape&>;
  b.index;
  b.offset;
  b.values(0);
  b.num_tiles();
};

/// A storage whose blocks are tiles (the built-in `tiles`, or a user's with the same block shape).
template <class S>
concept tile_storage = requires {
  { S::name() } -> std::convertible_to<std::string_view>;
  typename S::template block<double, detail::probe_space>;
} && tile_block_storage<typename S::template block<double, detail::probe_space>>;

/// A storage policy: a tag with static name() and a nested block<T, MemorySpace>, whose blocks
/// either convert through COO (element_storage) or are tiles (tile_storage).
template <class S>
concept storage_policy = element_storage<S> || tile_storage<S>;

/// Capability "one values View": every stored value (and any padding) in `values`, which
/// element-wise maps (scale, apply) rewrite in place, sharing the rest of the block.
template <class B>
concept value_array_block = local_block<B> && requires(const B& b) { b.values(0); };

/// Capability "compressed rows": a CSR-shaped block (row_ptr, col_idx, values Views, columns
/// ascending in each row). SpMM and SpGEMM read such a block in place; any other storage is
/// converted to CSR by the operation (matrix/as_compressed_rows.hpp states the cost).
template <class B>
concept compressed_row_block = local_block<B> && requires(const B& b) {
  b.row_ptr(0);
  b.col_idx(0);
  b.values(0);
};

/// Capability "compressed columns": a CSC-shaped block (col_ptr, row_idx, values).
template <class B>
concept compressed_column_block = local_block<B> && requires(const B& b) {
  b.col_ptr(0);
  b.row_idx(0);
  b.values(0);
};

/// Capability "coordinates": row_idx, col_idx and values of every entry.
template <class B>
concept coordinate_block = local_block<B> && requires(const B& b) {
  b.row_idx(0);
  b.col_idx(0);
  b.values(0);
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_STORAGE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_STORAGE_HPP
#endif
