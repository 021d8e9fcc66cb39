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

#include "../../comm/buckets.hpp"
#include "../../comm/communicator.hpp"
#include "../../concepts/distribution.hpp"
#include "../../core/error.hpp"
#include "../../matrix/dist_dense.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../matrix/local_triplets.hpp"
#include "../../matrix/to_view.hpp"
#include "../detail/operand_checks.hpp"
#include "layered_grid.hpp"
#include "local_product.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

namespace tessera::detail {

/// out(r, t) = sum over e in row r of value(e) * halo(column(e), t): the local product of the share.
template <class ExecSpace, class T, class MemorySpace>
void multiply_rows(const Kokkos::View<const offset_type*, MemorySpace>& ptr,
                   const Kokkos::View<const local_index*, MemorySpace>& col,
                   const Kokkos::View<const T*, MemorySpace>& val,
                   const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& halo,
                   const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& out) {
  const auto k = out.extent(1);
  Kokkos::parallel_for(
      "tessera::spmm_grid::rows", Kokkos::RangePolicy<ExecSpace>(0, out.extent(0)), KOKKOS_LAMBDA(const std::size_t r) {
        for (std::size_t t = 0; t < k; ++t) out(r, t) = T{};
        for (offset_type e = ptr(r); e < ptr(r + 1); ++e) {
          const auto c = static_cast<std::size_t>(col(e));
          const T v = val(e);
          for (std::size_t t = 0; t < k; ++t) out(r, t) += v * halo(c, t);
        }
      });
  ExecSpace().fence();
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
/// more (k values each), added in rank order. A's values may change between applies; its
/// structure may not.
template <matrix_value T, matrix_policy PA, matrix_policy PX>
class grid_spmm_plan {
 public:
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

    // The distinct columns, grouped by X's owner (ascending within an owner): the halo's order,
    // so each owner's answer lands in one contiguous run of the halo.
    std::vector<global_index> needed(share.cols.begin(), share.cols.end());
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    std::vector<std::size_t> halo_of_needed(needed.size());
    {
      std::vector<std::size_t> by_owner(needed.size());
      std::iota(by_owner.begin(), by_owner.end(), std::size_t{0});
      std::stable_sort(by_owner.begin(), by_owner.end(), [&](std::size_t u, std::size_t v) {
        return x_rows_.row_owner(needed[u]) < x_rows_.row_owner(needed[v]);
      });
      for (std::size_t h = 0; h < by_owner.size(); ++h) halo_of_needed[by_owner[h]] = h;
      halo_rows_ = needed.size();
      // Each owner learns the local rows of X it serves this rank, in halo order.
      bucket_builder<std::byte> asks(ranks);
      for (std::size_t h : by_owner) asks.count(x_rows_.row_owner(needed[h]), sizeof(global_index));
      asks.allocate();
      for (std::size_t h : by_owner)
        std::memcpy(asks.claim(x_rows_.row_owner(needed[h]), sizeof(global_index)), &needed[h], sizeof(global_index));
      const auto asked = backend.exchange(comm_, std::move(asks).finish());
      serve_offsets_.assign(static_cast<std::size_t>(ranks) + 1, 0);
      for (int r = 0; r < ranks; ++r) {
        const auto bucket = asked.bucket(r);
        for (std::size_t at = 0; at < bucket.size(); at += sizeof(global_index)) {
          global_index j = 0;
          std::memcpy(&j, bucket.data() + at, sizeof j);
          serve_rows_.push_back(static_cast<local_index>(x_rows_.local_row(j)));
        }
        serve_offsets_[static_cast<std::size_t>(r) + 1] = serve_rows_.size();
      }
    }

    // The share as CSR over its distinct rows, columns as halo positions, values as positions
    // among the held entries (read again at every apply).
    const auto grouped = detail::group_by_row(share);
    partial_rows_ = grouped.rows;
    std::vector<local_index> col(share.size());
    value_of_.resize(share.size());
    for (std::size_t e = 0; e < share.size(); ++e) {
      const std::size_t s = grouped.order[e];
      const auto n = static_cast<std::size_t>(std::lower_bound(needed.begin(), needed.end(), share.cols[s]) - needed.begin());
      col[e] = static_cast<local_index>(halo_of_needed[n]);
      value_of_[e] = share_of_held[s];
    }
    ptr_ = to_view<offset_type, mem>(grouped.ptr, "tessera::spmm_grid::ptr");
    col_ = to_view<local_index, mem>(col, "tessera::spmm_grid::col");

    // Partial rows grouped by Y's owner; each owner learns which of its rows arrive from whom.
    send_order_.resize(partial_rows_.size());
    std::iota(send_order_.begin(), send_order_.end(), std::size_t{0});
    std::stable_sort(send_order_.begin(), send_order_.end(), [&](std::size_t u, std::size_t v) {
      return y_rows_.row_owner(partial_rows_[u]) < y_rows_.row_owner(partial_rows_[v]);
    });
    send_counts_.assign(static_cast<std::size_t>(ranks), 0);
    for (global_index i : partial_rows_) ++send_counts_[static_cast<std::size_t>(y_rows_.row_owner(i))];
    bucket_builder<std::byte> tell(ranks);
    for (std::size_t r : send_order_) tell.count(y_rows_.row_owner(partial_rows_[r]), sizeof(global_index));
    tell.allocate();
    for (std::size_t r : send_order_)
      std::memcpy(tell.claim(y_rows_.row_owner(partial_rows_[r]), sizeof(global_index)), &partial_rows_[r],
                  sizeof(global_index));
    const auto told = backend.exchange(comm_, std::move(tell).finish());
    for (std::size_t at = 0; at < told.data.size(); at += sizeof(global_index)) {
      global_index i = 0;
      std::memcpy(&i, told.data.data() + at, sizeof i);
      receive_rows_.push_back(static_cast<local_index>(y_rows_.local_row(i)));
    }
  }

  /// Y = A * X (collective). Traffic counted under "spmm": k values per remote row of X fetched
  /// and per remote partial row of Y sent, in two exchanges.
  void apply(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x, dist_dense<T, PX>& y) const {
    const stats_scope scope(comm_, "spmm");
    const typename PA::backend_type backend{};
    const int ranks = comm_.size();
    const auto k = static_cast<std::size_t>(k_);
    const auto held = comm_.collectively([&] { return detail::held_triplets(a); });
    comm_.collectively([&] {
      detail::require_same_ranks("spmm", comm_, a.comm(), "A");
      detail::require_same_ranks("spmm", comm_, x.comm(), "X");
      detail::require_same_ranks("spmm", comm_, y.comm(), "Y");
      TESSERA_REQUIRE(held.size() == held_entries(), invalid_argument,
                      "spmm: A holds {} entries on rank {} but the plan was made for {}; a changed structure "
                      "needs a new plan",
                      held.size(), comm_.rank(), held_entries());
    });
    std::vector<T> values(value_of_.size());
    for (std::size_t e = 0; e < values.size(); ++e) values[e] = held.values[value_of_[e]];

    // X's rows to the ranks that asked, in the order they asked.
    const auto x_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x.local());
    bucket_builder<std::byte> answers(ranks);
    for (int r = 0; r < ranks; ++r)
      answers.count(r, (serve_offsets_[static_cast<std::size_t>(r) + 1] - serve_offsets_[static_cast<std::size_t>(r)]) *
                           k * sizeof(T));
    answers.allocate();
    for (int r = 0; r < ranks; ++r)
      for (std::size_t s = serve_offsets_[static_cast<std::size_t>(r)]; s < serve_offsets_[static_cast<std::size_t>(r) + 1]; ++s) {
        std::byte* to = answers.claim(r, k * sizeof(T));
        if (k > 0) std::memcpy(to, &x_host(static_cast<std::size_t>(serve_rows_[s]), 0), k * sizeof(T));
      }
    const auto answered = backend.exchange(comm_, std::move(answers).finish());
    // Answers arrive owner by owner in halo order: the halo is their concatenation.
    Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> halo_host("tessera::spmm_grid::halo", halo_rows_, k);
    if (!answered.data.empty()) std::memcpy(halo_host.data(), answered.data.data(), answered.data.size());

    Kokkos::View<T**, Kokkos::LayoutRight, mem> partial("tessera::spmm_grid::partial", partial_rows_.size(), k);
    if (!partial_rows_.empty()) {
      const auto halo = Kokkos::create_mirror_view_and_copy(mem{}, halo_host);
      detail::multiply_rows<exec, T, mem>(ptr_, col_, to_view<T, mem>(values, "tessera::spmm_grid::val"), halo, partial);
    }
    const auto partial_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, partial);

