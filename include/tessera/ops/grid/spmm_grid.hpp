#pragma once
/// @file
/// SpMM Y = A * X for an A on any distribution (grids, replicated columns, a user's) and dense X
/// and Y on any whole-row distribution: the 2-D product.
///
/// Each rank multiplies the entries it holds (under a replicated A, its grid row's share of the
/// rows of the column block every replica holds: 1.5-D, the replicas split the work instead of
/// repeating it) by the rows of X their columns name, fetched from X's owners (on a p x q grid:
/// the n / q rows of its column block, SUMMA's broadcast of X along grid columns), and sends its
/// partial rows of Y to Y's owners, which add them in rank order (the reduction along grid rows:
/// m / p rows). Both moves are personalised exchanges through A's backend, planned once
/// (grid_spmm_plan) so a product moves values only. With X and Y laid out along A's grid
/// (grid_aligned_rows) every fetch stays within a grid column and every sum within a grid row.
/// Words per rank: k n / q fetched and k m / p reduced, against k n for the 1-D product of a
/// power-law A.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_SPMM_GRID_HPP
#endif

#include "../../comm/buckets.hpp"
#include "../../comm/communicator.hpp"
#include "../../comm/planned_exchange.hpp"
#include "../../concepts/backend.hpp"
#include "../../concepts/distribution.hpp"
#include "../../concepts/storage.hpp"
#include "../../core/error.hpp"
#include "../../kernels/spmm_balanced.hpp"
#include "../../kernels/spmm_rows.hpp"
#include "../../matrix/dist_dense.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../matrix/local_triplets.hpp"
#include "../../matrix/to_view.hpp"
#include "../detail/operand_checks.hpp"
#include "../kept_plans.hpp"
#include "../../kernels/gather_rows.hpp"
#include "layered_grid.hpp"
#include "local_product.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

namespace tessera::detail {

/// src's rows rows(0), rows(1), ... written one after the other into host bytes (an exchange's buffer).
template <class ExecSpace, class T, class MemorySpace, class Rows>
void gather_rows_to_bytes(const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& src, const Rows& rows,
                          std::byte* dst) {
  using host_rows = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  kernels::gather_rows_to_host<ExecSpace>(src, rows, host_rows(reinterpret_cast<T*>(dst), rows.extent(0), src.extent(1)));
}

/// values(e) = from(at(e)): the share's values in the plan's order, read from A's storage.
template <class ExecSpace, class T, class MemorySpace>
[[nodiscard]] Kokkos::View<T*, MemorySpace> gather_values(const Kokkos::View<const T*, MemorySpace>& from,
                                                         const Kokkos::View<const std::size_t*, MemorySpace>& at) {
  const Kokkos::View<T*, MemorySpace> values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spmm_grid::values")), at.extent(0));
  Kokkos::parallel_for(
      "tessera::spmm_grid::values", Kokkos::RangePolicy<ExecSpace>(0, at.extent(0)),
      KOKKOS_LAMBDA(const std::size_t e) { values(e) = from(at(e)); });
  ExecSpace().fence();
  return values;
}

/// y(i, :) = the sum of arrived(source(s), :) over s in [ptr(i), ptr(i + 1)), added in that order
/// (the senders' rank order), so Y does not depend on how the threads or the messages ran.
template <class ExecSpace, class T, class MemorySpace>
void sum_partial_rows(const Kokkos::View<const std::size_t*, MemorySpace>& ptr,
                      const Kokkos::View<const std::size_t*, MemorySpace>& source,
                      const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& arrived,
                      const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y) {
  const auto k = y.extent(1);
  Kokkos::parallel_for(
      "tessera::spmm_grid::sum_partial_rows", Kokkos::RangePolicy<ExecSpace>(0, y.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) {
        for (std::size_t v = 0; v < k; ++v) y(i, v) = T{};
        for (std::size_t s = ptr(i); s < ptr(i + 1); ++s) {
          const auto from = source(s);
          for (std::size_t v = 0; v < k; ++v) y(i, v) += arrived(from, v);
        }
      });
  ExecSpace().fence();
}

/// rows x k values that arrived in host bytes, as a View of `MemorySpace` (the bytes themselves
/// where that space is the host's).
template <class T, class MemorySpace>
[[nodiscard]] Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace> rows_from_bytes(const std::vector<std::byte>& bytes,
                                                                                       std::size_t rows, std::size_t k) {
  using host_rows =
      Kokkos::View<const T**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  TESSERA_REQUIRE(bytes.size() == rows * k * sizeof(T), internal, "spmm: {} bytes arrived for {} rows of {} values",
                  bytes.size(), rows, k);
  const host_rows arrived(reinterpret_cast<const T*>(bytes.data()), rows, k);
  return Kokkos::create_mirror_view_and_copy(MemorySpace{}, arrived);
}

}  // namespace tessera::detail

