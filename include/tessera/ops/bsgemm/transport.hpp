#pragma once
/// @file
/// How A's tiles reach the ranks that multiply them in bsgemm: fetched one-sided through the
/// backend into two chunk buffers (the next chunk in flight while the current one is multiplied),
/// or, when A lies in node-shared memory and all its readers share a node, read where it lies.
/// Written once against the backend concept.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_TRANSPORT_HPP
#endif

#include "../../core/deep_copy.hpp"
#include "../../comm/communicator.hpp"
#include "../../comm/shared_context.hpp"
#include "../../comm/mpi_memory.hpp"
#include "../../comm/request.hpp"
#include "../../comm/segment.hpp"
#include "../../storage/block_sparse.hpp"
#include "schedule.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace tessera::detail {

template <class T, class ExecutionSpace, class Backend>
class bsgemm_a_transport {
 public:
  using memory_space = typename ExecutionSpace::memory_space;
  using const_values_view = Kokkos::View<const T*, memory_space>;
  using products = std::vector<kernels::tile_product>;
  static constexpr bool host_space = Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;

  /// Collective: learns which ranks read this rank's A (none: apply skips staging it).
  bsgemm_a_transport(const communicator& comm, const bsgemm_schedule& schedule) : comm_(comm) {
    std::vector<int> readers(static_cast<std::size_t>(comm_.size()), 0);
    for (const auto& ch : schedule.chunks)
      for (const auto& g : ch.gets) readers[static_cast<std::size_t>(g.owner)] = 1;
    for (int rank = 0; rank < comm_.size(); ++rank)
      if (readers[static_cast<std::size_t>(rank)]) sources_.push_back(rank);
    comm_.allreduce_inplace(readers, MPI_SUM);
    staged_ = readers[static_cast<std::size_t>(comm_.rank())] > 0;
    buffer_elements_ = schedule.buffer_elements;
    context_ = shared_context<Backend>(comm_);
  }

  /// Collective: whether this apply reads the other ranks' A tiles in place: A is node-shared on
  /// every rank (one share_on_node, the same everywhere) and every rank it reads from shares this
  /// rank's node. `shared` is A's node-shared memory, or null.
  template <class Shared>
  bool agree_in_place(const std::shared_ptr<Shared>& shared, bool is_shared) const {
    bool mine = host_space && is_shared;
    if (mine)
      for (const int owner : sources_) mine = mine && shared->on_node(owner);
    const auto id = mine ? static_cast<std::int64_t>(shared->id()) : std::int64_t{-1};
    // Stores into A before this call (kernels still running included) reach the readers, ordered by this allreduce.
    if (mine) {
      ExecutionSpace().fence();
      shared->sync();
    }
    std::vector<std::int64_t> agreed{id, -id};
    comm_.allreduce_inplace(agreed, MPI_MIN);
    const bool everywhere = agreed[0] >= 0 && agreed[0] == -agreed[1];
    if (everywhere) shared->sync();
    return everywhere;
  }

  /// Every chunk, A read where it lies in the owners' node-shared memory: `multiply(products, a)`.
  template <class Shared, class Multiply>
  void run_in_place(const bsgemm_schedule& schedule, const Shared& shared, const const_values_view& a_local,
                    Multiply&& multiply) const {
    if constexpr (host_space) {  // node-shared memory is host memory: never agreed on a device
      for (const auto& ch : schedule.chunks) {
        multiply(ch.local_products, a_local);
        for (const auto& run : ch.in_place) {
          const auto there = shared.peer(run.owner);
          multiply(run.products, const_values_view(there.data(), there.size()));
        }
      }
      ExecutionSpace().fence();
      // Nobody may write its A while others still read it.
      shared.sync();
      comm_.barrier();
      shared.sync();
    }
  }

  /// Every chunk, fetched into this rank's chunk buffers, the next chunk in flight while one is
  /// multiplied: `multiply(products, a)` on the local A, then on each arrived chunk.
  template <class Multiply>
  void run_fetched(const bsgemm_schedule& schedule, const const_values_view& a_local, std::size_t a_elements,
                   Multiply&& multiply) {
    // Made at the first apply that fetches (collective: every rank agreed to fetch).
    if (!staging_.valid()) {
      staging_ = staging_window<T, memory_space, Backend>(*context_, a_elements);
      for (int k = 0; k < 2; ++k) {
        buffers_[k] = Kokkos::View<T*, memory_space>("tessera::bsgemm::chunk", buffer_elements_);
        landing_[k] = mpi_buffer_for<Backend>(buffers_[k]);
      }
    }
    // Stage this rank's A where the others can fetch it.
    if (staged_) tessera::detail::deep_copy(staging_.local(), a_local);
    fence_before_mpi(ExecutionSpace());
    context_->barrier();
    const auto& chunks = schedule.chunks;
    std::vector<request> in_flight;
    auto start = [&](std::size_t k) {
      const auto& buffer = landing_[k % 2];
      for (const auto& g : chunks[k].gets)
        in_flight.push_back(context_->get_nb(staging_.segment_handle(), g.owner, g.remote,
                                             std::span<T>(buffer.data() + g.local, g.count)));
    };
    if (!chunks.empty()) start(0);
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      std::vector<request> current = std::move(in_flight);
      in_flight.clear();
      // The other buffer is free (chunk k - 1 is done): prefetch chunk k + 1 into it.
      if (k + 1 < chunks.size()) start(k + 1);
      // Local A tiles need no transfer: multiply them while the chunk arrives.
      multiply(chunks[k].local_products, a_local);
      wait_all(current);
      copy_from_mpi(buffers_[k % 2], landing_[k % 2]);
      multiply(chunks[k].fetched_products, const_values_view(buffers_[k % 2]));
    }
    ExecutionSpace().fence();
    // Nobody may restage its A while others still read it.
    context_->barrier();
  }

 private:
  communicator comm_;
  bool staged_ = true;
  std::vector<int> sources_;  // the ranks whose A tiles this rank reads
  std::size_t buffer_elements_ = 0;
  Kokkos::View<T*, memory_space> buffers_[2];
  // Where the gets land (comm/mpi_memory.hpp): buffers_ themselves where MPI reaches them.
  decltype(mpi_buffer_for<Backend>(std::declval<Kokkos::View<T*, memory_space>>())) landing_[2];
  std::shared_ptr<typename Backend::context> context_;
  staging_window<T, memory_space, Backend> staging_;
};

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_TRANSPORT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_TRANSPORT_HPP
#endif
