#pragma once
/// @file
/// spmm_workspace: what every SpMM plan with one communicator, row split of X and width shares
/// (the backend context, X's double-buffered staging windows, the halo).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_WORKSPACE_HPP
#endif

#include "../../core/deep_copy.hpp"
#include "../../comm/communicator.hpp"
#include "../../comm/shared_context.hpp"
#include "../../comm/mpi_memory.hpp"
#include "../../comm/segment.hpp"
#include "../../core/huge_pages.hpp"
#include "../../core/typed_cache.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace tessera {

namespace detail {

/// What every SpMM plan with the same communicator, row split of X and width
/// k can share: the backend context, the windows X is staged (and packed) in,
/// sized for the largest plan, and the halo buffers. SpDNN keeps one plan per layer, all with the same X: sharing keeps
/// their memory at two staging copies and one (largest) halo, not one per layer.
///
/// Staging is double-buffered: fetching products alternate between the two
/// windows, so a product never overwrites the window the previous fetching
/// product was read from, and needs no closing barrier: the opening barrier
/// of the product in between orders every read before the next overwrite.
template <class T, class Policy>
struct spmm_workspace {
  using memory_space = typename Policy::memory_space;
  using backend_type = typename Policy::backend_type;
  using backend_context = typename backend_type::context;
  using halo_type = Kokkos::View<T**, Kokkos::LayoutRight, memory_space>;
  using window_type = staging_window<T, memory_space, backend_type>;

  spmm_workspace(const communicator& comm, std::size_t my_rows, std::size_t k)
      : comm_(comm), k_(k), capacity_(my_rows * k) {
    context = shared_context<backend_type>(comm);
    staging[0] = window_type(*context, capacity_);
    staging[1] = window_type(*context, capacity_);
  }

  /// Both staging windows hold at least `elements` on this rank (collective: every
  /// rank constructs its plans in the same order). A plan whose owners pack rows
  /// for several requesters may need more than X's local rows.
  void reserve_staging(std::size_t elements) {
    std::vector<std::int64_t> grow{elements > capacity_ ? 1 : 0};
    comm_.allreduce_inplace(grow, MPI_MAX);
    if (grow[0] == 0) return;
    // Nobody may still read the old windows (the gets of every product complete inside it,
    // but order them before the collective free anyway).
    context->barrier();
    capacity_ = std::max(capacity_, elements);
    staging[0] = window_type{};
    staging[1] = window_type{};
    staging[0] = window_type(*context, capacity_);
    staging[1] = window_type(*context, capacity_);
  }

  /// The halo holds at least `rows` rows (not collective).
  void reserve_halo(std::size_t rows) {
    if (halo_made_ && rows <= halo.extent(0)) return;
    halo = halo_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::halo"), rows, k_);
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible)
      advise_huge_pages(halo.data(), halo.span() * sizeof(T));  // before the first touch: the deep_copy
    tessera::detail::deep_copy(halo, T{});
    halo_made_ = true;
    halo_landing = mpi_buffer_for<backend_type>(halo);  // where the gets land (the halo itself where MPI reaches it)
  }

  /// The workspace of (comm, X's row split, k), made collectively on first use and freed with
  /// the last plan that holds it. The communicator keeps it by type (weakly: the workspace holds
  /// the communicator); every rank asks for the same one together, so all find it or all make it.
  template <class Mapping>
  static std::shared_ptr<spmm_workspace> shared(const communicator& comm, const Mapping& x_rows, global_index k) {
    // The windows depend on every rank's row count only (not on which rows it holds).
    std::vector<global_index> row_counts(static_cast<std::size_t>(comm.size()));
    for (int r = 0; r < comm.size(); ++r) row_counts[static_cast<std::size_t>(r)] = x_rows.extents(r).rows;
    auto& known = comm.shared_resources().template entries<std::weak_ptr<spmm_workspace>>();
    std::erase_if(known, [](const auto& w) { return w.expired(); });
    for (const auto& w : known)
      if (auto live = w.lock(); live->k_ == static_cast<std::size_t>(k) && live->row_counts_ == row_counts) return live;
    auto made = std::make_shared<spmm_workspace>(comm, static_cast<std::size_t>(x_rows.extents(comm.rank()).rows),
                                                 static_cast<std::size_t>(k));
    made->row_counts_ = std::move(row_counts);
    known.push_back(made);
    return made;
  }

  std::shared_ptr<backend_context> context;
  window_type staging[2];
  /// Which staging window the next fetching product uses (the same on every rank:
  /// all ranks run the same products in the same order).
  int next_staging = 0;
  halo_type halo;
  decltype(mpi_buffer_for<backend_type>(std::declval<halo_type>())) halo_landing;

 private:
  communicator comm_;
  std::size_t k_;
  std::vector<global_index> row_counts_;  ///< every rank's rows of X: what the windows were sized for
  std::size_t capacity_;  ///< elements of each staging window on this rank
  bool halo_made_ = false;
};
}  // namespace detail

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_WORKSPACE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_WORKSPACE_HPP
#endif
