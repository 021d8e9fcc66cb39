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
/// m / p rows). Both moves are personalised exchanges through A's backend. Words per rank:
/// k n / q fetched and k m / p reduced, against k n for the 1-D product of a power-law A.

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
#include <numeric>
#include <vector>

namespace tessera::detail {

/// The entries of A this rank multiplies: all it holds, or under a replicated distribution the
/// rows of its grid row's share.
template <matrix_value T, matrix_policy Policy>
triplets<T> work_share(const dist_matrix<T, Policy>& a) {
  auto held = held_triplets(a);
  using M = typename Policy::mapping_type;
  if constexpr (replicated_mapping<M> && grid_mapping<M>) {
    const int my_row = a.mapping().grid().row_of(a.comm().rank());
    held.retain([&](global_index i, global_index, const T&) { return grid_row_of_row(a.mapping(), i) == my_row; });
  }
  return held;
}

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

/// Y = A * X (collective). Traffic counted under "spmm".
template <matrix_value T, matrix_policy PA, matrix_policy PX>
void multiply_dense_on_grid(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x, dist_dense<T, PX>& y) {
  using exec = typename PA::execution_space;
  using mem = typename PA::memory_space;
  const auto& comm = a.comm();
  comm.collectively([&] {
    require_same_ranks("spmm", comm, x.comm(), "X");
    require_same_ranks("spmm", comm, y.comm(), "Y");
    TESSERA_REQUIRE(a.num_cols() == x.num_rows(), dimension_mismatch, "spmm: A is {} x {} but X has {} rows",
                    a.num_rows(), a.num_cols(), x.num_rows());
    TESSERA_REQUIRE(y.num_rows() == a.num_rows() && y.num_vectors() == x.num_vectors(), dimension_mismatch,
                    "spmm: Y is {} x {} but A * X is {} x {}", y.num_rows(), y.num_vectors(), a.num_rows(),
                    x.num_vectors());
  });
  const stats_scope scope(comm, "spmm");
  const typename PA::backend_type backend{};
  const int ranks = comm.size();
  const auto k = static_cast<std::size_t>(x.num_vectors());

  // The share, by row, and the distinct columns it names (the rows of X to fetch).
  const auto share = comm.collectively([&] { return work_share(a); });
  std::vector<global_index> needed(share.cols.begin(), share.cols.end());
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());

  // Requests to X's owners, then their rows back (each in one personalised exchange).
  bucket_builder<std::byte> asks(ranks);
  for (global_index j : needed) asks.count(x.mapping().row_owner(j), sizeof(global_index));
  asks.allocate();
  for (global_index j : needed)
    std::memcpy(asks.claim(x.mapping().row_owner(j), sizeof(global_index)), &j, sizeof(global_index));
  const auto asked = backend.exchange(comm, std::move(asks).finish());
  const auto x_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x.local());
  bucket_builder<std::byte> answers(ranks);
  for (int r = 0; r < ranks; ++r) answers.count(r, asked.bucket(r).size() / sizeof(global_index) * k * sizeof(T));
  answers.allocate();
  for (int r = 0; r < ranks; ++r) {
    const auto bucket = asked.bucket(r);
    for (std::size_t at = 0; at < bucket.size(); at += sizeof(global_index)) {
      global_index j = 0;
      std::memcpy(&j, bucket.data() + at, sizeof j);
      const auto row = static_cast<std::size_t>(x.mapping().local_row(j));
      std::byte* to = answers.claim(r, k * sizeof(T));
      if (k > 0) std::memcpy(to, &x_host(row, 0), k * sizeof(T));
    }
  }
  const auto answered = backend.exchange(comm, std::move(answers).finish());
  // Requests went out owner by owner in ascending order of columns: walk them in the same order.
  std::vector<std::size_t> cursor(static_cast<std::size_t>(ranks), 0);
  Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> halo_host("tessera::spmm_grid::halo", needed.size(), k);
  for (std::size_t c = 0; c < needed.size(); ++c) {
    const int owner = x.mapping().row_owner(needed[c]);
    auto& at = cursor[static_cast<std::size_t>(owner)];
    if (k > 0) std::memcpy(&halo_host(c, 0), answered.bucket(owner).data() + at, k * sizeof(T));
    at += k * sizeof(T);
  }

  // The share as CSR over its distinct rows, columns as positions in `needed`.
  const auto grouped = group_by_row(share);
  const auto& rows = grouped.rows;
  const auto& ptr = grouped.ptr;
  std::vector<local_index> col(share.size());
  std::vector<T> val(share.size());
  for (std::size_t e = 0; e < share.size(); ++e) {
    const std::size_t s = grouped.order[e];
    col[e] = static_cast<local_index>(std::lower_bound(needed.begin(), needed.end(), share.cols[s]) - needed.begin());
    val[e] = share.values[s];
  }
  Kokkos::View<T**, Kokkos::LayoutRight, mem> partial("tessera::spmm_grid::partial", rows.size(), k);
  if (!rows.empty()) {
    const auto halo = Kokkos::create_mirror_view_and_copy(mem{}, halo_host);
    multiply_rows<exec, T, mem>(to_view<offset_type, mem>(ptr, "tessera::spmm_grid::ptr"),
                                to_view<local_index, mem>(col, "tessera::spmm_grid::col"),
                                to_view<T, mem>(val, "tessera::spmm_grid::val"), halo, partial);
  }
  const auto partial_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, partial);

  // Partial rows to Y's owners: row index, then its k values.
  const std::size_t record = sizeof(global_index) + k * sizeof(T);
  bucket_builder<std::byte> sums(ranks);
  for (global_index i : rows) sums.count(y.mapping().row_owner(i), record);
  sums.allocate();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::byte* at = sums.claim(y.mapping().row_owner(rows[r]), record);
    std::memcpy(at, &rows[r], sizeof(global_index));
    if (k > 0) std::memcpy(at + sizeof(global_index), &partial_host(r, 0), k * sizeof(T));
  }
  const auto summed = backend.exchange(comm, std::move(sums).finish());
  // Added in the order of source ranks: the result does not depend on arrival order.
  Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> y_host("tessera::spmm_grid::y", y.local().extent(0), k);
  std::vector<T> values(k);
  for (std::size_t at = 0; at < summed.data.size(); at += record) {
    global_index i = 0;
    std::memcpy(&i, summed.data.data() + at, sizeof i);
    if (k > 0) std::memcpy(values.data(), summed.data.data() + at + sizeof i, k * sizeof(T));
    const auto li = static_cast<std::size_t>(y.mapping().local_row(i));
    for (std::size_t t = 0; t < k; ++t) y_host(li, t) += values[t];
  }
  Kokkos::deep_copy(y.local(), y_host);
}

}  // namespace tessera::detail
