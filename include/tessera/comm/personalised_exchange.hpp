#pragma once
/// @file
/// personalised_exchange: the bulk all-to-all every backend uses to move
/// per-destination buckets (sizes by MPI_Alltoall, payload by non-blocking
/// point-to-point messages to the ranks that have data), blocking or started now and finished
/// later (pending_exchange), so an algorithm can compute while its next data travels.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PERSONALISED_EXCHANGE_HPP
#endif

#include "buckets.hpp"
#include "communicator.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

namespace detail {
inline constexpr int exchange_tag = 0x7e55;
inline constexpr std::size_t exchange_chunk_bytes = std::size_t{1} << 30;

/// Posts every receive and send of an exchange whose incoming sizes are already in
/// `incoming.offsets` (sizes `incoming.data`), and copies this rank's own bucket; counts the
/// payload. `outgoing` and `incoming` must stay where they are until the requests complete.
template <class T>
void post_sized_exchange(const communicator& comm, const buckets<T>& outgoing, buckets<T>& incoming,
                         std::vector<MPI_Request>& requests) {
  const int p = comm.size();
  const int me = comm.rank();
  incoming.data.resize(incoming.offsets.back());
  std::uint64_t messages = 0, bytes = 0;
  auto chunked = [&](auto* base, std::size_t count, int peer, bool sending) {
    auto* raw = reinterpret_cast<std::conditional_t<std::is_const_v<std::remove_pointer_t<decltype(base)>>, const std::byte*, std::byte*>>(base);
    std::size_t remaining = count * sizeof(T);
    while (remaining > 0) {
      const int n = static_cast<int>(std::min<std::size_t>(remaining, exchange_chunk_bytes));
      requests.emplace_back();
      if (sending) {
        TESSERA_MPI(MPI_Isend(raw, n, MPI_BYTE, peer, exchange_tag, comm.get(), &requests.back()));
        ++messages;
        bytes += static_cast<std::uint64_t>(n);
      } else {
        TESSERA_MPI(MPI_Irecv(const_cast<std::byte*>(raw), n, MPI_BYTE, peer, exchange_tag, comm.get(), &requests.back()));
      }
      raw += n;
      remaining -= static_cast<std::size_t>(n);
    }
  };
  // Receives first, so a sender's data has somewhere to go as soon as it is sent. Messages of two
  // exchanges in flight at once match in the order they were started (MPI does not overtake
  // between one pair of ranks on one tag), and every rank starts them in the same order.
  for (int r = 0; r < p; ++r)
    if (r != me) chunked(incoming.bucket(r).data(), incoming.bucket(r).size(), r, false);
  for (int r = 0; r < p; ++r)
    if (r != me) chunked(outgoing.bucket(r).data(), outgoing.bucket(r).size(), r, true);
  std::copy(outgoing.bucket(me).begin(), outgoing.bucket(me).end(), incoming.bucket(me).begin());
  comm.stats().record(messages, bytes);
}

/// Agrees the sizes (one MPI_Alltoall, counted: P-1 messages of 8 bytes), then posts the
/// exchange (post_sized_exchange).
template <class T>
void post_personalised_exchange(const communicator& comm, const buckets<T>& outgoing, buckets<T>& incoming,
                                std::vector<MPI_Request>& requests) {
  const int p = comm.size();
  TESSERA_REQUIRE(outgoing.num_ranks() == p, internal, "exchange: {} buckets for {} ranks", outgoing.num_ranks(), p);

  std::vector<std::uint64_t> send_counts(static_cast<std::size_t>(p)), recv_counts(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) send_counts[static_cast<std::size_t>(r)] = outgoing.bucket(r).size();
  TESSERA_MPI(MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, comm.get()));
  comm.stats().record(static_cast<std::uint64_t>(p - 1), 8ull * static_cast<std::uint64_t>(p - 1));

  incoming.offsets.assign(static_cast<std::size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r)
    incoming.offsets[static_cast<std::size_t>(r) + 1] = incoming.offsets[static_cast<std::size_t>(r)] + recv_counts[static_cast<std::size_t>(r)];
  post_sized_exchange(comm, outgoing, incoming, requests);
}
}  // namespace detail

/// Two-sided personalised exchange (collective).
///
/// Bucket r of `outgoing` goes to rank r; the result's bucket r came from rank r.
/// Traffic counted per rank: P-1 messages of 8 bytes for the size exchange,
/// plus one message per chunk (at most 1 GiB) to every *other* rank that has
/// data; a rank's records to itself are copied, not sent.
template <class T>
buckets<T> personalised_exchange(const communicator& comm, const buckets<T>& outgoing) {
  buckets<T> incoming;
  std::vector<MPI_Request> requests;
  detail::post_personalised_exchange(comm, outgoing, incoming, requests);
  if (!requests.empty())
    TESSERA_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  return incoming;
}