    // Partial rows to Y's owners (values only: the owners know the rows), added in rank order so
    // the result does not depend on arrival order.
    bucket_builder<std::byte> sums(ranks);
    for (int r = 0; r < ranks; ++r) sums.count(r, send_counts_[static_cast<std::size_t>(r)] * k * sizeof(T));
    sums.allocate();
    for (std::size_t r : send_order_) {
      std::byte* at = sums.claim(y_rows_.row_owner(partial_rows_[r]), k * sizeof(T));
      if (k > 0) std::memcpy(at, &partial_host(r, 0), k * sizeof(T));
    }
    const auto summed = backend.exchange(comm_, std::move(sums).finish());
    Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> y_host("tessera::spmm_grid::y", y.local().extent(0), k);
    std::vector<T> row(k);
    for (std::size_t t = 0; t < receive_rows_.size(); ++t) {
      const auto li = static_cast<std::size_t>(receive_rows_[t]);
      if (k > 0) std::memcpy(row.data(), summed.data.data() + t * k * sizeof(T), k * sizeof(T));
      for (std::size_t v = 0; v < k; ++v) y_host(li, v) += row[v];
    }
    Kokkos::deep_copy(y.local(), y_host);
  }

  /// Whether this plan is the one for X and Y on these row distributions with k columns.
  [[nodiscard]] bool fits(const x_mapping& x_rows, const x_mapping& y_rows, global_index k) const {
    return k == k_ && x_rows == x_rows_ && y_rows == y_rows_;
  }
  /// Rows of X this rank receives per product (its own included), and partial rows of Y it sends.
  [[nodiscard]] std::size_t halo_rows() const noexcept { return halo_rows_; }
  [[nodiscard]] std::size_t partial_rows() const noexcept { return partial_rows_.size(); }

 private:
  [[nodiscard]] std::size_t held_entries() const noexcept { return held_entries_; }

  communicator comm_;
  x_mapping x_rows_, y_rows_;
  global_index k_ = 0;
  std::size_t held_entries_ = 0;
  std::size_t halo_rows_ = 0;
  std::vector<local_index> serve_rows_;      // local rows of X this rank sends, grouped by requester
  std::vector<std::size_t> serve_offsets_;   // per requester + 1
  std::vector<global_index> partial_rows_;   // the share's distinct rows, ascending
  std::vector<std::size_t> value_of_;        // per CSR entry: its position among the held entries
  Kokkos::View<offset_type*, mem> ptr_;
  Kokkos::View<local_index*, mem> col_;
  std::vector<std::size_t> send_order_;      // partial rows grouped by Y's owner
  std::vector<std::size_t> send_counts_;     // per Y owner
  std::vector<local_index> receive_rows_;    // local rows of Y, in the order their partial rows arrive
};

