#pragma once
/// @file
/// Distributed transpose, two algorithms over any backend and any distribution
/// whose ranks own whole rows; A^T is distributed as A's mapping says for the
/// transposed shape (mapping.with_shape(n, m): a square A keeps its row split).
///  - transpose_algorithm::route: an entry (i, j, v) whose row j of A^T is on the
///    same rank stays; the others travel as (j, i, v) to the owner of row j in one
///    personalised exchange; the local block is one counting sort of both sets.
///  - transpose_algorithm::slots: the two-phase algorithm of the OpenSHMEM
///    aggregation paper: a column histogram (aggregated records to the column's
///    owner), then per entry a fetch_add on the owner's row cursor to claim a
///    slot and a put of the entry into it, the puts deferred until their
///    fetches complete. Fine-grained: it shines on the aggregator backend.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_TRANSPOSE_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../comm/buckets.hpp"
#include "../comm/shared_context.hpp"
#include "../comm/mailbox.hpp"
#include "../comm/segment.hpp"
#include "../core/error.hpp"
#include "../matrix/detail/assemble.hpp"
#include "../matrix/detail/compress_columns.hpp"
#include "../matrix/detail/route.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../matrix/local_triplets.hpp"
#include "../matrix/triplets.hpp"
#include "grid/transpose_grid.hpp"
#include "detail/tiles_as_elements.hpp"
#include "detail/transpose_on_device.hpp"
#include "kept_plans.hpp"
#include "transpose_plan.hpp"
#include "../core/device_algorithms.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <concepts>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace tessera {

/// How transpose moves A's entries (whole-row distributions; grids route, or plan).
///  - route: each entry travels once as (j, i, v) to its owner under A^T (the default);
///  - slots: owners open one-sided slots that the senders fill (a backend-neutral alternative);
///  - planned: the first call inspects A's structure and keeps a transpose_plan with A
///    (kept_plans.hpp); later calls with a matrix of that structure and distribution move
///    values only (8 bytes per entry for doubles, no sort): A^T in an iteration whose values change.
enum class transpose_algorithm { route, slots, planned };