namespace tessera {

/// The plan of Y = A * X for an A on any distribution and X and Y on whole-row distributions: for
/// one structure of A, one row distribution of X and of Y, and k columns.
///
/// The inspector (collective) does once what does not change between products: it picks the
/// share, compresses it by row with its columns as positions in the halo, tells X's owners which
/// of their rows this rank needs and Y's owners which partial rows they will receive (8 bytes per
/// remote row, two exchanges). An apply then moves values only: X's rows from their owners in one
/// exchange (k values each), the local product, and the partial rows of Y to their owners in one
/// more (k values each), added in rank order. Both sides know every size from the plan, so the
/// applies' exchanges skip the size all-to-all where the backend can (exchanges_planned). A's
/// values may change between applies; its structure may not.
template <matrix_value T, matrix_policy PA, matrix_policy PX>
class grid_spmm_plan {
  static_assert(!tile_storage<typename PA::storage_type>,
                "tessera::grid_spmm_plan reads A's entries through its storage's to_coo; a tile-stored A is "
                "multiplied through its elements (to_elements, as spmm does)");
  static_assert(std::same_as<typename PA::memory_space, typename PX::memory_space>,
                "tessera::spmm of a grid-distributed A needs X and Y in A's memory space (the policies of A and of "
                "X and Y name different Kokkos memory spaces; deep_copy X into a dist_dense of A's space first)");

 public:
  /// A plan stays where it was made (it holds windows, a shared context and registrations): it
  /// is neither copied nor moved, so no moved-from plan exists. Share it by reference, through
  /// the plans kept with a matrix (kept_plans.hpp) or a std::shared_ptr.
  grid_spmm_plan(const grid_spmm_plan&) = delete;
  grid_spmm_plan& operator=(const grid_spmm_plan&) = delete;

  using x_mapping = typename PX::mapping_type;
  using exec = typename PA::execution_space;
  using mem = typename PA::memory_space;