/// The plan for A * X into Y, made on first use and kept in A.plan_cache() (collective).
template <matrix_value T, matrix_policy PA, matrix_policy PX>
grid_spmm_plan<T, PA, PX>& grid_spmm_plan_for(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x,
                                              const dist_dense<T, PX>& y) {
  // Every rank holds the same plans for the same distributions, so all find one or none. A plan
  // fits only X's and Y's own row distributions, so operands of another shape make a new plan,
  // whose checks agree; a product through a kept plan agrees once, in apply.
  auto& made = a.plan_cache().template entries<std::shared_ptr<grid_spmm_plan<T, PA, PX>>>();
  for (const auto& plan : made)
    if (plan->fits(x.mapping(), y.mapping(), x.num_vectors())) return *plan;
  const auto& comm = a.comm();
  comm.collectively([&] {
    detail::require_same_ranks("spmm", comm, x.comm(), "X");
    detail::require_same_ranks("spmm", comm, y.comm(), "Y");
    TESSERA_REQUIRE(a.num_cols() == x.num_rows(), dimension_mismatch, "spmm: A is {} x {} but X has {} rows",
                    a.num_rows(), a.num_cols(), x.num_rows());
    TESSERA_REQUIRE(y.num_rows() == a.num_rows() && y.num_vectors() == x.num_vectors(), dimension_mismatch,
                    "spmm: Y is {} x {} but A * X is {} x {}", y.num_rows(), y.num_vectors(), a.num_rows(),
                    x.num_vectors());
  });
  made.push_back(std::make_shared<grid_spmm_plan<T, PA, PX>>(a, x.mapping(), y.mapping(), x.num_vectors()));
  return *made.back();
}

}  // namespace tessera

namespace tessera::detail {

/// Y = A * X (collective), through the cached plan. Traffic counted under "spmm".
template <matrix_value T, matrix_policy PA, matrix_policy PX>
void multiply_dense_on_grid(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x, dist_dense<T, PX>& y) {
  grid_spmm_plan_for(a, x, y).apply(a, x, y);
}

}  // namespace tessera::detail
