#pragma once
/// @file
/// Sending (row, column, value) entries to the ranks that own them.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/matrix/detail/route.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../comm/buckets.hpp"
#include "../../comm/communicator.hpp"
#include "../../concepts/backend.hpp"
#include "../../concepts/distribution.hpp"
#include "../../core/index_types.hpp"
#include "../triplets.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace tessera::detail {

/// Wire format of one routed entry: row, column, value, packed without padding.
template <class T>
struct entry_record {
  static constexpr std::size_t size = 2 * sizeof(global_index) + sizeof(T);

  static void write(std::byte* at, global_index row, global_index col, const T& value) {
    std::memcpy(at, &row, sizeof row);
    std::memcpy(at + sizeof row, &col, sizeof col);
    std::memcpy(at + 2 * sizeof row, &value, sizeof(T));
  }
  static void read(const std::byte* at, global_index& row, global_index& col, T& value) {
    std::memcpy(&row, at, sizeof row);
    std::memcpy(&col, at + sizeof row, sizeof col);
    std::memcpy(&value, at + 2 * sizeof row, sizeof(T));
  }
};

/// Wire format of one entry whose indices fit 32 bits (both dimensions of the matrix below 2^32):
/// 16 bytes for a double instead of 24. The grid algorithms push their pieces in it.
template <class T>
struct compact_entry_record {
  static constexpr std::size_t size = 2 * sizeof(std::uint32_t) + sizeof(T);
  /// Whether a rows x cols matrix's entries fit this format (the same answer on every rank).
  static constexpr bool fits(global_index rows, global_index cols) noexcept {
    return rows <= global_index{0xFFFFFFFF} && cols <= global_index{0xFFFFFFFF};
  }
  static void write(std::byte* at, global_index row, global_index col, const T& value) {
    const auto r = static_cast<std::uint32_t>(row), c = static_cast<std::uint32_t>(col);
    std::memcpy(at, &r, sizeof r);
    std::memcpy(at + sizeof r, &c, sizeof c);
    std::memcpy(at + 2 * sizeof r, &value, sizeof(T));
  }
  static void read(const std::byte* at, global_index& row, global_index& col, T& value) {
    std::uint32_t r = 0, c = 0;
    std::memcpy(&r, at, sizeof r);
    std::memcpy(&c, at + sizeof r, sizeof c);
    std::memcpy(&value, at + 2 * sizeof r, sizeof(T));
    row = r;
    col = c;
  }
};

/// The entries of received buckets of `Record`s, in the order of their source ranks, with `kept`
/// entries (this rank's own, which never went through the buckets) after those of rank `me`:
/// `write_kept(rows, cols, values)` writes them at the pointers it is given.
template <class T, class Record = entry_record<T>, class WriteKept>
triplets<T> read_entries(const buckets<std::byte>& incoming, int me, std::size_t kept, WriteKept&& write_kept) {
  using record = Record;
  triplets<T> out;
  const std::size_t count = incoming.data.size() / record::size;
  const std::size_t before = kept == 0 ? count : incoming.offsets[static_cast<std::size_t>(me) + 1] / record::size;
  const std::size_t total = count + kept;
  out.rows.resize(total);
  out.cols.resize(total);
  out.values.resize(total);
  for (std::size_t k = 0; k < before; ++k)
    record::read(incoming.data.data() + k * record::size, out.rows[k], out.cols[k], out.values[k]);
  if (kept > 0) write_kept(out.rows.data() + before, out.cols.data() + before, out.values.data() + before);
  for (std::size_t k = before; k < count; ++k) {
    const std::size_t at = k + kept;
    record::read(incoming.data.data() + k * record::size, out.rows[at], out.cols[at], out.values[at]);
  }
  return out;
}

/// The entries of received buckets of `Record`s, in the order of their source ranks.
template <class T, class Record = entry_record<T>>
triplets<T> read_entries(const buckets<std::byte>& incoming) {
  return read_entries<T, Record>(incoming, 0, 0, [](global_index*, global_index*, T*) {});
}

/// Collective: every entry goes to `mapping.owner(row, col)` (to every replica with a
/// replicated mapping); returns the entries this rank owns
/// (global indices), in the order of their source ranks.
template <class T, communication_backend Backend, distribution_mapping Mapping>
triplets<T> route_to_owners(const communicator& comm, const Backend& backend, const Mapping& mapping,
                            std::span<const global_index> rows, std::span<const global_index> cols,
                            std::span<const T> values) {
  using record = entry_record<T>;
  const std::size_t n = values.size();
  const int me = comm.rank();
  // This rank's own entries, where most are (keep_own): copied once, straight into the result,
  // not packed, exchanged and unpacked.
  std::vector<int> dest;
  std::size_t kept = 0;
  buckets<std::byte> outgoing = comm.collectively([&] {
    bucket_builder<std::byte> builder(comm.size());
    if constexpr (replicated_mapping<Mapping>) {
      // Every replica gets the entry (replicated_columns: each rank of the column's grid column).
      for (std::size_t k = 0; k < n; ++k)
        for (int r : mapping.replicas(rows[k], cols[k])) builder.count(r, record::size);
      builder.allocate();
      for (std::size_t k = 0; k < n; ++k)
        for (int r : mapping.replicas(rows[k], cols[k]))
          record::write(builder.claim(r, record::size), rows[k], cols[k], values[k]);
    } else {
      dest.resize(n);
      std::size_t staying = 0;
      for (std::size_t k = 0; k < n; ++k) {
        dest[k] = mapping.owner(rows[k], cols[k]);
        staying += dest[k] == me ? 1 : 0;
      }
      // Where most entries are already home (a rank's own rows, a file read in row order), they
      // skip the buckets; where they are spread, choosing per entry mispredicts a branch per entry
      // and cost more than packing the few that stay (bench_build: 15 -> 20 ms on R-MAT 16).
      const bool keep_own = 4 * staying >= 3 * n && staying > 0;
      for (std::size_t k = 0; k < n; ++k) builder.count(dest[k], keep_own && dest[k] == me ? 0 : record::size);
      builder.allocate();
      if (keep_own) {
        kept = staying;
        for (std::size_t k = 0; k < n; ++k)
          if (dest[k] != me) record::write(builder.claim(dest[k], record::size), rows[k], cols[k], values[k]);
      } else {
        for (std::size_t k = 0; k < n; ++k)
          record::write(builder.claim(dest[k], record::size), rows[k], cols[k], values[k]);
      }
    }
    return std::move(builder).finish();
  });

  buckets<std::byte> incoming = backend.exchange(comm, outgoing);
  outgoing = {};

  return comm.collectively([&] {
    return read_entries<T>(incoming, me, kept, [&](global_index* out_rows, global_index* out_cols, T* out_values) {
      std::size_t at = 0;
      for (std::size_t k = 0; k < n; ++k)
        if (dest[k] == me) {
          out_rows[at] = rows[k];
          out_cols[at] = cols[k];
          out_values[at] = values[k];
          ++at;
        }
    });
  });
}

}  // namespace tessera::detail