  /// Inspect (collective). Traffic counted under "spmm".
  grid_spmm_plan(const dist_matrix<T, PA>& a, const x_mapping& x_rows, const x_mapping& y_rows, global_index k)
      : comm_(a.comm()), x_rows_(x_rows), y_rows_(y_rows), k_(k) {
    const stats_scope scope(comm_, "spmm");
    const typename PA::backend_type backend{};
    const int ranks = comm_.size();
    const int me = comm_.rank();

    // The share, and where each of its entries sits among the entries this rank holds.
    const auto held = comm_.collectively([&] { return detail::held_triplets(a); });
    held_entries_ = held.size();
    triplets<T> share;
    std::vector<std::size_t> share_of_held;
    const auto mine = [&](global_index i) {
      if constexpr (replicated_mapping<typename PA::mapping_type> && grid_mapping<typename PA::mapping_type>)
        return detail::grid_row_of_row(a.mapping(), i) == a.mapping().grid().row_of(me);
      else
        return true;
    };
    for (std::size_t e = 0; e < held.size(); ++e)
      if (mine(held.rows[e])) {
        share.push_back(held.rows[e], held.cols[e], held.values[e]);
        share_of_held.push_back(e);
      }

    // The distinct columns: each reads its row of X in place where this rank owns it, else from
    // the halo, whose rows are grouped by owner (ascending within an owner) so each owner's
    // answer lands in one contiguous run of it.
    std::vector<global_index> needed(share.cols.begin(), share.cols.end());
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    std::vector<std::uint8_t> source_local(needed.size(), 0);
    std::vector<local_index> source_row(needed.size(), 0);
    std::vector<local_index> serve_rows;
    {
      std::vector<std::size_t> remote;
      for (std::size_t n = 0; n < needed.size(); ++n) {
        if (x_rows_.row_owner(needed[n]) == me) {
          source_local[n] = 1;
          source_row[n] = static_cast<local_index>(x_rows_.local_row(needed[n]));
        } else {
          remote.push_back(n);
        }
      }
      std::stable_sort(remote.begin(), remote.end(), [&](std::size_t u, std::size_t v) {
        return x_rows_.row_owner(needed[u]) < x_rows_.row_owner(needed[v]);
      });
      for (std::size_t h = 0; h < remote.size(); ++h) source_row[remote[h]] = static_cast<local_index>(h);
      halo_rows_ = remote.size();
      // Each owner learns the local rows of X it serves this rank, in halo order; every apply's
      // answers travel back along the inverse of this request, a row of X for each row asked.
      bucket_builder<std::byte> asks(ranks);
      for (std::size_t n : remote) asks.count(x_rows_.row_owner(needed[n]), sizeof(global_index));
      asks.allocate();
      for (std::size_t n : remote)
        std::memcpy(asks.claim(x_rows_.row_owner(needed[n]), sizeof(global_index)), &needed[n], sizeof(global_index));
      auto request = std::move(asks).finish();
      const auto asked = backend.exchange(comm_, request);
      const planned_exchange requests(bytes_to_rows(request.offsets), bytes_to_rows(asked.offsets));
      x_answers_ = requests.inverse().scaled(row_bytes());
      for (int r = 0; r < ranks; ++r) {
        const auto bucket = asked.bucket(r);
        for (std::size_t at = 0; at < bucket.size(); at += sizeof(global_index)) {
          global_index j = 0;
          std::memcpy(&j, bucket.data() + at, sizeof j);
          serve_rows.push_back(static_cast<local_index>(x_rows_.local_row(j)));
        }
      }
    }

    // The share as CSR over its distinct rows, each entry naming the row of X it reads
    // (kernels::x_source_of), values as positions among the held entries (read again at every apply).
    const auto grouped = detail::group_by_row(share);
    partial_rows_ = grouped.rows;
    std::vector<local_index> x_source(share.size());
    std::vector<std::size_t> value_of(share.size());
    for (std::size_t e = 0; e < share.size(); ++e) {
      const std::size_t s = grouped.order[e];
      const auto n = static_cast<std::size_t>(std::lower_bound(needed.begin(), needed.end(), share.cols[s]) - needed.begin());
      x_source[e] = kernels::x_source_of(source_local[n] != 0, source_row[n]);
      value_of[e] = share_of_held[s];
    }
    std::vector<local_index> all_rows(partial_rows_.size());
    std::iota(all_rows.begin(), all_rows.end(), local_index{0});
    rows_ = to_view<local_index, mem>(all_rows, "tessera::spmm_grid::rows");
    ptr_ = to_view<offset_type, mem>(grouped.ptr, "tessera::spmm_grid::ptr");
    x_source_ = to_view<local_index, mem>(x_source, "tessera::spmm_grid::x_source");
    value_of_ = to_view<std::size_t, mem>(value_of, "tessera::spmm_grid::value_of");
    serve_rows_ = to_view<local_index, mem>(serve_rows, "tessera::spmm_grid::serve_rows");

    // Partial rows grouped by Y's owner; each owner learns which of its rows arrive from whom.
    std::vector<std::size_t> send_order(partial_rows_.size());
    std::iota(send_order.begin(), send_order.end(), std::size_t{0});
    std::stable_sort(send_order.begin(), send_order.end(), [&](std::size_t u, std::size_t v) {
      return y_rows_.row_owner(partial_rows_[u]) < y_rows_.row_owner(partial_rows_[v]);
    });
    bucket_builder<std::byte> tell(ranks);
    for (std::size_t r : send_order) tell.count(y_rows_.row_owner(partial_rows_[r]), sizeof(global_index));
    tell.allocate();
    for (std::size_t r : send_order)
      std::memcpy(tell.claim(y_rows_.row_owner(partial_rows_[r]), sizeof(global_index)), &partial_rows_[r],
                  sizeof(global_index));
    auto telling = std::move(tell).finish();
    const auto told = backend.exchange(comm_, telling);
    // Every apply's partial rows travel as the rows were told: k values for each row named.
    partial_sums_ = planned_exchange(bytes_to_rows(telling.offsets), bytes_to_rows(told.offsets)).scaled(row_bytes());
    send_rows_ = to_view<std::size_t, mem>(send_order, "tessera::spmm_grid::send_rows");

    // What each local row of Y adds up: the partial rows that arrive for it, in arrival (rank) order.
    const auto y_local_rows = static_cast<std::size_t>(y_rows_.extents(me).rows);
    const std::size_t arrivals = told.data.size() / sizeof(global_index);
    std::vector<std::size_t> sum_ptr(y_local_rows + 1, 0), row_of_arrival(arrivals);
    for (std::size_t t = 0; t < arrivals; ++t) {
      global_index i = 0;
      std::memcpy(&i, told.data.data() + t * sizeof(global_index), sizeof i);
      row_of_arrival[t] = static_cast<std::size_t>(y_rows_.local_row(i));
      ++sum_ptr[row_of_arrival[t] + 1];
    }
    std::partial_sum(sum_ptr.begin(), sum_ptr.end(), sum_ptr.begin());
    std::vector<std::size_t> sources(arrivals), cursor(sum_ptr.begin(), sum_ptr.end() - 1);
    for (std::size_t t = 0; t < arrivals; ++t) sources[cursor[row_of_arrival[t]]++] = t;
    arrivals_ = arrivals;
    sum_ptr_ = to_view<std::size_t, mem>(sum_ptr, "tessera::spmm_grid::sum_ptr");
    sum_sources_ = to_view<std::size_t, mem>(sources, "tessera::spmm_grid::sum_sources");
  }

