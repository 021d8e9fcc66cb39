#pragma once
/// @file
/// The requirements of a communication backend (docs/communication.md has the
/// completion semantics of each operation).
///
/// Two levels. `one_sided_primitives` is what a researcher implements: a handful of
/// start_* operations on checked regions, completion, and registration. Deriving the context
/// from `tessera::one_sided_api<context>` (comm/one_sided_api.hpp) builds the full API that
/// `backend_context` states and the algorithms call; every built-in backend is made that way.
/// tessera/testing/backend_conformance.hpp checks a backend against the semantics.
///
/// A backend is a tag type naming its transport. Its `context`, made
/// collectively from a communicator, holds the runtime state (windows,
/// buffers, progress ranks) and offers:
///  - collective registration of memory as a segment (allocate<T>(n), expose(span));
///  - one-sided get/put of a contiguous range or a block-strided region in ONE
///    call, blocking or non-blocking with a request handle;
///  - accumulate (sum) and 64-bit fetch_add;
///  - completion: flush(rank), flush_all(), barrier();
///  - messages(): the conveyor behind mailbox<Record> (push a record, a handler
///    runs at the destination, a collective drain);
///  - exchange(comm, buckets): the bulk personalised all-to-all;
///  - optionally start_exchange(comm, buckets): the same, finished later (starts_exchanges);
///  - optionally exchange_planned(comm, buckets, incoming offsets): the same when both sides
///    know the sizes already, without the size all-to-all (exchanges_planned).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_BACKEND_HPP
#endif

#include "../comm/backend_traits.hpp"
#include "../comm/buckets.hpp"
#include "../comm/communicator.hpp"
#include "../comm/conveyor.hpp"
#include "../comm/one_sided_api.hpp"
#include "../comm/personalised_exchange.hpp"
#include "../comm/planned_exchange.hpp"
#include "../comm/request.hpp"
#include "../comm/scalar_code.hpp"
#include "../comm/segment.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessera {

/// one_sided_primitives, what a context deriving from one_sided_api implements, is stated next
/// to that helper (comm/one_sided_api.hpp).

/// What a backend's context must offer (checked with double and int64 elements): what the
/// algorithms call. one_sided_api<context> provides it over one_sided_primitives.
template <class C>
concept backend_context = requires(C& ctx, const segment<double>& values, const segment<std::int64_t>& counters,
                                   std::span<double> into, std::span<const double> from, const strided_region& region,
                                   int rank, std::size_t offset, std::int64_t value, std::int64_t& old) {
  { std::as_const(ctx).comm() } -> std::same_as<const communicator&>;
  { ctx.template allocate<double>(offset) } -> std::same_as<segment<double>>;
  { ctx.expose(into) } -> std::same_as<segment<double>>;
  { ctx.get_nb(values, rank, offset, into) } -> std::same_as<request>;
  { ctx.put_nb(values, rank, offset, from) } -> std::same_as<request>;
  { ctx.get_strided_nb(values, rank, region, into, offset) } -> std::same_as<request>;
  { ctx.put_strided_nb(values, rank, region, from, offset) } -> std::same_as<request>;
  { ctx.accumulate_nb(values, rank, offset, from) } -> std::same_as<request>;
  { ctx.fetch_add_nb(counters, rank, offset, value, old) } -> std::same_as<request>;
  ctx.get(values, rank, offset, into);
  ctx.put(values, rank, offset, from);
  ctx.get_strided(values, rank, region, into);
  ctx.put_strided(values, rank, region, from);
  ctx.accumulate(values, rank, offset, from);
  { ctx.fetch_add(counters, rank, offset, value) } -> std::same_as<std::int64_t>;
  ctx.flush(rank);
  ctx.flush_all();
  ctx.barrier();
  { ctx.messages() } -> std::same_as<conveyor&>;
};

/// A communication backend: a default-constructible tag with static name(),
/// nested `options` and `context` (constructible collectively from a
/// communicator and options), and the bulk exchange.
template <class B>
concept communication_backend =
    std::default_initializable<B> && std::default_initializable<typename B::options> &&
    std::constructible_from<typename B::context, const communicator&, typename B::options> &&
    backend_context<typename B::context> &&
    requires(const B& backend, const communicator& comm, const buckets<std::byte>& outgoing) {
      { B::name() } -> std::convertible_to<std::string_view>;
      { backend.exchange(comm, outgoing) } -> std::same_as<buckets<std::byte>>;
    };

namespace detail {
/// Records as bytes (offsets in bytes), and back: how typed records cross a backend that
/// exchanges bytes only.
template <class T>
[[nodiscard]] buckets<std::byte> records_as_bytes(const buckets<T>& records) {
  buckets<std::byte> bytes;
  bytes.offsets.resize(records.offsets.size());
  for (std::size_t r = 0; r < records.offsets.size(); ++r) bytes.offsets[r] = records.offsets[r] * sizeof(T);
  bytes.data.resize(records.data.size() * sizeof(T));
  if (!records.data.empty()) std::memcpy(bytes.data.data(), records.data.data(), bytes.data.size());
  return bytes;
}
template <class T>
[[nodiscard]] buckets<T> records_from_bytes(const buckets<std::byte>& bytes) {
  buckets<T> records;
  records.offsets.resize(bytes.offsets.size());
  for (std::size_t r = 0; r < bytes.offsets.size(); ++r) records.offsets[r] = bytes.offsets[r] / sizeof(T);
  records.data.resize(bytes.data.size() / sizeof(T));
  if (!records.data.empty()) std::memcpy(records.data.data(), bytes.data.data(), records.data.size() * sizeof(T));
  return records;
}
}  // namespace detail

