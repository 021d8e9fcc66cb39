#pragma once
/// @file
/// push_entries: every entry a rank holds goes to every rank that needs it, in one personalised
/// exchange through the policy's backend. Under a replicated distribution each copy is served by
/// one replica only (the needing rank itself when it holds one, else the replica whose grid row
/// matches), so no entry arrives twice and the replicas share the sending.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_PUSH_ENTRIES_HPP
#endif

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

/// Entries on their way (start_push_entries); finish() waits for them.
template <class T>
class pushed_entries {
 public:
  pushed_entries(pending_exchange<std::byte> exchange, bool compact)
      : exchange_(std::move(exchange)), compact_(compact) {}

  /// The entries that arrived, in the order of their source ranks.
  [[nodiscard]] triplets<T> finish() && {
    auto arrived = std::move(exchange_).finish();
    return compact_ ? read_entries<T, compact_entry_record<T>>(arrived) : read_entries<T, entry_record<T>>(arrived);
  }

 private:
  pending_exchange<std::byte> exchange_;
  bool compact_;
};

/// The buckets of a push with records of type `Record`.
template <class T, class Record, distribution_mapping M, class Destinations, class Keep>
buckets<std::byte> pack_records(const communicator& comm, const M& mapping, const triplets<T>& held,
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
  return std::move(builder).finish();
}

/// Collective: starts sending each entry of `held` (this rank's entries under `mapping`, replicas
/// included) to the ranks `destinations(i, j, emit)` names by calling emit(rank), served as
/// above; `keep(i, j)` filters first. The exchange goes through the backend's start_exchange, so
/// it travels while the caller computes where the backend can. Entries travel as compact records
/// (32-bit indices, 16 bytes for a double) when the matrix's dimensions allow, else as full ones
/// (24 bytes).
template <class T, communication_backend Backend, distribution_mapping M, class Destinations, class Keep>
pushed_entries<T> start_push_entries(const communicator& comm, const Backend& backend, const M& mapping,
                                     const triplets<T>& held, Destinations destinations, Keep keep) {
  const bool compact = compact_entry_record<T>::fits(mapping.global_rows(), mapping.global_cols());
  auto outgoing = compact ? pack_records<T, compact_entry_record<T>>(comm, mapping, held, destinations, keep)
                          : pack_records<T, entry_record<T>>(comm, mapping, held, destinations, keep);
  return pushed_entries<T>(start_exchange(backend, comm, std::move(outgoing)), compact);
}

/// start_push_entries, finished: the entries that arrived, in the order of their source ranks.
template <class T, communication_backend Backend, distribution_mapping M, class Destinations, class Keep>
triplets<T> push_entries(const communicator& comm, const Backend& backend, const M& mapping, const triplets<T>& held,
                         Destinations destinations, Keep keep) {
  return start_push_entries<T>(comm, backend, mapping, held, std::move(destinations), std::move(keep)).finish();
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_PUSH_ENTRIES_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_PUSH_ENTRIES_HPP
#endif