  /// Y = A * X (collective). Traffic counted under "spmm": k values per remote row of X fetched
  /// and per remote partial row of Y sent, in two exchanges of planned sizes (no size messages
  /// where the backend has exchange_planned).
  void apply(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x, dist_dense<T, PX>& y) const {
    const stats_scope scope(comm_, "spmm");
    const typename PA::backend_type backend{};
    const exec space{};
    const auto k = static_cast<std::size_t>(k_);
    // A's entries in the order the plan listed them (its storage's own order), values only read.
    const auto held = PA::storage_type::to_coo(space, a.local());
    comm_.collectively([&] {
      detail::require_same_ranks("spmm", comm_, a.comm(), "A");
      detail::require_same_ranks("spmm", comm_, x.comm(), "X");
      detail::require_same_ranks("spmm", comm_, y.comm(), "Y");
      TESSERA_REQUIRE(static_cast<std::size_t>(held.nnz()) == held_entries(), invalid_argument,
                      "spmm: A holds {} entries on rank {} but the plan was made for {}; a changed structure "
                      "needs a new plan",
                      held.nnz(), comm_.rank(), held_entries());
    });
    const auto values = detail::gather_values<exec, T, mem>(held.values, value_of_);

    // X's rows to the ranks that asked, in the order they asked.
    auto answers = x_answers_.send_buffer<std::byte>();
    detail::gather_rows_to_bytes<exec, T, mem>(x.local(), serve_rows_, answers.data.data());
    const auto answered = exchange_planned(backend, comm_, answers, x_answers_);
    // Answers arrive owner by owner in halo order: the halo is their concatenation.
    const auto halo = detail::rows_from_bytes<T, mem>(answered.data, halo_rows_, k);

    const Kokkos::View<T**, Kokkos::LayoutRight, mem> partial(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spmm_grid::partial")),
        partial_rows_.size(), k);
    // The node-local kernel of the 1-D product: own rows of X read in place, the rest from the halo.
    kernels::spmm_rows_for_space<exec, T, mem>(space, rows_, rows_state_, ptr_, x_source_, values, x.local(), halo, partial);
    space.fence();

    // Partial rows to Y's owners (values only: the owners know the rows), added in rank order so
    // the result does not depend on arrival order.
    auto sums = partial_sums_.send_buffer<std::byte>();
    detail::gather_rows_to_bytes<exec, T, mem>(partial, send_rows_, sums.data.data());
    const auto summed = exchange_planned(backend, comm_, sums, partial_sums_);
    detail::sum_partial_rows<exec, T, mem>(sum_ptr_, sum_sources_, detail::rows_from_bytes<T, mem>(summed.data, arrivals_, k),
                                           y.local());
  }

