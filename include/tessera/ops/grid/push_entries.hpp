#pragma once
/// @file
/// push_entries: every entry a rank holds goes to every rank that needs it, in one personalised
/// exchange through the policy's backend. Under a replicated distribution each copy is served by
/// one replica only (the needing rank itself when it holds one, else the replica whose grid row
/// matches), so no entry arrives twice and the replicas share the sending.

#include "../../comm/buckets.hpp"
#include "../../comm/communicator.hpp"
#include "../../concepts/backend.hpp"
#include "../../concepts/distribution.hpp"
#include "../../matrix/detail/route.hpp"
#include "../../matrix/triplets.hpp"

#include <algorithm>
#include <vector>

namespace tessera::detail {

/// The rank that sends entry (i, j), held under `mapping`, to rank `to`.
template <distribution_mapping M>
[[nodiscard]] int serving_rank(const M& mapping, global_index i, global_index j, int to) {
  if constexpr (replicated_mapping<M> && grid_mapping<M>) {
    const auto replicas = mapping.replicas(i, j);
    if (std::find(replicas.begin(), replicas.end(), to) != replicas.end()) return to;
    return replicas[static_cast<std::size_t>(mapping.grid().row_of(to)) % replicas.size()];
  } else {
    return mapping.owner(i, j);
  }
}

/// push_entries with records of type `Record`.
template <class T, class Record, communication_backend Backend, distribution_mapping M, class Destinations, class Keep>
triplets<T> push_records(const communicator& comm, const Backend& backend, const M& mapping, const triplets<T>& held,
                         Destinations& destinations, Keep& keep) {
  const int me = comm.rank();
  bucket_builder<std::byte> builder(comm.size());
  auto each = [&](auto&& visit) {
    for (std::size_t e = 0; e < held.size(); ++e) {
      const global_index i = held.rows[e], j = held.cols[e];
      if (!keep(i, j)) continue;
      destinations(i, j, [&](int to) {
        if (serving_rank(mapping, i, j, to) == me) visit(to, e);
      });
    }
  };
  each([&](int to, std::size_t) { builder.count(to, Record::size); });
  builder.allocate();
  each([&](int to, std::size_t e) {
    Record::write(builder.claim(to, Record::size), held.rows[e], held.cols[e], held.values[e]);
  });
  return read_entries<T, Record>(backend.exchange(comm, std::move(builder).finish()));
}

/// Collective: sends each entry of `held` (this rank's entries under `mapping`, replicas included)
/// to the ranks `destinations(i, j, emit)` names by calling emit(rank), served as above; returns
/// the entries that arrived, in the order of their source ranks. `keep(i, j)` filters first.
/// Entries travel as compact records (32-bit indices, 16 bytes for a double) when the matrix's
/// dimensions allow, else as full ones (24 bytes).
template <class T, communication_backend Backend, distribution_mapping M, class Destinations, class Keep>
triplets<T> push_entries(const communicator& comm, const Backend& backend, const M& mapping, const triplets<T>& held,
                         Destinations destinations, Keep keep) {
  if (compact_entry_record<T>::fits(mapping.global_rows(), mapping.global_cols()))
    return push_records<T, compact_entry_record<T>>(comm, backend, mapping, held, destinations, keep);
  return push_records<T, entry_record<T>>(comm, backend, mapping, held, destinations, keep);
}

}  // namespace tessera::detail
