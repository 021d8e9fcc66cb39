#pragma once
/// @file
/// one_sided_api<Context>: the public one-sided API of a backend context (everything
/// `backend_context` asks for), written once over the few primitives a backend implements
/// (`one_sided_primitives`). It adds the argument checks (a target rank outside the
/// communicator, a region beyond the target's segment, overlapping strides, a short local
/// buffer: each an error that names what was wrong), the blocking and contiguous forms, and
/// View registration. Every built-in backend derives from it; so can a researcher's:
///
/// @code
/// class my_backend::context : public tessera::one_sided_api<my_backend::context> {
///  public:
///    // comm(), allocate<T>(n), expose(span), messages(), flush(rank), flush_all(), barrier(),
///    // and start_get / start_put / start_accumulate / start_fetch_add: see one_sided_primitives.
/// };
/// @endcode
///
/// tessera/testing/backend_conformance.hpp checks the result.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_ONE_SIDED_API_HPP
#endif

#include "communicator.hpp"
#include "conveyor.hpp"
#include "../core/error.hpp"
#include "detail/remote_op.hpp"
#include "request.hpp"
#include "scalar_code.hpp"
#include "segment.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <span>
#include <type_traits>

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

/// The full one-sided API over `Derived`'s primitives (CRTP: `class context : public
/// one_sided_api<context>`). The primitives see only checked, non-empty regions.
template <class Derived>
class one_sided_api {
 public:
  /// Register a contiguous, host-accessible Kokkos View (collective).
  ///
  /// Backends that serve requests from another process (progress_rank) copy
  /// the View into node-shared memory: read the results from segment.local(),
  /// which is the View itself on mpi_rma and aggregator.
  template <class View>
    requires Kokkos::is_view<View>::value
  auto expose_view(const View& view) {
    static_assert(View::rank == 1, "tessera: expose a rank-1 View (or a contiguous span of a larger one)");
    static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible,
                  "tessera: one-sided segments must be host-accessible memory in this version; copy a device View "
                  "to a HostMirror first");
    TESSERA_REQUIRE(view.span_is_contiguous(), invalid_argument, "expose: the View is not contiguous");
    using T = typename View::value_type;
    return self().template expose<T>(std::span<T>(view.data(), view.span()));
  }

  // ---- get -----------------------------------------------------------------
  /// Start copying `region` of `rank`'s part of `seg` into `into` (blocks `local_stride` apart).
  template <class T>
  [[nodiscard]] request get_strided_nb(const segment<T>& seg, int rank, const strided_region& region,
                                       std::span<T> into, std::size_t local_stride = 0) {
    local_stride = local_stride == 0 ? region.block_length : local_stride;
    detail::check_region(seg.state(), rank, region, "get");
    detail::check_local(into.size(), region, local_stride, "get");
    if (region.elements() == 0) return {};
    return self().start_get(seg.state(), rank, region, reinterpret_cast<std::byte*>(into.data()), local_stride);
  }
  template <class T>
  [[nodiscard]] request get_nb(const segment<T>& seg, int rank, std::size_t offset, std::span<T> into) {
    return get_strided_nb(seg, rank, strided_region::contiguous(offset, into.size()), into);
  }
  /// Copy `region` of `rank`'s part into `into`, packed (or `local_stride` apart); returns when it arrived.
  template <class T>
  void get_strided(const segment<T>& seg, int rank, const strided_region& region, std::span<T> into,
                   std::size_t local_stride = 0) {
    get_strided_nb(seg, rank, region, into, local_stride).wait();
  }
  template <class T>
  void get(const segment<T>& seg, int rank, std::size_t offset, std::span<T> into) {
    get_nb(seg, rank, offset, into).wait();
  }

  // ---- put -----------------------------------------------------------------
  template <class T>
  [[nodiscard]] request put_strided_nb(const segment<T>& seg, int rank, const strided_region& region,
                                       std::span<const T> from, std::size_t local_stride = 0) {
    local_stride = local_stride == 0 ? region.block_length : local_stride;
    detail::check_region(seg.state(), rank, region, "put");
    detail::check_local(from.size(), region, local_stride, "put");
    if (region.elements() == 0) return {};
    return self().start_put(seg.state(), rank, region, reinterpret_cast<const std::byte*>(from.data()), local_stride);
  }
  template <class T>
  [[nodiscard]] request put_nb(const segment<T>& seg, int rank, std::size_t offset, std::span<const T> from) {
    return put_strided_nb(seg, rank, strided_region::contiguous(offset, from.size()), from);
  }
  /// Write `from` into `region` of `rank`'s part. Returns when `from` may be reused;
  /// the target sees the data after flush(rank), flush_all() or barrier().
  template <class T>
  void put_strided(const segment<T>& seg, int rank, const strided_region& region, std::span<const T> from,
                   std::size_t local_stride = 0) {
    put_strided_nb(seg, rank, region, from, local_stride).wait();
  }
  template <class T>
  void put(const segment<T>& seg, int rank, std::size_t offset, std::span<const T> from) {
    put_nb(seg, rank, offset, from).wait();
  }

  // ---- accumulate (sum) ----------------------------------------------------
  template <class T>
  [[nodiscard]] request accumulate_strided_nb(const segment<T>& seg, int rank, const strided_region& region,
                                              std::span<const T> from, std::size_t local_stride = 0) {
    static_assert(accumulable<T>, "tessera: accumulate needs int32/int64/uint32/uint64/float/double elements");
    local_stride = local_stride == 0 ? region.block_length : local_stride;
    detail::check_region(seg.state(), rank, region, "accumulate");
    detail::check_local(from.size(), region, local_stride, "accumulate");
    if (region.elements() == 0) return {};
    return self().start_accumulate(seg.state(), rank, region, reinterpret_cast<const std::byte*>(from.data()),
                                   local_stride, scalar_code_of<T>());
  }
  template <class T>
  [[nodiscard]] request accumulate_nb(const segment<T>& seg, int rank, std::size_t offset, std::span<const T> from) {
    return accumulate_strided_nb(seg, rank, strided_region::contiguous(offset, from.size()), from);
  }
  /// Add `from` element-wise into `rank`'s part at `offset` (atomic per element
  /// with respect to other accumulates and fetch_adds).
  template <class T>
  void accumulate(const segment<T>& seg, int rank, std::size_t offset, std::span<const T> from) {
    accumulate_nb(seg, rank, offset, from).wait();
  }
  template <class T>
  void accumulate_strided(const segment<T>& seg, int rank, const strided_region& region, std::span<const T> from,
                          std::size_t local_stride = 0) {
    accumulate_strided_nb(seg, rank, region, from, local_stride).wait();
  }

  // ---- fetch_add -----------------------------------------------------------
  /// Start an atomic 64-bit fetch-and-add; `old` receives the previous value on completion.
  [[nodiscard]] request fetch_add_nb(const segment<std::int64_t>& seg, int rank, std::size_t offset,
                                     std::int64_t value, std::int64_t& old) {
    detail::check_region(seg.state(), rank, strided_region::contiguous(offset, 1), "fetch_add");
    return self().start_fetch_add(seg.state(), rank, offset, value, &old);
  }
  /// Atomically add `value` to element `offset` of `rank`'s part; the previous value.
  std::int64_t fetch_add(const segment<std::int64_t>& seg, int rank, std::size_t offset, std::int64_t value) {
    std::int64_t old = 0;
    fetch_add_nb(seg, rank, offset, value, old).wait();
    return old;
  }

 private:
  Derived& self() noexcept {
    static_assert(one_sided_primitives<Derived>,
                  "tessera: a backend context that derives from one_sided_api<context> must implement the "
                  "primitives of tessera::one_sided_primitives (comm/one_sided_api.hpp): comm(), allocate<T>(n), "
                  "expose(span), start_get, start_put, start_accumulate, start_fetch_add, flush(rank), flush_all(), "
                  "barrier() and messages(), all public");
    return static_cast<Derived&>(*this);
  }
};

/// Copy the blocks of `r` (`local_stride` elements apart in `local`) into the packed buffer
/// `packed`: the staging a backend does when its transport wants contiguous bytes.
inline void pack_strided(const std::byte* local, const strided_region& r, std::size_t local_stride,
                         std::size_t element_size, std::byte* packed) {
  detail::pack_region(local, {0, r.count, r.block_length, local_stride}, element_size, packed);
}
/// The inverse of pack_strided: spread `packed` over the blocks of `r` in `local`.
inline void unpack_strided(std::byte* local, const strided_region& r, std::size_t local_stride,
                           std::size_t element_size, const std::byte* packed) {
  detail::unpack_region(local, {0, r.count, r.block_length, local_stride}, element_size, packed);
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_ONE_SIDED_API_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_ONE_SIDED_API_HPP
#endif
