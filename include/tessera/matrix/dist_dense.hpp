#pragma once
/// @file
/// dist_dense<T, Policy>: a block of k dense vectors, distributed by rows.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_DIST_DENSE_HPP
#endif

#include "../core/deep_copy.hpp"
#include "detail/same_mapping.hpp"
#include "../comm/communicator.hpp"
#include "../comm/node_shared_array.hpp"
#include "../concepts/distribution.hpp"
#include "../core/device_algorithms.hpp"
#include "../core/error.hpp"
#include "../core/huge_pages.hpp"
#include "../policy.hpp"
#include "dist_matrix.hpp"
#include "gather.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

namespace tessera {

namespace detail {

/// view = 0 by a work item per row: on host cores each thread first touches the rows it will
/// work on (Kokkos' own zero-initialisation of a host View is one memset on one thread, which a
/// rank's other threads wait for, and it decides where the pages land).
template <class ExecSpace, class View>
void zero_by_rows(const View& view) {
  const auto cols = view.extent(1);
  Kokkos::parallel_for(
      "tessera::dist_dense::zero", Kokkos::RangePolicy<ExecSpace>(0, view.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        for (std::size_t t = 0; t < cols; ++t) view(i, t) = typename View::value_type{};
      });
}

/// view = 0 by a work item per element (row-major order): on a device, neighbouring threads write
/// neighbouring addresses. A thread per row wrote 8 * width bytes apart: zeroing SpDNN's batches
/// that way took 31 ms of a 114 ms run on an H100.
template <class ExecSpace, class View>
void zero_by_elements(const View& view) {
  const auto cols = view.extent(1);
  Kokkos::parallel_for(
      "tessera::dist_dense::zero", Kokkos::RangePolicy<ExecSpace>(0, view.extent(0) * cols),
      KOKKOS_LAMBDA(const std::size_t e) { view(e / cols, e % cols) = typename View::value_type{}; });
}

/// view = 0, in the execution space.
template <class ExecSpace, class View>
void zero_rows(const View& view) {
  if (view.extent(1) == 0) return;
  if constexpr (uses_device_algorithms<ExecSpace>)
    zero_by_elements<ExecSpace>(view);
  else
    zero_by_rows<ExecSpace>(view);
  ExecSpace().fence();
}

}  // namespace detail

/// A rows x k dense block, each rank holding whole rows.
///
/// The local part is a row-major (LayoutRight) View in the policy's memory
/// space, so the k values of one row are contiguous: the layout SpMM streams.
template <matrix_value T, matrix_policy Policy>
class dist_dense {
  static_assert(whole_row_mapping<typename Policy::mapping_type>,
                "tessera::dist_dense needs a distribution whose ranks own whole rows (capability whole_row_mapping: "
                "row_owner, local_row, with_shape); use row_block or your own row distribution for dense blocks");

 public:
  using value_type = T;
  using policy_type = Policy;
  using mapping_type = typename Policy::mapping_type;
  using memory_space = typename Policy::memory_space;
  using execution_space = typename Policy::execution_space;
  using view_type = Kokkos::View<T**, Kokkos::LayoutRight, memory_space>;

  /// rows x num_vectors, rows split by the policy's default distribution, zero-filled.
  dist_dense(const communicator& comm, global_index rows, global_index num_vectors,
             typename Policy::distribution_type distribution = {})
      : dist_dense(comm, checked_mapping(comm, distribution, rows, num_vectors)) {}

  /// Rows split as in `rows_like` (e.g. the row mapping of a matrix), num_vectors columns, zero-filled.
  dist_dense(const communicator& comm, const mapping_type& rows_like, global_index num_vectors)
      : dist_dense(comm, rows_like.with_shape(rows_like.global_rows(), num_vectors)) {}