/// A personalised exchange whose sizes both sides know already (collective): what a plan made
/// once, so each later exchange skips the size all-to-all and its P-1 messages per rank.
///
/// `incoming_offsets` (P + 1 entries) are the offsets the result will have: bucket r holds
/// exactly what rank r sends this rank, which the caller guarantees (a plan that told every
/// sender what to send). Traffic counted: the payload messages only.
template <class T>
buckets<T> personalised_exchange_planned(const communicator& comm, const buckets<T>& outgoing,
                                         const std::vector<std::size_t>& incoming_offsets) {
  TESSERA_REQUIRE(outgoing.num_ranks() == comm.size() && incoming_offsets.size() == outgoing.offsets.size(), internal,
                  "exchange: {} buckets and {} incoming offsets for {} ranks", outgoing.num_ranks(),
                  incoming_offsets.size(), comm.size());
  buckets<T> incoming;
  incoming.offsets = incoming_offsets;
  std::vector<MPI_Request> requests;
  detail::post_sized_exchange(comm, outgoing, incoming, requests);
  if (!requests.empty())
    TESSERA_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  return incoming;
}

/// A personalised exchange that was started and is finished later: finish() waits for it and
/// returns what arrived. Its payload moves while the caller computes, as far as the MPI library
/// progresses messages outside its calls (an asynchronous progress thread, or a network that
/// moves data by itself); the sizes were agreed when it started. Exchanges started on one
/// communicator must be started in the same order on every rank; they may be finished in any
/// order. One that is destroyed unfinished (an exception unwinding) still completes its messages,
/// so the ranks that finish theirs are not left waiting.
template <class T>
class pending_exchange {
 public:
  pending_exchange() = default;

  /// An exchange that completed when it started (a backend with no non-blocking form).
  [[nodiscard]] static pending_exchange arrived(buckets<T> incoming) {
    pending_exchange done;
    done.incoming_ = std::move(incoming);
    return done;
  }

  /// Collective: starts sending `outgoing` (bucket r to rank r), as personalised_exchange does.
  [[nodiscard]] static pending_exchange start(const communicator& comm, buckets<T> outgoing) {
    pending_exchange started;
    started.outgoing_ = std::move(outgoing);
    detail::post_personalised_exchange(comm, started.outgoing_, started.incoming_, started.requests_);
    return started;
  }

  pending_exchange(pending_exchange&& other) noexcept
      : outgoing_(std::move(other.outgoing_)),
        incoming_(std::move(other.incoming_)),
        requests_(std::exchange(other.requests_, {})) {}
  pending_exchange& operator=(pending_exchange&& other) noexcept {
    if (this != &other) {
      complete();
      outgoing_ = std::move(other.outgoing_);
      incoming_ = std::move(other.incoming_);
      requests_ = std::exchange(other.requests_, {});
    }
    return *this;
  }
  pending_exchange(const pending_exchange&) = delete;
  pending_exchange& operator=(const pending_exchange&) = delete;
  ~pending_exchange() { complete(); }

  /// Waits for the messages; bucket r of the result came from rank r.
  [[nodiscard]] buckets<T> finish() && {
    if (!requests_.empty()) {
      // Cleared first: a failing wait must not be waited for again by the destructor.
      auto requests = std::exchange(requests_, {});
      TESSERA_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    }
    outgoing_ = {};
    return std::move(incoming_);
  }

 private:
  void complete() noexcept {
    if (!requests_.empty()) MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
  }

  buckets<T> outgoing_;  // kept alive: the sends read it until they complete
  buckets<T> incoming_;
  std::vector<MPI_Request> requests_;
};

/// The bulk exchanges every built-in backend offers, by MPI's two-sided all-to-all: a backend
/// inherits them (`struct mpi_rma : alltoall_exchanges`) instead of repeating the three. A
/// user's backend may inherit them too, or give its own exchange (concepts/backend.hpp).
struct alltoall_exchanges {
  /// Bulk personalised exchange (see personalised_exchange).
  template <class T>
  buckets<T> exchange(const communicator& comm, const buckets<T>& outgoing) const {
    return personalised_exchange(comm, outgoing);
  }
  /// The same exchange when both sides know the sizes (see personalised_exchange_planned).
  template <class T>
  buckets<T> exchange_planned(const communicator& comm, const buckets<T>& outgoing,
                              const std::vector<std::size_t>& incoming_offsets) const {
    return personalised_exchange_planned(comm, outgoing, incoming_offsets);
  }
  /// The same exchange started now and finished by the caller (see pending_exchange).
  template <class T>
  pending_exchange<T> start_exchange(const communicator& comm, buckets<T> outgoing) const {
    return pending_exchange<T>::start(comm, std::move(outgoing));
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PERSONALISED_EXCHANGE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PERSONALISED_EXCHANGE_HPP
#endif
