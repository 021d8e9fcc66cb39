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

#include "../comm/buckets.hpp"
#include "../comm/communicator.hpp"
#include "../comm/conveyor.hpp"
#include "../comm/personalised_exchange.hpp"
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

/// The primitives a backend's context implements when it derives from one_sided_api
/// (checked with double elements). Each receives a region already checked against the target's
/// segment and a local buffer `local_stride` elements per block, and returns a request whose
/// completion is local (docs/communication.md):
///  - start_get / start_put: copy the region's blocks from / to `rank`'s part of the segment;
///  - start_accumulate: add them element-wise (`scalar` says the element type), atomically per
///    element with respect to other accumulates and fetch_adds;
///  - start_fetch_add: atomic 64-bit add at `offset`, writing the previous value to `*old`;
///  - flush(rank), flush_all(): remote completion; barrier(): collective, everything visible;
///  - allocate<T>(n), expose(span): collective registration, returning segment<T> over a
///    backend-derived segment_state; messages(): the conveyor behind mailboxes.
template <class C>
concept one_sided_primitives =
    requires(C& ctx, const segment_state& state, const strided_region& region, std::span<double> memory, int rank,
             std::size_t offset, std::byte* into, const std::byte* from, std::size_t local_stride, scalar_code scalar,
             std::int64_t value, std::int64_t* old) {
      { std::as_const(ctx).comm() } -> std::same_as<const communicator&>;
      { ctx.template allocate<double>(offset) } -> std::same_as<segment<double>>;
      { ctx.expose(memory) } -> std::same_as<segment<double>>;
      { ctx.start_get(state, rank, region, into, local_stride) } -> std::same_as<request>;
      { ctx.start_put(state, rank, region, from, local_stride) } -> std::same_as<request>;
      { ctx.start_accumulate(state, rank, region, from, local_stride, scalar) } -> std::same_as<request>;
      { ctx.start_fetch_add(state, rank, offset, value, old) } -> std::same_as<request>;
      ctx.flush(rank);
      ctx.flush_all();
      ctx.barrier();
      { ctx.messages() } -> std::same_as<conveyor&>;
    };

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

/// Optional: a backend whose one-sided operations complete without the target
/// running tessera code (MPI's own progress, or a progress rank, serves them)
/// declares `static constexpr bool passive_target = true;`. Algorithms may then
/// leave an operation while others still read from them, ordering later
/// overwrites by their next barrier instead of a closing one. A backend that
/// serves requests only inside tessera calls (the aggregator) must not: its
/// target could block in a plain MPI call while a reader waits for it.
template <class B>
consteval bool declares_passive_target() {
  if constexpr (requires { { B::passive_target } -> std::convertible_to<bool>; })
    return B::passive_target;
  else
    return false;
}
template <class B>
inline constexpr bool is_passive_target = declares_passive_target<B>();

/// Optional: a backend whose context passes local buffers and windows to MPI calls without touching
/// them on the host declares `static constexpr bool device_memory_transfers = true;`. A device-aware
/// MPI build may then give it device memory (comm/mpi_memory.hpp decides).
template <class B>
consteval bool declares_device_memory_transfers() {
  if constexpr (requires { { B::device_memory_transfers } -> std::convertible_to<bool>; })
    return B::device_memory_transfers;
  else
    return false;
}
template <class B>
inline constexpr bool transfers_device_memory = declares_device_memory_transfers<B>();

}  // namespace tessera