  /// Rows split as in `rows_like`, this rank's rows held in `local` as given: no allocation and no
  /// zeroing. For blocks laid over memory you keep and reuse (a workspace of the largest width a
  /// loop needs, viewed at the width of each step); the block shares `local`, and where that is an
  /// unmanaged View the memory must outlive the block and every product that uses it.
  /// The width is local.extent(1) and must be the same on every rank; local.extent(0) must be this
  /// rank's row count under rows_like. Collective: a mismatch on any rank throws on every rank.
  dist_dense(const communicator& comm, const mapping_type& rows_like, view_type local)
      : comm_(comm), mapping_(rows_like.with_shape(rows_like.global_rows(), static_cast<global_index>(local.extent(1)))),
        local_(std::move(local)) {
    detail::agree_checks_and_mapping(comm_, mapping_, "dist_dense", detail::mapping_detail::shape, [&] {
      TESSERA_REQUIRE(mapping_.num_ranks() == comm_.size(), dimension_mismatch,
                      "dist_dense: the mapping is for {} ranks but the communicator has {}", mapping_.num_ranks(),
                      comm_.size());
      const local_extents ext = mapping_.extents(comm_.rank());
      TESSERA_REQUIRE(static_cast<global_index>(local_.extent(0)) == static_cast<global_index>(ext.rows), dimension_mismatch,
                      "dist_dense: the View given for rank {} has {} rows but the row split gives it {}", comm_.rank(),
                      local_.extent(0), ext.rows);
    });
  }

  /// Rows split as in `rows_like`, this rank's rows held in its part of `memory`, a node-shared
  /// array of exactly rows x num_vectors elements on every rank (share_on_node makes such blocks):
  /// node peers read them in place (spmm does). The block keeps the memory alive. Collective: a
  /// part of another size on any rank throws on every rank.
  dist_dense(const communicator& comm, const mapping_type& rows_like, global_index num_vectors,
             std::shared_ptr<node_shared_array<T>> memory)
    requires std::is_same_v<memory_space, Kokkos::HostSpace>
      : dist_dense(comm, rows_like, view_type(memory->local().data(), rows_in(comm, rows_like, num_vectors, *memory),
                                              static_cast<std::size_t>(std::max<global_index>(num_vectors, 0)))) {
    comm_.collectively([&] {
      TESSERA_REQUIRE(memory->local().size() == local_.span(), dimension_mismatch,
                      "dist_dense: rank {}'s part of the node-shared memory holds {} elements, not its {} x {} block",
                      comm_.rank(), memory->local().size(), local_.extent(0), local_.extent(1));
    });
    node_shared_ = std::move(memory);
  }

  /// Copies share the local View (a handle). A move is such a copy: the moved-from block stays
  /// the block it was, so using it after std::move is valid, never a null dereference.
  dist_dense(const dist_dense&) = default;
  dist_dense(dist_dense&& other) noexcept : dist_dense(static_cast<const dist_dense&>(other)) {}
  dist_dense& operator=(const dist_dense&) = default;
  dist_dense& operator=(dist_dense&& other) noexcept { return *this = static_cast<const dist_dense&>(other); }
  ~dist_dense() = default;

  /// Fill from a host function f(global_row, column) -> T (not collective).
  template <class F>
  void fill(F&& f) {
    auto host = Kokkos::create_mirror_view(local_);
    for (std::size_t i = 0; i < host.extent(0); ++i) {
      const global_index row = global_row(static_cast<global_index>(i));
      for (std::size_t j = 0; j < host.extent(1); ++j) host(i, j) = f(row, static_cast<global_index>(j));
    }
    tessera::detail::deep_copy(local_, host);
  }
  /// Set every entry to `value` (not collective).
  void fill(T value) { tessera::detail::deep_copy(local_, value); }

