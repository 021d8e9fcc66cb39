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
#include "../matrix/dist_matrix.hpp"
#include "../matrix/local_triplets.hpp"
#include "../matrix/triplets.hpp"

#include <map>
#include <span>
#include <vector>

namespace tessera {

enum class transpose_algorithm { route, slots };

namespace detail {

template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> transpose_by_routing(const dist_matrix<T, Policy>& a,
                                            const typename Policy::mapping_type& result_rows) {
  auto entries = local_triplets(a);
  std::swap(entries.rows, entries.cols);
  const typename Policy::backend_type backend{};
  auto owned = route_to_owners<T>(a.comm(), backend, result_rows, std::span<const global_index>(entries.rows),
                                  std::span<const global_index>(entries.cols), std::span<const T>(entries.values));
  return assemble_owned<T, Policy>(a.comm(), result_rows, owned, combine::any{});
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
