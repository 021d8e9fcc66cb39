#pragma once
/// @file
/// personalised_exchange: the bulk all-to-all every backend uses to move
/// per-destination buckets (sizes by MPI_Alltoall, payload by non-blocking
/// point-to-point messages to the ranks that have data).

#include "buckets.hpp"
#include "communicator.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tessera {

namespace detail {
inline constexpr int exchange_tag = 0x7e55;
inline constexpr std::size_t exchange_chunk_bytes = std::size_t{1} << 30;
}  // namespace detail

/// Two-sided personalised exchange (collective).
///
/// Bucket r of `outgoing` goes to rank r; the result's bucket r came from rank r.
/// Traffic counted per rank: P-1 messages of 8 bytes for the size exchange,
/// plus one message per chunk (at most 1 GiB) to every *other* rank that has
/// data; a rank's records to itself are copied, not sent.
template <class T>
buckets<T> personalised_exchange(const communicator& comm, const buckets<T>& outgoing) {
    const int p = comm.size();
    const int me = comm.rank();
    TESSERA_REQUIRE(outgoing.num_ranks() == p, internal, "exchange: {} buckets for {} ranks", outgoing.num_ranks(), p);

    std::vector<std::uint64_t> send_counts(static_cast<std::size_t>(p)), recv_counts(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) send_counts[static_cast<std::size_t>(r)] = outgoing.bucket(r).size();
    TESSERA_MPI(MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, comm.get()));

    buckets<T> incoming;
    incoming.offsets.assign(static_cast<std::size_t>(p) + 1, 0);
    for (int r = 0; r < p; ++r)
      incoming.offsets[static_cast<std::size_t>(r) + 1] = incoming.offsets[static_cast<std::size_t>(r)] + recv_counts[static_cast<std::size_t>(r)];
    incoming.data.resize(incoming.offsets.back());

    std::vector<MPI_Request> requests;
    std::uint64_t messages = static_cast<std::uint64_t>(p - 1), bytes = 8ull * static_cast<std::uint64_t>(p - 1);
    auto chunked = [&](auto* base, std::size_t count, int peer, bool sending) {
      auto* raw = reinterpret_cast<std::conditional_t<std::is_const_v<std::remove_pointer_t<decltype(base)>>, const std::byte*, std::byte*>>(base);
      std::size_t remaining = count * sizeof(T);
      while (remaining > 0) {
        const int n = static_cast<int>(std::min<std::size_t>(remaining, detail::exchange_chunk_bytes));
        requests.emplace_back();
        if (sending) {
          TESSERA_MPI(MPI_Isend(raw, n, MPI_BYTE, peer, detail::exchange_tag, comm.get(), &requests.back()));
          ++messages;
          bytes += static_cast<std::uint64_t>(n);
        } else {
          TESSERA_MPI(MPI_Irecv(const_cast<std::byte*>(raw), n, MPI_BYTE, peer, detail::exchange_tag, comm.get(), &requests.back()));
        }
        raw += n;
        remaining -= static_cast<std::size_t>(n);
      }
    };
    for (int r = 0; r < p; ++r)
      if (r != me) chunked(incoming.bucket(r).data(), incoming.bucket(r).size(), r, false);
    for (int r = 0; r < p; ++r)
      if (r != me) chunked(outgoing.bucket(r).data(), outgoing.bucket(r).size(), r, true);
    std::copy(outgoing.bucket(me).begin(), outgoing.bucket(me).end(), incoming.bucket(me).begin());
    if (!requests.empty())
      TESSERA_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    comm.stats().record(messages, bytes);
    return incoming;
}

}  // namespace tessera
