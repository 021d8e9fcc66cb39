#pragma once
/// @file
/// The 1-D SpGEMM's fetch of B: the staging windows kept across products (spgemm_workspace), the
/// inspector's schedule of which rows of B the local A references and who owns them
/// (fetch_schedule, made once by spgemm_plan), and the one-sided gets that fetch them.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_FETCH_HPP
#endif

#include "../../comm/communicator.hpp"
#include "../../comm/shared_context.hpp"
#include "../../comm/request.hpp"
#include "../../comm/segment.hpp"
#include "../../concepts/backend.hpp"
#include "../../concepts/distribution.hpp"
#include "../../core/device_algorithms.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../policy.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace tessera::detail {

/// The windows B's rows are staged in for other ranks to get from, kept across products on one
/// communicator (and backend and value type), and grown collectively when a product's B is larger.
///
/// Making a context and three windows per product, then filling fresh shared memory, was a
/// quarter of a Laplacian product (page faults); now only the first product pays them. Windows
/// are sized for the whole of B's local rows, but a product stages only the rows someone fetches
/// (at their own offsets), so untouched pages cost nothing.
template <class T, class Policy>
struct spgemm_workspace {
  using backend_context = typename Policy::backend_type::context;

  explicit spgemm_workspace(const communicator& comm)
      : context(shared_context<typename Policy::backend_type>(comm)) {}

  /// Whether this rank's B does not fit the windows (not collective).
  [[nodiscard]] bool too_small(std::size_t rows, std::size_t nnz) const noexcept {
    return !allocated || rows + 1 > row_capacity || nnz > entry_capacity;
  }

  /// Collective (every rank, once any rank found its windows too small): windows for at least
  /// `rows` rows and `nnz` entries on this rank.
  void grow(std::size_t rows, std::size_t nnz) {
    // The previous product's gets are complete: each rank waited for its own before it
    // entered the allreduce that decided this growth.
    row_capacity = std::max(row_capacity, rows + 1);
    entry_capacity = std::max(entry_capacity, nnz);
    ptr = segment<std::int64_t>{};
    cols = segment<std::int64_t>{};
    values = segment<T>{};
    ptr = context->template allocate<std::int64_t>(row_capacity);
    cols = context->template allocate<std::int64_t>(entry_capacity);
    values = context->template allocate<T>(entry_capacity);
    allocated = true;
  }

  /// The workspace of B's communicator, made collectively on first use; B's plan cache keeps it
  /// alive and the communicator knows it (weakly: the workspace holds the communicator), so every
  /// B on a communicator shares one (collective: every rank asks with the same B).
  template <class Matrix>
  static std::shared_ptr<spgemm_workspace> of(const Matrix& b) {
    auto& held = b.plan_cache().template entries<std::shared_ptr<spgemm_workspace>>();
    if (!held.empty()) return held.front();
    auto& known = b.comm().shared_resources().template entries<std::weak_ptr<spgemm_workspace>>();
    std::erase_if(known, [](const auto& w) { return w.expired(); });
    std::shared_ptr<spgemm_workspace> live = known.empty() ? nullptr : known.front().lock();
    if (!live) {
      live = std::make_shared<spgemm_workspace>(b.comm());
      known.push_back(live);
    }
    held.push_back(live);
    return live;
  }

  std::shared_ptr<backend_context> context;
  segment<std::int64_t> ptr;   ///< B's row pointers
  segment<std::int64_t> cols;  ///< B's columns, global
  segment<T> values;
  std::size_t row_capacity = 0, entry_capacity = 0;
  bool allocated = false;
};

/// Where each row of B that the local A references is: B's own local rows are read in place;
/// the others were fetched one-sided into `ptr`, `cols` (global) and `values`.
template <class T>
struct referenced_rows {
  /// Per local column c of A: B's local row (>= 0), or -(k + 1) for fetched row k. Empty when
  /// local_row_base is set.
  std::vector<local_index> source;
  /// Set where every column of A is one of this rank's rows of B, a contiguous range: column c
  /// is then B's local row A.col_map()(c) - *local_row_base, and the device algorithms compute
  /// that where the column map is (host_sources makes the vector for host code).
  std::optional<global_index> local_row_base;
  std::vector<offset_type> ptr{0};
  std::vector<global_index> cols;
  std::vector<T> values;
};

/// The inspector's half of the 1-D fetch: which rows of B the local A references, which of them
/// other ranks own (as runs of consecutive rows of one owner), and which of this rank's rows of B
/// anyone fetches. It depends on A's column map and B's row split only, so a plan keeps it while
/// values (and B's rows' contents) change.
struct fetch_schedule {
  struct run {
    int owner;
    std::size_t first_row, count, first_fetched;
  };
  /// Per local column c of A: B's local row (>= 0), or -(k + 1) for fetched row k; empty when
  /// local_row_base is set (as in referenced_rows).
  std::vector<local_index> source;
  std::optional<global_index> local_row_base;
  std::vector<run> runs;
  std::size_t fetched = 0;
  /// This rank's rows of B that others fetch: [lo, hi) (empty when hi <= lo).
  std::size_t lo = 0, hi = 0;
  /// Whether any rank fetches anything (the same on every rank).
  bool anyone_fetches = false;
};

