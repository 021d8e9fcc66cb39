#pragma once
/// @file
/// policy<Distribution, Storage, Backend, ExecutionSpace>: the compile-time
/// description of how a distributed matrix is laid out, stored and moved.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_POLICY_HPP
#endif

#include "concepts/backend.hpp"
#include "concepts/distribution.hpp"
#include "concepts/storage.hpp"

#include <Kokkos_Core.hpp>

namespace tessera {

/// A bundle of one policy of each kind.
///
/// @tparam Distribution  who owns which entries (row_block, ...)
/// @tparam Storage       how a rank stores its entries (csr, csc, coo, tiles, ...)
/// @tparam Backend       how ranks exchange data (mpi_rma, progress_rank, aggregator)
/// @tparam ExecutionSpace where local kernels run; its memory space holds the local Views
///
/// To run the same program with one policy swapped, use rebind_storage_t,
/// rebind_backend_t, rebind_distribution_t or rebind_execution_space_t.
template <class Distribution, class Storage, class Backend, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
struct policy {
  static_assert(distribution_policy<Distribution>,
                "tessera::policy: the first argument must be a distribution policy (e.g. tessera::row_block): a "
                "default-constructible tag with static name(), a nested `mapping` answering owner/to_local/to_global/"
                "extents, and make_mapping(num_ranks, rows, cols)");
  static_assert(storage_policy<Storage>,
                "tessera::policy: the second argument must be a storage policy (tessera::csr, csc, coo or tiles): a "
                "tag with static name() and a nested block<T, MemorySpace> that either converts through COO "
                "(from_coo/to_coo: element_storage) or holds tiles (tile_storage)");
  static_assert(!tile_storage<Storage> || grid_mapping<typename Distribution::mapping>,
                "tessera::policy: tile storage needs a distribution that places whole tiles on a process grid "
                "(grid_mapping: block_cyclic_2d or replicated_columns); row distributions place rows, not tiles");
  static_assert(communication_backend<Backend>,
                "tessera::policy: the third argument must be a communication backend (tessera::mpi_rma, "
                "progress_rank or aggregator): a tag with static name(), nested options and a context offering "
                "segments, get/put, accumulate, fetch_add, flush, barrier and messages() (concepts/backend.hpp)");
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "tessera::policy: the fourth argument must be a Kokkos execution space");

  using distribution_type = Distribution;
  using storage_type = Storage;
  using backend_type = Backend;
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using device_type = Kokkos::Device<execution_space, memory_space>;
  using mapping_type = typename Distribution::mapping;
};

namespace detail {
template <class P>
struct is_policy : std::false_type {};
template <class D, class S, class B, class E>
struct is_policy<policy<D, S, B, E>> : std::true_type {};
}  // namespace detail

/// Satisfied by every instantiation of tessera::policy.
template <class P>
concept matrix_policy = detail::is_policy<P>::value;

template <matrix_policy P, class NewStorage>
using rebind_storage_t =
    policy<typename P::distribution_type, NewStorage, typename P::backend_type, typename P::execution_space>;
template <matrix_policy P, class NewBackend>
using rebind_backend_t =
    policy<typename P::distribution_type, typename P::storage_type, NewBackend, typename P::execution_space>;
template <matrix_policy P, class NewDistribution>
using rebind_distribution_t =
    policy<NewDistribution, typename P::storage_type, typename P::backend_type, typename P::execution_space>;
template <matrix_policy P, class NewExecutionSpace>
using rebind_execution_space_t =
    policy<typename P::distribution_type, typename P::storage_type, typename P::backend_type, NewExecutionSpace>;

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_POLICY_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_POLICY_HPP
#endif
