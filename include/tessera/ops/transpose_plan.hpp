#pragma once
/// @file
/// transpose_plan: A^T's structure worked out once, then every apply moves values only.
///
/// The inspector routes the (j, i) coordinates of every entry to its owner under A^T's mapping (as
/// transpose does), assembles A^T's structure there as CSR and records where each arriving value
/// lands. An apply then sends only the values, 8 bytes each for doubles instead of the 24 of a
/// coordinate triple, in the order the owners expect, and scatters them into a copy of the
/// structure: no sort, no assembly. For the A of an iterative method whose values change and
/// whose structure does not (A^T x in a solver, the backward pass of a layer).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_TRANSPOSE_PLAN_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../comm/buckets.hpp"
#include "../comm/communicator.hpp"
#include "../comm/planned_exchange.hpp"
#include "../concepts/backend.hpp"
#include "../concepts/distribution.hpp"
#include "../core/combine.hpp"
#include "../core/error.hpp"
#include "../matrix/convert.hpp"
#include "../matrix/detail/assemble.hpp"
#include "../matrix/detail/route.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../storage/csr.hpp"
#include "detail/structure_fingerprint.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

namespace tessera {

/// The plan of A^T (collective to make and to apply): made for A's structure and distribution,
/// applied to any matrix with both (its values may differ). Distributed as transpose(A) is.
/// @code
/// tessera::transpose_plan plan(A);
/// auto At = plan.apply(A);          // later: plan.apply(A2) for an A2 with A's structure
/// @endcode
template <matrix_value T, matrix_policy Policy>
class transpose_plan {
  using mapping_type = typename Policy::mapping_type;
  using storage = typename Policy::storage_type;
  using rows_policy = rebind_storage_t<Policy, csr>;
  using memory_space = typename Policy::memory_space;
  using execution_space = typename Policy::execution_space;
  static_assert(element_storage<storage>,
                "tessera::transpose_plan works on element storages (csr, csc, coo, a user's); a tile-stored matrix "
                "goes through to_elements<Policy>(A) first");
  static_assert(whole_row_mapping<mapping_type> || retiling_grid_mapping<mapping_type>,
                "tessera::transpose_plan needs a distribution whose ranks own whole rows (whole_row_mapping) or a "
                "process grid that re-tiles (retiling_grid_mapping); redistribute A to row_block or "
                "block_cyclic_2d first");

 public:
  /// A plan stays where it was made (it holds windows, a shared context and registrations): it
  /// is neither copied nor moved, so no moved-from plan exists. Share it by reference, through
  /// the plans kept with a matrix (kept_plans.hpp) or a std::shared_ptr.
  transpose_plan(const transpose_plan&) = delete;
  transpose_plan& operator=(const transpose_plan&) = delete;

