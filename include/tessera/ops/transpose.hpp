#pragma once
/// @file
/// Distributed transpose, two algorithms over any backend; the result is
/// row-block over A's columns.
///  - transpose_algorithm::route: every entry (i, j, v) travels as (j, i, v) to
///    the owner of row j of A^T in one personalised exchange, then is assembled.
///  - transpose_algorithm::slots: the two-phase algorithm of the OpenSHMEM
///    aggregation paper: a column histogram (aggregated records to the column's
///    owner), then per entry a fetch_add on the owner's row cursor to claim a
///    slot and a put of the entry into it, the puts deferred until their
///    fetches complete. Fine-grained: it shines on the aggregator backend.

#include "../comm/buckets.hpp"
#include "../comm/mailbox.hpp"
#include "../comm/segment.hpp"
#include "../core/error.hpp"
#include "../matrix/detail/assemble.hpp"
#include "../matrix/detail/compress_columns.hpp"
#include "../matrix/detail/route.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../matrix/local_triplets.hpp"
#include "../matrix/triplets.hpp"

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

enum class transpose_algorithm { route, slots };

namespace detail {

/// The local block of A^T from the entries that stay on this rank (`stay`: A's entries (i, j, v)
/// in ascending i, j owned here as row j of A^T) and the ones received from other ranks (`arrived`:
/// already transposed, global indices). One counting sort over the new local rows: the staying
/// entries are scattered first, in ascending A row, so their columns come out sorted; a row that
/// also received entries is then sorted (only those rows, and a transpose has no duplicates).
/// Columns are compressed through the column map as in assemble_owned.
template <class T, class Policy>
dist_matrix<T, Policy> assemble_transposed(const communicator& comm, const typename Policy::mapping_type& mapping,
                                           const triplets<T>& a_entries, const std::vector<std::size_t>& stay,
                                           const triplets<T>& arrived) {
  using exec = typename Policy::execution_space;
  using mem = typename Policy::memory_space;
  using storage = typename Policy::storage_type;
  using matrix = dist_matrix<T, Policy>;

  auto [local, col_map] = comm.collectively([&] {
    const int me = comm.rank();
    const local_extents ext = mapping.extents(me);
    TESSERA_REQUIRE(ext.rows <= INT_MAX, unsupported, "rank {} would own {} local rows; at most {} are supported", me,
                    ext.rows, INT_MAX);
    const global_index first = mapping.row_begin(me);
    const auto num_rows = static_cast<std::size_t>(ext.rows);
    const std::size_t n_stay = stay.size();
    const std::size_t n = n_stay + arrived.size();

    // Global columns of A^T (A's rows) in scatter order, for the column map.
    std::vector<global_index> gcols(n);
    for (std::size_t k = 0; k < n_stay; ++k) gcols[k] = a_entries.rows[stay[k]];
    for (std::size_t k = 0; k < arrived.size(); ++k) gcols[n_stay + k] = arrived.cols[k];
    auto [distinct_cols, local_cols] = compress_columns(gcols, ext.cols);
    TESSERA_REQUIRE(distinct_cols.size() <= static_cast<std::size_t>(INT_MAX), unsupported,
                    "rank {} touches {} distinct columns; at most {} are supported", me, distinct_cols.size(), INT_MAX);

    auto local_row = [&](global_index g) {
      const global_index r = g - first;
      TESSERA_REQUIRE(r >= 0 && static_cast<std::size_t>(r) < num_rows, internal,
                      "row {} of the transpose reached rank {} but belongs to rank {}", g, me, mapping.row_owner(g));
      return static_cast<std::size_t>(r);
    };

    // Counting sort by new row: count, exclusive scan, scatter with a per-row cursor.
    Kokkos::View<offset_type*, Kokkos::HostSpace> h_ptr("tessera::row_ptr", num_rows + 1);
    std::vector<std::uint8_t> received(num_rows, 0);
    for (std::size_t k = 0; k < n_stay; ++k) ++h_ptr(local_row(a_entries.cols[stay[k]]) + 1);
    for (std::size_t k = 0; k < arrived.size(); ++k) {
      const std::size_t r = local_row(arrived.rows[k]);
      ++h_ptr(r + 1);
      received[r] = 1;
    }
    for (std::size_t r = 0; r < num_rows; ++r) h_ptr(r + 1) += h_ptr(r);
    std::vector<offset_type> cursor(num_rows);
    for (std::size_t r = 0; r < num_rows; ++r) cursor[r] = h_ptr(r);

    Kokkos::View<local_index*, Kokkos::HostSpace> h_cols(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cols"), n);
    Kokkos::View<T*, Kokkos::HostSpace> h_vals(Kokkos::view_alloc(Kokkos::WithoutInitializing, "vals"), n);
    for (std::size_t k = 0; k < n_stay; ++k) {
      const std::size_t e = stay[k];
      const auto at = static_cast<std::size_t>(cursor[a_entries.cols[e] - first]++);
      h_cols(at) = local_cols[k];
      h_vals(at) = a_entries.values[e];
    }
    for (std::size_t k = 0; k < arrived.size(); ++k) {
      const auto at = static_cast<std::size_t>(cursor[static_cast<std::size_t>(arrived.rows[k] - first)]++);
      h_cols(at) = local_cols[n_stay + k];
      h_vals(at) = arrived.values[k];
    }
    // Rows that mixed staying and received entries (or entries from several ranks): sort by column.
    std::vector<std::pair<local_index, T>> row;
    for (std::size_t r = 0; r < num_rows; ++r) {
      if (!received[r]) continue;
      const auto b = static_cast<std::size_t>(h_ptr(r)), e = static_cast<std::size_t>(h_ptr(r + 1));
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

    Kokkos::View<global_index*, Kokkos::HostSpace> h_col_map(distinct_cols.data(), distinct_cols.size());
    Kokkos::View<offset_type*, mem> ptr = Kokkos::create_mirror_view_and_copy(mem{}, h_ptr);
    Kokkos::View<local_index*, mem> cols = Kokkos::create_mirror_view_and_copy(mem{}, h_cols);
    Kokkos::View<T*, mem> vals = Kokkos::create_mirror_view_and_copy(mem{}, h_vals);
    Kokkos::View<global_index*, mem> col_map(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::col_map"),
                                             distinct_cols.size());
    Kokkos::deep_copy(col_map, h_col_map);

    const exec space{};
    const auto block_rows = static_cast<local_index>(ext.rows);
    const auto block_cols = static_cast<local_index>(distinct_cols.size());
    typename matrix::local_block_type block;
    if constexpr (std::same_as<storage, csr>) {
      block = {block_rows, block_cols, ptr, cols, vals};
    } else {
      auto row_idx = kernels::expand_groups<exec, mem>(space, ptr);
      block = storage::from_coo(space, coo_block<T, mem>{block_rows, block_cols, row_idx, cols, vals});
    }
    space.fence();
    return std::pair{block, col_map};
  });
  return matrix(comm, mapping, std::move(local), std::move(col_map));
}

template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> transpose_by_routing(const dist_matrix<T, Policy>& a,
                                            const typename Policy::mapping_type& result_rows) {
  const auto& comm = a.comm();
  const auto entries = local_triplets(a);
  // Split: entries whose row of A^T is mine stay (by index); the rest leave, transposed.
  auto [stay, leaving] = comm.collectively([&] {
    const int me = comm.rank();
    const global_index first = result_rows.row_begin(me);
    const global_index last = result_rows.row_end(me);
    std::vector<std::size_t> kept;
    kept.reserve(entries.size());
    triplets<T> away;
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const global_index j = entries.cols[k];
      if (j >= first && j < last)
        kept.push_back(k);
      else
        away.push_back(j, entries.rows[k], entries.values[k]);
    }
    return std::pair{std::move(kept), std::move(away)};
  });
  const typename Policy::backend_type backend{};
  const auto arrived = route_to_owners<T>(comm, backend, result_rows, std::span<const global_index>(leaving.rows),
                                          std::span<const global_index>(leaving.cols),
                                          std::span<const T>(leaving.values));
  return assemble_transposed<T, Policy>(comm, result_rows, entries, stay, arrived);
}

template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> transpose_by_slots(const dist_matrix<T, Policy>& a,
                                          const typename Policy::mapping_type& result_rows) {
  const auto& comm = a.comm();
  const int me = comm.rank();
  typename Policy::backend_type::context ctx(comm, typename Policy::backend_type::options{});
  const auto entries = local_triplets(a);
  const global_index first = result_rows.row_begin(me);
  const auto my_rows = static_cast<std::size_t>(result_rows.row_end(me) - first);

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
      counts[static_cast<std::size_t>(cc.column - first)] += cc.count;
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
      fetches.push_back(ctx.fetch_add_nb(cursor, owner, static_cast<std::size_t>(column - result_rows.row_begin(owner)),
                                         1, claimed[k - begin]));
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
  for (std::size_t r = 0; r < my_rows; ++r)
    for (std::int64_t e = 0; e < counts[r]; ++e, ++at) {
      const auto& s = slots.local()[static_cast<std::size_t>(at)];
      owned.push_back(first + static_cast<global_index>(r), s.column, s.value);
    }
  ctx.barrier();  // the segments go next: nobody may still write into them
  return assemble_owned<T, Policy>(comm, result_rows, owned, combine::any{});
}

}  // namespace detail

/// A^T, row-block over A's columns (collective). Traffic is counted under "transpose".
template <matrix_value T, matrix_policy Policy>
  requires row_distribution_mapping<typename Policy::mapping_type>
[[nodiscard]] dist_matrix<T, Policy> transpose(const dist_matrix<T, Policy>& a,
                                               transpose_algorithm algorithm = transpose_algorithm::route) {
  const stats_scope scope(a.comm(), "transpose");
  const auto result_rows = a.comm().collectively([&] {
    return typename Policy::distribution_type{}.make_mapping(a.comm().size(), a.num_cols(), a.num_rows());
  });
  if (algorithm == transpose_algorithm::slots) return detail::transpose_by_slots(a, result_rows);
  return detail::transpose_by_routing(a, result_rows);
}

}  // namespace tessera