/// How many of `columns` lie outside [lo, hi).
template <class ExecSpace, class MemorySpace>
std::size_t columns_outside(const Kokkos::View<const global_index*, MemorySpace>& columns, global_index lo, global_index hi) {
  std::size_t outside = 0;
  Kokkos::parallel_reduce(
      "tessera::spgemm::columns_outside", Kokkos::RangePolicy<ExecSpace>(0, columns.extent(0)),
      KOKKOS_LAMBDA(const std::size_t c, std::size_t& acc) { acc += columns(c) >= lo && columns(c) < hi ? 0 : 1; }, outside);
  return outside;
}

/// Make the fetch schedule of A * B (collective: one allreduce of 2P + 1 integers).
///
/// Fetched rows are owner-major, each owner's ascending, so consecutive rows of an owner are one
/// run whatever the mapping interleaves (row-cyclic B: no two adjacent columns of A on one owner).
template <matrix_value T, matrix_policy Policy>
fetch_schedule schedule_referenced_rows(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b) {
  const auto& comm = a.comm();
  const int me = comm.rank();
  const auto ranks = static_cast<std::size_t>(comm.size());
  fetch_schedule out;
  // Per owner: -(lowest row) and (highest row + 1) anyone fetches.
  constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> need(2 * ranks, 0);
  for (std::size_t o = 0; o < ranks; ++o) need[o] = -none;
  const auto agree = [&] {
    comm.allreduce_inplace(need, MPI_MAX);
    for (std::size_t o = 0; o < ranks; ++o) out.anyone_fetches = out.anyone_fetches || need[ranks + o] > -need[o];
    if (need[ranks + static_cast<std::size_t>(me)] > -need[static_cast<std::size_t>(me)]) {
      out.lo = static_cast<std::size_t>(-need[static_cast<std::size_t>(me)]);
      out.hi = static_cast<std::size_t>(need[ranks + static_cast<std::size_t>(me)]);
    }
  };
  using exec = typename Policy::execution_space;
  if constexpr (uses_device_algorithms<exec> && contiguous_row_mapping<typename Policy::mapping_type>) {
    // Where every column of A is a row of B here (one rank; a block-diagonal A), the sources are
    // arithmetic on A's column map, left where it is: on a GPU, copying the map to the host, walking
    // it and copying the sources back took longer than cuSPARSE's product (Laplacian 2048^2).
    const global_index lo = b.mapping().row_begin(me);
    if (columns_outside<exec>(Kokkos::View<const global_index*, typename Policy::memory_space>(a.col_map()), lo,
                              b.mapping().row_end(me)) == 0) {
      out.local_row_base = lo;
      agree();
      return out;
    }
  }
  const auto a_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.col_map());
  const auto columns = static_cast<std::size_t>(a_map.extent(0));
  out.source.resize(columns);
  struct remote_column {
    int owner;
    std::size_t row;  ///< on the owner
    std::size_t column;
  };
  std::vector<remote_column> remote;
  const auto& b_rows_map = b.mapping();
  for (std::size_t c = 0; c < columns; ++c) {
    const int owner = b_rows_map.row_owner(a_map(c));
    const auto row = static_cast<std::size_t>(b_rows_map.local_row(a_map(c)));
    if (owner == me)
      out.source[c] = static_cast<local_index>(row);
    else
      remote.push_back({owner, row, c});
  }
  // Contiguous row ranges with A's ascending columns are in this order already.
  const auto before = [](const remote_column& x, const remote_column& y) {
    return x.owner < y.owner || (x.owner == y.owner && x.row < y.row);
  };
  if (!std::is_sorted(remote.begin(), remote.end(), before)) std::sort(remote.begin(), remote.end(), before);
  for (const auto& [owner, row, c] : remote) {
    out.source[c] = -static_cast<local_index>(out.fetched) - 1;
    if (!out.runs.empty() && out.runs.back().owner == owner && out.runs.back().first_row + out.runs.back().count == row)
      ++out.runs.back().count;
    else
      out.runs.push_back({owner, row, 1, out.fetched});
    ++out.fetched;
    const auto o = static_cast<std::size_t>(owner);
    need[o] = std::max(need[o], -static_cast<std::int64_t>(row));
    need[ranks + o] = std::max(need[ranks + o], static_cast<std::int64_t>(row) + 1);
  }
  agree();
  return out;
}