/// Collective: exchanges records of any trivially copyable type through `backend`: by its own
/// exchange of such records where it has one (the built-ins' is a template), else as bytes
/// through the exchange(comm, buckets<std::byte>) the concept asks for, so a backend with only
/// that runs every algorithm. Bucket r of the result came from rank r.
template <communication_backend B, class T>
  requires std::is_trivially_copyable_v<T>
[[nodiscard]] buckets<T> exchange_records(const B& backend, const communicator& comm, const buckets<T>& outgoing) {
  if constexpr (requires {
                  { backend.exchange(comm, outgoing) } -> std::same_as<buckets<T>>;
                })
    return backend.exchange(comm, outgoing);
  else
    return detail::records_from_bytes<T>(backend.exchange(comm, detail::records_as_bytes(outgoing)));
}

/// Optional: a backend that can start a bulk exchange and let the caller finish it later, so the
/// algorithms overlap the next exchange with the current computation (the stages of the grid
/// SpGEMM). A backend without it still runs every algorithm: start_exchange below exchanges at
/// once.
template <class B>
concept starts_exchanges = requires(const B& backend, const communicator& comm, buckets<std::byte> outgoing) {
  { backend.start_exchange(comm, std::move(outgoing)) } -> std::same_as<pending_exchange<std::byte>>;
};

/// Collective: starts the exchange of `outgoing` through `backend`, in the background where the
/// backend starts exchanges, else completely now; finish() the result to have what arrived.
template <communication_backend B>
[[nodiscard]] pending_exchange<std::byte> start_exchange(const B& backend, const communicator& comm,
                                                         buckets<std::byte> outgoing) {
  if constexpr (starts_exchanges<B>)
    return backend.start_exchange(comm, std::move(outgoing));
  else
    return pending_exchange<std::byte>::arrived(backend.exchange(comm, outgoing));
}

/// Optional: a backend that exchanges buckets whose sizes both sides know already (a plan's)
/// without agreeing them again, saving P - 1 size messages per rank and exchange. A backend
/// without it still runs every plan: exchange_planned below exchanges as usual and checks that
/// the sizes are the ones planned.
template <class B>
concept exchanges_planned = requires(const B& backend, const communicator& comm, const buckets<std::byte>& outgoing,
                                     const std::vector<std::size_t>& incoming_offsets) {
  { backend.exchange_planned(comm, outgoing, incoming_offsets) } -> std::same_as<buckets<std::byte>>;
};

/// Collective: exchanges `outgoing` through `backend` when every rank knows what it will receive
/// (`incoming_offsets`, P + 1 entries, in records: bucket r of the result holds exactly what rank
/// r sends). Records of any trivially copyable type, as exchange_records.
template <communication_backend B, class T>
  requires std::is_trivially_copyable_v<T>
[[nodiscard]] buckets<T> exchange_planned(const B& backend, const communicator& comm, const buckets<T>& outgoing,
                                          const std::vector<std::size_t>& incoming_offsets) {
  if constexpr (requires {
                  { backend.exchange_planned(comm, outgoing, incoming_offsets) } -> std::same_as<buckets<T>>;
                }) {
    return backend.exchange_planned(comm, outgoing, incoming_offsets);
  } else if constexpr (exchanges_planned<B>) {
    std::vector<std::size_t> incoming_bytes(incoming_offsets);
    for (auto& at : incoming_bytes) at *= sizeof(T);
    return detail::records_from_bytes<T>(
        backend.exchange_planned(comm, detail::records_as_bytes(outgoing), incoming_bytes));
  } else {
    auto incoming = exchange_records(backend, comm, outgoing);
    comm.collectively([&] {
      TESSERA_REQUIRE(incoming.offsets == incoming_offsets, internal,
                      "exchange: rank {} received {} records where its plan expected {}", comm.rank(),
                      incoming.data.size(), incoming_offsets.empty() ? 0 : incoming_offsets.back());
    });
    return incoming;
  }
}

/// Collective: `outgoing`, laid out as `plan.send_offsets()`, moved along `plan` through
/// `backend`; bucket r of the result is what rank r sent, `plan.receive_offsets()` long.
template <communication_backend B, class T>
  requires std::is_trivially_copyable_v<T>
[[nodiscard]] buckets<T> exchange_planned(const B& backend, const communicator& comm, const buckets<T>& outgoing,
                                          const planned_exchange& plan) {
  return exchange_planned(backend, comm, outgoing, plan.receive_offsets());
}

// is_passive_target and transfers_device_memory, the optional declarations of a backend tag, are
// in comm/backend_traits.hpp (the communication code below the concepts reads them too).

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_BACKEND_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_BACKEND_HPP
#endif