  [[nodiscard]] global_index num_rows() const noexcept { return mapping_.global_rows(); }
  [[nodiscard]] global_index num_vectors() const noexcept { return mapping_.global_cols(); }
  [[nodiscard]] local_index local_rows() const noexcept { return static_cast<local_index>(local_.extent(0)); }
  /// Global row of local row `li` of this rank.
  [[nodiscard]] global_index global_row(global_index li) const noexcept {
    return mapping_.to_global(comm_.rank(), li, 0).row;
  }
  /// First global row of this rank (distributions with contiguous row ranges).
  [[nodiscard]] global_index row_begin() const noexcept
    requires contiguous_row_mapping<mapping_type>
  {
    return mapping_.row_begin(comm_.rank());
  }
  [[nodiscard]] const communicator& comm() const noexcept { return comm_; }
  [[nodiscard]] const mapping_type& mapping() const noexcept { return mapping_; }
  [[nodiscard]] const view_type& local() const noexcept { return local_; }
  /// The node-shared memory this rank's rows lie in (share_on_node), or null: rows in private memory.
  [[nodiscard]] const std::shared_ptr<node_shared_array<T>>& node_shared() const noexcept { return node_shared_; }

  /// The whole block, row-major, on `root` (nothing elsewhere). Collective.
  [[nodiscard]] std::optional<std::vector<T>> gather_to_root(int root = 0) const {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, local_);
    std::vector<T> mine(host.data(), host.data() + host.size());
    auto all = comm_.gather_concatenated(mine, root);
    if constexpr (contiguous_row_mapping<mapping_type>) {
      // Ranks in order hold rows in order: the concatenation is the block.
      if (comm_.rank() != root) return std::nullopt;
      return all;
    } else {
      std::vector<global_index> my_rows(host.extent(0));
      for (std::size_t i = 0; i < my_rows.size(); ++i) my_rows[i] = global_row(static_cast<global_index>(i));
      const auto rows = comm_.gather_concatenated(my_rows, root);
      if (comm_.rank() != root) return std::nullopt;
      const auto k = static_cast<std::size_t>(num_vectors());
      std::vector<T> placed(all.size());
      for (std::size_t r = 0; r < rows.size(); ++r)
        std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(r * k), k,
                    placed.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(rows[r]) * k));
      return placed;
    }
  }

 private:
  dist_dense(const communicator& comm, mapping_type mapping) : comm_(comm), mapping_(std::move(mapping)) {
    // One allreduce: the check below on every rank, and the shape (a width that differs on one
    // rank would hang the product that uses this block).
    detail::agree_checks_and_mapping(comm_, mapping_, "dist_dense", detail::mapping_detail::shape, [&] {
      TESSERA_REQUIRE(mapping_.num_ranks() == comm_.size(), dimension_mismatch,
                      "dist_dense: the mapping is for {} ranks but the communicator has {}", mapping_.num_ranks(),
                      comm_.size());
    });
    const local_extents ext = mapping_.extents(comm_.rank());
    local_ = view_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::dist_dense"),
                       static_cast<std::size_t>(ext.rows), static_cast<std::size_t>(ext.cols));
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible)
      advise_huge_pages(local_.data(), local_.span() * sizeof(T));
    detail::zero_rows<execution_space>(local_);
  }

  // The rows a node-shared part of `memory` holds at this width (the row split's, without width).
  static std::size_t rows_in(const communicator& comm, const mapping_type& rows_like, global_index num_vectors,
                             const node_shared_array<T>& memory) {
    if (num_vectors > 0) return memory.local().size() / static_cast<std::size_t>(num_vectors);
    return rows_like.num_ranks() == comm.size() ? static_cast<std::size_t>(rows_like.extents(comm.rank()).rows) : 0;
  }

  static mapping_type checked_mapping(const communicator& comm, const typename Policy::distribution_type& distribution,
                                      global_index rows, global_index num_vectors) {
    return comm.collectively([&] {
      TESSERA_REQUIRE(rows >= 0 && num_vectors >= 0, invalid_argument, "dist_dense: negative shape {} x {}", rows,
                      num_vectors);
      return distribution.make_mapping(comm.size(), rows, num_vectors);
    });
  }

  communicator comm_;
  mapping_type mapping_;
  view_type local_;
  std::shared_ptr<node_shared_array<T>> node_shared_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_DIST_DENSE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_DIST_DENSE_HPP
#endif
