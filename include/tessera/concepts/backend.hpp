#pragma once
/// @file
/// The requirements of a communication backend (docs/communication.md has the
/// completion semantics of each operation).
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
///  - exchange(comm, buckets): the bulk personalised all-to-all.

#include "../comm/buckets.hpp"
#include "../comm/communicator.hpp"
#include "../comm/conveyor.hpp"
#include "../comm/request.hpp"
#include "../comm/segment.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace tessera {

/// What a backend's context must offer (checked with double and int64 elements).
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