namespace detail {

/// Route, with a direct path for the entries that stay: A's local entries (i, j, v) whose row j of
/// A^T is this rank's never leave it; only the others travel, as (j, i, v), in one personalised
/// exchange. The local block of A^T is then one counting sort over its rows (count, exclusive scan,
/// scatter through a per-row cursor) of the staying entries, visited in ascending A row (so their
/// columns come out sorted), and the received ones; the rows that got received entries are sorted
/// by column (a transpose has no duplicates to combine). The column map is A's rows that hold a
/// staying entry merged with the received entries' columns.
template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> transpose_by_routing(const dist_matrix<T, Policy>& a,
                                            const typename Policy::mapping_type& result_rows) {
  using exec = typename Policy::execution_space;
  using mem = typename Policy::memory_space;
  using storage = typename Policy::storage_type;
  using matrix = dist_matrix<T, Policy>;
  using host = Kokkos::HostSpace;
  const auto& comm = a.comm();
  const int me = comm.rank();
  const exec space{};

  // A's local block on the host, as row pointers, local columns and values.
  Kokkos::View<const offset_type*, host> a_ptr;
  Kokkos::View<const local_index*, host> a_cols;
  Kokkos::View<const T*, host> a_vals;
  const auto a_rows = static_cast<std::size_t>(a.local().num_rows());
  if constexpr (std::same_as<storage, csr>) {
    a_ptr = Kokkos::create_mirror_view_and_copy(host{}, a.local().row_ptr);
    a_cols = Kokkos::create_mirror_view_and_copy(host{}, a.local().col_idx);
    a_vals = Kokkos::create_mirror_view_and_copy(host{}, a.local().values);
  } else {
    const auto coo = storage::to_coo(space, a.local());  // sorted by row, then column
    space.fence();
    auto rows = Kokkos::create_mirror_view_and_copy(host{}, coo.row_idx);
    a_cols = Kokkos::create_mirror_view_and_copy(host{}, coo.col_idx);
    a_vals = Kokkos::create_mirror_view_and_copy(host{}, coo.values);
    Kokkos::View<offset_type*, host> ptr("tessera::row_ptr", a_rows + 1);
    for (std::size_t e = 0; e < rows.extent(0); ++e) ++ptr(static_cast<std::size_t>(rows(e)) + 1);
    for (std::size_t r = 0; r < a_rows; ++r) ptr(r + 1) += ptr(r);
    a_ptr = ptr;
  }
  const auto a_col_map = Kokkos::create_mirror_view_and_copy(host{}, a.col_map());
  // A's local rows in ascending global order (the identity for contiguous row ranges and for
  // row-cyclic mappings): the column map of A^T is built, and its rows are filled, in that order.
  std::vector<global_index> a_global(a_rows);
  for (std::size_t i = 0; i < a_rows; ++i) a_global[i] = a.mapping().to_global(me, static_cast<global_index>(i), 0).row;
  std::vector<std::size_t> a_order(a_rows);
  for (std::size_t i = 0; i < a_rows; ++i) a_order[i] = i;
  if (!std::is_sorted(a_global.begin(), a_global.end()))
    std::sort(a_order.begin(), a_order.end(), [&](std::size_t x, std::size_t y) { return a_global[x] < a_global[y]; });

  const auto my_rows = static_cast<std::size_t>(result_rows.extents(me).rows);
  // Split: count the staying entries per row of A^T; the leaving ones are transposed into `away`.
  struct split_result {
    std::vector<local_index> new_row;        ///< per local column of A: its row of A^T here, or -1
    Kokkos::View<offset_type*, host> ptr;    ///< counts, later row pointers of A^T's block
    std::vector<std::uint8_t> used;          ///< per local row of A: has a staying entry
    triplets<T> away;
  };
  auto split = comm.collectively([&] {
    split_result out;
    out.new_row.resize(a_col_map.extent(0));
    for (std::size_t c = 0; c < out.new_row.size(); ++c) {
      const global_index j = a_col_map(c);
      out.new_row[c] = result_rows.row_owner(j) == me ? static_cast<local_index>(result_rows.local_row(j)) : local_index{-1};
    }
    out.ptr = Kokkos::View<offset_type*, host>("tessera::row_ptr", my_rows + 1);
    out.used.assign(a_rows, 0);
    for (std::size_t i = 0; i < a_rows; ++i)
      for (auto e = static_cast<std::size_t>(a_ptr(i)); e < static_cast<std::size_t>(a_ptr(i + 1)); ++e) {
        const local_index r = out.new_row[static_cast<std::size_t>(a_cols(e))];
        if (r >= 0) {
          ++out.ptr(static_cast<std::size_t>(r) + 1);
          out.used[i] = 1;
        } else {
          out.away.push_back(a_col_map(a_cols(e)), a_global[i], a_vals(e));
        }
      }
    return out;
  });
  const typename Policy::backend_type backend{};
  auto arrived = route_to_owners<T>(comm, backend, result_rows, std::span<const global_index>(split.away.rows),
                                    std::span<const global_index>(split.away.cols),
                                    std::span<const T>(split.away.values));
  split.away = {};

  auto [local, col_map] = comm.collectively([&] {
    const local_extents ext = result_rows.extents(me);
    TESSERA_REQUIRE(ext.rows <= INT_MAX, unsupported, "rank {} would own {} local rows; at most {} are supported", me,
                    ext.rows, INT_MAX);
    // Column map: A's rows with a staying entry merged with the received columns (both ascending).
    auto [received_cols, received_local] = compress_columns(arrived.cols, ext.cols);
    std::vector<global_index> distinct;
    std::vector<local_index> from_row(a_rows, -1), from_received(received_cols.size());
    {
      std::size_t o = 0, k = 0;  // o walks a_order
      while (o < a_rows || k < received_cols.size()) {
        if (o < a_rows && !split.used[a_order[o]]) {
          ++o;
          continue;
        }
        const global_index gi = o < a_rows ? a_global[a_order[o]] : global_index{-1};
        const auto next = static_cast<local_index>(distinct.size());
        if (k < received_cols.size() && (o == a_rows || received_cols[k] <= gi)) {
          if (o < a_rows && received_cols[k] == gi) from_row[a_order[o++]] = next;
          from_received[k] = next;
          distinct.push_back(received_cols[k++]);
        } else {
          from_row[a_order[o++]] = next;
          distinct.push_back(gi);
        }
      }
    }
    TESSERA_REQUIRE(distinct.size() <= static_cast<std::size_t>(INT_MAX), unsupported,
                    "rank {} touches {} distinct columns; at most {} are supported", me, distinct.size(), INT_MAX);

    // Counting sort: the received entries join the counts, then scan and scatter.
    auto& ptr = split.ptr;
    std::vector<std::uint8_t> mixed(my_rows, 0);
    std::vector<local_index> arrived_row(arrived.size());
    for (std::size_t k = 0; k < arrived.size(); ++k) {
      const global_index r = result_rows.row_owner(arrived.rows[k]) == me ? result_rows.local_row(arrived.rows[k]) : -1;
      arrived_row[k] = static_cast<local_index>(r);
      TESSERA_REQUIRE(r >= 0 && static_cast<std::size_t>(r) < my_rows, internal,
                      "row {} of the transpose reached rank {} but belongs to rank {}", arrived.rows[k], me,
                      result_rows.row_owner(arrived.rows[k]));
      ++ptr(static_cast<std::size_t>(r) + 1);
      mixed[static_cast<std::size_t>(r)] = 1;
    }
    for (std::size_t r = 0; r < my_rows; ++r) ptr(r + 1) += ptr(r);
    const auto n = static_cast<std::size_t>(ptr(my_rows));
    std::vector<offset_type> cursor(ptr.data(), ptr.data() + my_rows);
    Kokkos::View<local_index*, host> h_cols(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::cols"), n);
    Kokkos::View<T*, host> h_vals(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::vals"), n);
    for (const std::size_t i : a_order) {  // ascending A row: each row's columns come out sorted
      if (!split.used[i]) continue;
      const local_index column = from_row[i];
      for (auto e = static_cast<std::size_t>(a_ptr(i)); e < static_cast<std::size_t>(a_ptr(i + 1)); ++e) {
        const local_index r = split.new_row[static_cast<std::size_t>(a_cols(e))];
        if (r < 0) continue;
        const auto at = static_cast<std::size_t>(cursor[static_cast<std::size_t>(r)]++);
        h_cols(at) = column;
        h_vals(at) = a_vals(e);
      }
    }
    for (std::size_t k = 0; k < arrived.size(); ++k) {
      const auto at = static_cast<std::size_t>(cursor[static_cast<std::size_t>(arrived_row[k])]++);
      h_cols(at) = from_received[static_cast<std::size_t>(received_local[k])];
      h_vals(at) = arrived.values[k];
    }
    // Rows with received entries: sort by column unless already in order.
    std::vector<std::pair<local_index, T>> row;
    for (std::size_t r = 0; r < my_rows; ++r) {
      if (!mixed[r]) continue;
      const auto b = static_cast<std::size_t>(ptr(r)), e = static_cast<std::size_t>(ptr(r + 1));
      bool sorted = true;
      for (std::size_t k = b + 1; k < e && sorted; ++k) sorted = h_cols(k - 1) < h_cols(k);
      if (sorted) continue;
      row.clear();
      for (std::size_t k = b; k < e; ++k) row.emplace_back(h_cols(k), h_vals(k));
      std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::size_t k = b; k < e; ++k) {
        h_cols(k) = row[k - b].first;
        h_vals(k) = row[k - b].second;
      }
    }

    Kokkos::View<global_index*, host> h_col_map(distinct.data(), distinct.size());
    Kokkos::View<offset_type*, mem> d_ptr = Kokkos::create_mirror_view_and_copy(mem{}, ptr);
    Kokkos::View<local_index*, mem> d_cols = Kokkos::create_mirror_view_and_copy(mem{}, h_cols);
    Kokkos::View<T*, mem> d_vals = Kokkos::create_mirror_view_and_copy(mem{}, h_vals);
    Kokkos::View<global_index*, mem> d_col_map(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::col_map"),
                                               distinct.size());
    tessera::detail::deep_copy(d_col_map, h_col_map);
    const auto block_rows = static_cast<local_index>(ext.rows);
    const auto block_cols = static_cast<local_index>(distinct.size());
    typename matrix::local_block_type block;
    if constexpr (std::same_as<storage, csr>) {
      block = {block_rows, block_cols, d_ptr, d_cols, d_vals};
    } else {
      auto row_idx = kernels::expand_groups<exec, mem>(space, d_ptr);
      block = storage::from_coo(space, coo_block<T, mem>{block_rows, block_cols, row_idx, d_cols, d_vals});
    }
    space.fence();
    return std::pair{block, d_col_map};
  });
  return matrix(detail::assembled_block, comm, result_rows, std::move(local), std::move(col_map), a.global_nnz());
}

template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> transpose_by_slots(const dist_matrix<T, Policy>& a,
                                          const typename Policy::mapping_type& result_rows) {
  const auto& comm = a.comm();
  const int me = comm.rank();
  const auto shared = shared_context<typename Policy::backend_type>(comm);
  auto& ctx = *shared;
  const auto entries = local_triplets(a);
  const auto my_rows = static_cast<std::size_t>(result_rows.extents(me).rows);

  // Phase 1: how many entries each of my rows of A^T (columns of A) will get.
  struct column_count {
    global_index column;
    std::int64_t count;
  };
  std::vector<std::int64_t> counts(my_rows, 0);
  {
    std::map<global_index, std::int64_t> mine;
    for (global_index c : entries.cols) ++mine[c];
    mailbox<column_count> histogram(ctx.messages(), [&](int, const column_count& cc) {
      counts[static_cast<std::size_t>(result_rows.local_row(cc.column))] += cc.count;
    });
    for (const auto& [column, count] : mine) histogram.push(result_rows.row_owner(column), {column, count});
    histogram.drain();
  }
  std::int64_t local_nnz = 0;
  auto cursor = ctx.template allocate<std::int64_t>(my_rows);
  for (std::size_t r = 0; r < my_rows; ++r) {
    cursor.local()[r] = local_nnz;
    local_nnz += counts[r];
  }
  struct slot_entry {
    global_index column;  ///< A's row
    T value;
  };
  auto slots = ctx.template allocate<slot_entry>(static_cast<std::size_t>(local_nnz));
  ctx.barrier();

  // Phase 2: claim a slot in the owner's row, then write the entry there. Fetches go out in
  // batches; each put waits only for its own fetch, so the aggregator packs them all.
  constexpr std::size_t batch = 4096;
  std::vector<std::int64_t> claimed(batch);
  std::vector<request> fetches, puts;
  std::vector<slot_entry> payload(batch);
  for (std::size_t begin = 0; begin < entries.size(); begin += batch) {
    const std::size_t end = std::min(entries.size(), begin + batch);
    fetches.clear();
    for (std::size_t k = begin; k < end; ++k) {
      const global_index column = entries.cols[k];
      const int owner = result_rows.row_owner(column);
      fetches.push_back(
          ctx.fetch_add_nb(cursor, owner, static_cast<std::size_t>(result_rows.local_row(column)), 1, claimed[k - begin]));
    }
    wait_all(fetches);
    puts.clear();
    for (std::size_t k = begin; k < end; ++k) {
      payload[k - begin] = {entries.rows[k], entries.values[k]};
      const int owner = result_rows.row_owner(entries.cols[k]);
      puts.push_back(ctx.put_nb(slots, owner, static_cast<std::size_t>(claimed[k - begin]),
                                std::span<const slot_entry>(&payload[k - begin], 1)));
    }
    wait_all(puts);
  }
  ctx.barrier();

  // My rows of A^T, each row's entries in arrival order: assemble sorts and compresses them.
  triplets<T> owned;
  owned.reserve(static_cast<std::size_t>(local_nnz));
  std::int64_t at = 0;
  for (std::size_t r = 0; r < my_rows; ++r) {
    const global_index row = result_rows.to_global(me, static_cast<global_index>(r), 0).row;
    for (std::int64_t e = 0; e < counts[r]; ++e, ++at) {
      const auto& s = slots.local()[static_cast<std::size_t>(at)];
      owned.push_back(row, s.column, s.value);
    }
  }
  ctx.barrier();  // the segments go next: nobody may still write into them
  return assemble_owned<T, Policy>(comm, result_rows, owned, combine::any{});
}

}  // namespace detail

/// The transpose_plan of A's structure and distribution, made on first use and kept in
/// A.plan_cache() (collective; kept_plans.hpp).
template <matrix_value T, matrix_policy Policy>
transpose_plan<T, Policy>& transpose_plan_for(const dist_matrix<T, Policy>& a) {
  using plan_type = transpose_plan<T, Policy>;
  return kept_plan<plan_type>(
      a.comm(), a.plan_cache(), [&](const plan_type& plan) { return plan.fits(a); },
      [&] { return std::make_shared<plan_type>(a); });
}

#define TESSERA_TRANSPOSE_NEEDS_ROWS_OR_GRID                                                                         \
  "tessera::transpose needs a distribution whose ranks own whole rows (capability whole_row_mapping: row_owner, "   \
  "local_row, with_shape) or a process grid that re-tiles (capability retiling_grid_mapping: grid, row_tiles, "    \
  "col_tiles, column_owners, with_tiles, transposed); this one has neither: redistribute A to row_block or "       \
  "block_cyclic_2d first"

/// A^T in A's storage by routing every entry to its new owner (collective; traffic counted under
/// "transpose"), any storage:
///  - whole rows on each rank (whole_row_mapping): distributed by `A.mapping().with_shape(n, m)`:
///    a square A keeps its row split, row_block splits a new row count evenly;
///  - a grid (retiling_grid_mapping): distributed by `A.mapping().transposed()` (block_cyclic_2d:
///    the q x p grid, each rank exchanging with its transposed grid position; grid/transpose_grid.hpp);
///  - tiles: through their elements and back into the swapped tilings (two conversions, O(nnz)).
/// Only this algorithm is compiled; transpose(A, algorithm) compiles the others as well.
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_matrix<T, Policy> transpose(const dist_matrix<T, Policy>& a) {
  using mapping_type = typename Policy::mapping_type;
  static_assert(whole_row_mapping<mapping_type> || retiling_grid_mapping<mapping_type>,
                TESSERA_TRANSPOSE_NEEDS_ROWS_OR_GRID);
  if constexpr (tile_storage<typename Policy::storage_type>) {
    // Tiles: transposed as elements and cut back into the swapped tilings (tiles_as_elements.hpp).
    const auto t = transpose(detail::tiles_as_elements(a));
    return to_tiles<Policy>(t, a.comm().collectively([&] { return a.mapping().transposed(); }));
  } else if constexpr (!whole_row_mapping<mapping_type> && retiling_grid_mapping<mapping_type>) {
    const stats_scope scope(a.comm(), "transpose");
    return detail::transpose_on_grid(a);
  } else if constexpr (whole_row_mapping<mapping_type>) {
    const stats_scope scope(a.comm(), "transpose");
    const auto result_rows =
        a.comm().collectively([&] { return a.mapping().with_shape(a.num_cols(), a.num_rows()); });
    // On a device with contiguous row ranges, every phase in the execution space; elsewhere the
    // host's stable counting sort (the faster one on cores, and the one for any mapping).
    if constexpr (uses_device_algorithms<typename Policy::execution_space> && contiguous_row_mapping<mapping_type>)
      return detail::transpose_by_routing_on_device(a, result_rows);
    else
      return detail::transpose_by_routing(a, result_rows);
  } else {
    return a;  // refused above; not instantiating the algorithm keeps the compiler's report to that sentence
  }
}

/// A^T by the chosen algorithm (collective; distributed as transpose(A) says): `route` is
/// transpose(A); `slots` places entries by one-sided puts into counted slots (whole rows; a grid
/// routes); `planned` keeps the routing in a plan in A.plan_cache() that later transposes of the
/// same structure reuse (transpose_plan.hpp).
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_matrix<T, Policy> transpose(const dist_matrix<T, Policy>& a, transpose_algorithm algorithm) {
  using mapping_type = typename Policy::mapping_type;
  static_assert(whole_row_mapping<mapping_type> || retiling_grid_mapping<mapping_type>,
                TESSERA_TRANSPOSE_NEEDS_ROWS_OR_GRID);
  if constexpr (tile_storage<typename Policy::storage_type>) {
    return transpose(a);  // tiles go through their elements, whatever the algorithm
  } else if constexpr (whole_row_mapping<mapping_type> || retiling_grid_mapping<mapping_type>) {
    if (algorithm == transpose_algorithm::planned) return transpose_plan_for(a).apply(a);
    if constexpr (whole_row_mapping<mapping_type>) {
      if (algorithm == transpose_algorithm::slots) {
        const stats_scope scope(a.comm(), "transpose");
        const auto result_rows =
            a.comm().collectively([&] { return a.mapping().with_shape(a.num_cols(), a.num_rows()); });
        return detail::transpose_by_slots(a, result_rows);
      }
    }
    return transpose(a);  // route (a grid's slots is the same route)
  } else {
    return a;
  }
}

#undef TESSERA_TRANSPOSE_NEEDS_ROWS_OR_GRID

}  // namespace tessera

#ifdef TESSERA_USE_INSTANTIATIONS  // compiled once in tessera::instantiations, not in this unit
#include "../instantiations/use.hpp"
TESSERA_FOR_EACH_INSTANTIATED_POLICY(TESSERA_INSTANTIATE_TRANSPOSE, extern)
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_TRANSPOSE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_TRANSPOSE_HPP
#endif