/// The sources of `rows` as host code reads them: rows.source, or, where the schedule left them
/// to the device (local_row_base), made into `storage` from A's column map.
template <matrix_value T, matrix_policy Policy>
const std::vector<local_index>& host_sources(const referenced_rows<T>& rows, const dist_matrix<T, Policy>& a,
                                            std::vector<local_index>& storage) {
  if (!rows.local_row_base) return rows.source;
  const auto map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.col_map());
  storage.resize(map.extent(0));
  for (std::size_t c = 0; c < storage.size(); ++c) storage[c] = static_cast<local_index>(map(c) - *rows.local_row_base);
  return storage;
}

/// Fetch the rows of B that the local A references and other ranks own, as `schedule` says
/// (collective: one allreduce of one integer, then the staging and the gets).
///
/// One-sided, per run of consecutive rows of an owner: one get for their row pointers, then one
/// for their columns and one for their values. Owners stage only the range of their rows anyone
/// fetches (in B's own offsets) in the workspace's windows; the allreduce, which decides whether
/// the windows must grow, also orders the previous product's gets before this staging.
template <matrix_value T, matrix_policy Policy>
referenced_rows<T> fetch_referenced_rows(const fetch_schedule& schedule, const dist_matrix<T, Policy>& a,
                                         const dist_matrix<T, Policy>& b) {
  const auto& comm = a.comm();
  const auto b_rows = static_cast<std::size_t>(b.local_rows());
  const auto b_nnz = static_cast<std::size_t>(b.local_nnz());
  const auto& runs = schedule.runs;
  const std::size_t fetched = schedule.fetched;
  referenced_rows<T> out;
  out.source = schedule.source;
  out.local_row_base = schedule.local_row_base;
  auto workspace = spgemm_workspace<T, Policy>::of(b);
  if (!schedule.anyone_fetches) return out;
  const int grow = comm.max(workspace->too_small(b_rows, b_nnz) ? 1 : 0);
  if (grow != 0) workspace->grow(b_rows, b_nnz);
  auto& ws = *workspace;

  // Stage the rows others fetch from me: their row pointers (one past the last, too), global
  // columns and values, where they are in B.
  const std::size_t lo = schedule.lo, hi = schedule.hi;
  const auto b_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().row_ptr);
  if (hi > lo) {
    const auto b_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().col_idx);
    const auto b_val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().values);
    const auto b_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.col_map());
    std::int64_t* ptr = ws.ptr.local().data();
    std::int64_t* cols = ws.cols.local().data();
    T* values = ws.values.local().data();
    for (std::size_t r = lo; r <= hi; ++r) ptr[r] = b_ptr(r);
    for (auto e = static_cast<std::size_t>(b_ptr(lo)); e < static_cast<std::size_t>(b_ptr(hi)); ++e) {
      cols[e] = b_map(static_cast<std::size_t>(b_col(e)));
      values[e] = b_val(e);
    }
  }
  ws.context->barrier();

  // Round 1: the row pointers of every run (count + 1 values), one get each.
  std::vector<std::int64_t> run_ptr(fetched + runs.size());
  std::vector<request> pending;
  pending.reserve(2 * runs.size());
  for (std::size_t k = 0; k < runs.size(); ++k)
    pending.push_back(ws.context->get_nb(ws.ptr, runs[k].owner, runs[k].first_row,
                                         std::span<std::int64_t>(run_ptr.data() + runs[k].first_fetched + k,
                                                                 runs[k].count + 1)));
  wait_all(pending);
  pending.clear();

  out.ptr.assign(fetched + 1, 0);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::int64_t* p = run_ptr.data() + runs[k].first_fetched + k;
    for (std::size_t i = 0; i < runs[k].count; ++i) out.ptr[runs[k].first_fetched + i + 1] = p[i + 1] - p[i];
  }
  for (std::size_t f = 0; f < fetched; ++f) out.ptr[f + 1] += out.ptr[f];
  out.cols.resize(static_cast<std::size_t>(out.ptr.back()));
  out.values.resize(out.cols.size());

  // Round 2: each run's entries are contiguous at the owner: one get for columns, one for values.
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::int64_t* p = run_ptr.data() + runs[k].first_fetched + k;
    const auto at = static_cast<std::size_t>(out.ptr[runs[k].first_fetched]);
    const auto from = static_cast<std::size_t>(p[0]);
    const auto length = static_cast<std::size_t>(p[runs[k].count] - p[0]);
    if (length == 0) continue;
    pending.push_back(
        ws.context->get_nb(ws.cols, runs[k].owner, from, std::span<std::int64_t>(out.cols.data() + at, length)));
    pending.push_back(ws.context->get_nb(ws.values, runs[k].owner, from, std::span<T>(out.values.data() + at, length)));
  }
  wait_all(pending);
  // With a passive-target backend no closing barrier: every rank enters the next product's opening
  // allreduce only after its own gets completed, so no owner restages under a reader. The
  // aggregator serves gets only inside tessera calls: its owners must keep serving until all are done.
  if constexpr (!is_passive_target<typename Policy::backend_type>) ws.context->barrier();
  return out;
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_FETCH_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_FETCH_HPP
#endif