  /// Whether this plan is the one for X and Y on these row distributions with k columns.
  [[nodiscard]] bool fits(const x_mapping& x_rows, const x_mapping& y_rows, global_index k) const {
    return k == k_ && x_rows == x_rows_ && y_rows == y_rows_;
  }
  /// Rows of X this rank receives from others per product (its own it reads in place), and partial
  /// rows of Y it makes (those of rows it owns stay here).
  [[nodiscard]] std::size_t halo_rows() const noexcept { return halo_rows_; }
  [[nodiscard]] std::size_t partial_rows() const noexcept { return partial_rows_.size(); }

 private:
  [[nodiscard]] std::size_t held_entries() const noexcept { return held_entries_; }
  [[nodiscard]] std::size_t row_bytes() const noexcept { return static_cast<std::size_t>(k_) * sizeof(T); }
  // Byte offsets of global_index records as record offsets.
  [[nodiscard]] static std::vector<std::size_t> bytes_to_rows(std::vector<std::size_t> offsets) {
    for (auto& at : offsets) at /= sizeof(global_index);
    return offsets;
  }

  communicator comm_;
  x_mapping x_rows_, y_rows_;
  global_index k_ = 0;
  std::size_t held_entries_ = 0;
  std::size_t halo_rows_ = 0;
  Kokkos::View<local_index*, mem> serve_rows_;  // local rows of X this rank sends, grouped by requester
  std::vector<global_index> partial_rows_;   // the share's distinct rows, ascending
  Kokkos::View<std::size_t*, mem> value_of_;  // per CSR entry: its position among the held entries
  Kokkos::View<local_index*, mem> rows_;     // 0, 1, ...: every partial row
  mutable kernels::spmm_rows_state<T, mem> rows_state_;  // the device kernel's schedule, made on the first product
  Kokkos::View<offset_type*, mem> ptr_;
  Kokkos::View<local_index*, mem> x_source_;  // per entry of the share: its row of X, own (>= 0) or halo (~h)
  Kokkos::View<std::size_t*, mem> send_rows_;  // partial rows grouped by Y's owner
  std::size_t arrivals_ = 0;                 // partial rows of Y received per product
  // An apply's two exchanges, in bytes: X's rows this rank answers and receives (the inverse of
  // the requests the inspector sent), the partial rows of Y it sends and receives.
  planned_exchange x_answers_, partial_sums_;
  Kokkos::View<std::size_t*, mem> sum_ptr_;      // per local row of Y: its arrivals ...
  Kokkos::View<std::size_t*, mem> sum_sources_;  // ... as positions in arrival (rank) order
};

/// The plan for A * X into Y, made on first use and kept in A.plan_cache() (collective).
template <matrix_value T, matrix_policy PA, matrix_policy PX>
grid_spmm_plan<T, PA, PX>& grid_spmm_plan_for(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x,
                                              const dist_dense<T, PX>& y) {
  // A plan fits only X's and Y's own row distributions, so operands of another shape make a new
  // plan, whose checks agree (kept_plans.hpp); a product through a kept plan agrees once, in apply.
  const auto& comm = a.comm();
  using plan_type = grid_spmm_plan<T, PA, PX>;
  return kept_plan<plan_type>(
      comm, a.plan_cache(), [&](const plan_type& plan) { return plan.fits(x.mapping(), y.mapping(), x.num_vectors()); },
      [&] {
        comm.collectively([&] {
          detail::require_same_ranks("spmm", comm, x.comm(), "X");
          detail::require_same_ranks("spmm", comm, y.comm(), "Y");
          TESSERA_REQUIRE(a.num_cols() == x.num_rows(), dimension_mismatch, "spmm: A is {} x {} but X has {} rows",
                          a.num_rows(), a.num_cols(), x.num_rows());
          TESSERA_REQUIRE(y.num_rows() == a.num_rows() && y.num_vectors() == x.num_vectors(), dimension_mismatch,
                          "spmm: Y is {} x {} but A * X is {} x {}", y.num_rows(), y.num_vectors(), a.num_rows(),
                          x.num_vectors());
        });
        return std::make_shared<plan_type>(a, x.mapping(), y.mapping(), x.num_vectors());
      });
}

}  // namespace tessera

namespace tessera::detail {

/// Y = A * X (collective), through the cached plan. Traffic counted under "spmm".
template <matrix_value T, matrix_policy PA, matrix_policy PX>
void multiply_dense_on_grid(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x, dist_dense<T, PX>& y) {
  grid_spmm_plan_for(a, x, y).apply(a, x, y);
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_SPMM_GRID_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_SPMM_GRID_HPP
#endif