  explicit transpose_plan(const dist_matrix<T, Policy>& a) : mapping_(a.mapping()) {
    const auto& comm = a.comm();
    const stats_scope scope(comm, "transpose");
    target_.emplace(comm.collectively([&] {
      if constexpr (whole_row_mapping<mapping_type>)
        return a.mapping().with_shape(a.num_cols(), a.num_rows());
      else
        return a.mapping().transposed();
    }));
    const auto mine = local_coordinates(a);
    fingerprint_ = std::apply([](const auto&... arrays) { return detail::structure_fingerprint<3>(arrays...); },
                              structure_arrays(a));

    // Where each entry goes: its owner under the target (every replica of a replicated one).
    const auto row_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, mine.rows);
    const auto col_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, mine.cols);
    const auto map_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.col_map());
    const int me = comm.rank();
    const int ranks = comm.size();
    struct coordinate {
      global_index row, col;  // of A^T
    };
    std::vector<std::vector<std::size_t>> order(static_cast<std::size_t>(ranks));
    std::vector<coordinate> global(row_h.extent(0));
    for (std::size_t e = 0; e < row_h.extent(0); ++e) {
      const global_index i = a.mapping().to_global(me, row_h(e), 0).row;
      const global_index j = map_h(static_cast<std::size_t>(col_h(e)));
      global[e] = {j, i};
      if constexpr (replicated_mapping<mapping_type>) {
        if (a.mapping().owner(i, j) != me) continue;  // primaries send; replicas hold copies
        for (int r : target_->replicas(j, i)) order[static_cast<std::size_t>(r)].push_back(e);
      } else {
        order[static_cast<std::size_t>(target_->owner(j, i))].push_back(e);
      }
    }
    bucket_builder<coordinate> outgoing(ranks);
    for (int r = 0; r < ranks; ++r) outgoing.count(r, order[static_cast<std::size_t>(r)].size());
    outgoing.allocate();
    for (int r = 0; r < ranks; ++r) {
      for (std::size_t e : order[static_cast<std::size_t>(r)]) {
        outgoing.push(r, global[e]);
        send_order_.push_back(e);
      }
      if (r != me) moved_ += order[static_cast<std::size_t>(r)].size();
    }
    auto coordinates = std::move(outgoing).finish();
    const auto arrived = exchange_records(typename Policy::backend_type{}, comm, coordinates);
    // Every apply's values travel as the coordinates did: known sizes, not agreed again.
    values_ = planned_exchange(std::move(coordinates.offsets), arrived.offsets);

    // A^T's structure as CSR, and the position of every arriving value in it.
    triplets<T> structure;
    structure.reserve(arrived.data.size());
    for (const auto& c : arrived.data) structure.push_back(c.row, c.col, T{});
    shape_.emplace(detail::assemble_owned<T, rows_policy>(comm, *target_, structure, combine::any{}));
    const auto ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, shape_->local().row_ptr);
    const auto idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, shape_->local().col_idx);
    const auto cmap = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, shape_->col_map());
    const global_index* cmap_begin = cmap.data();
    const global_index* cmap_end = cmap.data() + cmap.extent(0);
    position_.resize(arrived.data.size());
    for (std::size_t k = 0; k < arrived.data.size(); ++k) {
      const auto& c = arrived.data[k];
      const auto lr = static_cast<std::size_t>(target_->to_local(c.row, c.col).row);
      const auto lc = static_cast<local_index>(std::lower_bound(cmap_begin, cmap_end, c.col) - cmap_begin);
      const local_index* first = idx.data() + ptr(lr);
      const local_index* last = idx.data() + ptr(lr + 1);
      position_[k] = static_cast<std::size_t>(std::lower_bound(first, last, lc) - idx.data());
    }
  }

  /// A^T for an A with the structure and distribution of the plan's (collective; traffic
  /// counted under "transpose": the moved values, 8 bytes each; every size is the plan's, so no
  /// size messages where the backend has exchange_planned).
  [[nodiscard]] dist_matrix<T, Policy> apply(const dist_matrix<T, Policy>& a) {
    const auto& comm = a.comm();
    const auto mine = local_coordinates(a);
    comm.collectively([&] {
      TESSERA_REQUIRE(fits(a),
                      invalid_argument,
                      "transpose_plan: A's structure or distribution is not what the plan was made for; make a new "
                      "plan");
    });
    const stats_scope scope(comm, "transpose");
    const auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, mine.values);
    auto outgoing = values_.send_buffer<T>();
    for (std::size_t k = 0; k < send_order_.size(); ++k) outgoing.data[k] = vals(send_order_[k]);
    const auto arrived = exchange_planned(typename Policy::backend_type{}, comm, outgoing, values_);
    Kokkos::View<T*, memory_space> result_values(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::transpose_plan::values")),
        position_.size());
    auto host = Kokkos::create_mirror_view(result_values);
    for (std::size_t k = 0; k < position_.size(); ++k) host(position_[k]) = arrived.data[k];
    tessera::detail::deep_copy(result_values, host);
    auto block = shape_->local();
    block.values = result_values;
    // A^T's structure is the plan's: the result shares it, and the plans kept with it (an spmm by
    // A^T in the same iteration reuses its plan).
    dist_matrix<T, rows_policy> t(detail::assembled_block, *shape_, block);
    if constexpr (std::same_as<storage, csr>)
      return t;
    else
      return convert<storage>(t);
  }

  /// Whether `a` has the structure and distribution the plan was made for (not collective: this
  /// rank's answer; apply and transpose_plan_for agree over the ranks). O(nnz) hash of the structure.
  [[nodiscard]] bool fits(const dist_matrix<T, Policy>& a) const {
    if (!(a.mapping() == mapping_)) return false;
    return std::apply([&](const auto&... arrays) { return fingerprint_.matches(arrays...); }, structure_arrays(a));
  }

  /// Values this rank sends per apply to other ranks (each once; to every replica of a
  /// replicated A^T); its own stay.
  [[nodiscard]] std::size_t values_moved() const noexcept { return moved_; }

 private:
  struct coordinates {
    Kokkos::View<local_index*, memory_space> rows, cols;
    Kokkos::View<T*, memory_space> values;
  };
  // A's local entries in its storage's COO order (the order values are sent in).
  // A's structure in the arrays its storage keeps (a matrix on the same arrays, such as scale(A) or
  // A with new values, is recognised without reading them), or as coordinates for a user's storage.
  static auto structure_arrays(const dist_matrix<T, Policy>& a) {
    using block = typename dist_matrix<T, Policy>::local_block_type;
    const auto& b = a.local();
    if constexpr (compressed_row_block<block>) {
      return std::tuple{b.row_ptr, b.col_idx, a.col_map()};
    } else if constexpr (compressed_column_block<block>) {
      return std::tuple{b.col_ptr, b.row_idx, a.col_map()};
    } else if constexpr (coordinate_block<block>) {
      return std::tuple{b.row_idx, b.col_idx, a.col_map()};
    } else {
      const auto mine = local_coordinates(a);
      return std::tuple{mine.rows, mine.cols, a.col_map()};
    }
  }

  static coordinates local_coordinates(const dist_matrix<T, Policy>& a) {
    const execution_space space{};
    const auto coo = storage::to_coo(space, a.local());
    space.fence();
    return {coo.row_idx, coo.col_idx, coo.values};
  }

  mapping_type mapping_;
  std::optional<mapping_type> target_;
  mutable detail::structure_fingerprint<3> fingerprint_;  // remembers arrays that matched
  std::vector<std::size_t> send_order_, position_;  ///< A's entries in send order; where arrivals land
  planned_exchange values_;
  std::size_t moved_ = 0;
  std::optional<dist_matrix<T, rows_policy>> shape_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_TRANSPOSE_PLAN_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_TRANSPOSE_PLAN_HPP
#endif
