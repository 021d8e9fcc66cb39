#pragma once
/// @file
/// The public one-sided API of every backend context, written once over the
/// few primitives each backend implements (CRTP): argument checks, blocking
/// forms, contiguous forms and View registration live here.

#include "../../core/error.hpp"
#include "../request.hpp"
#include "../segment.hpp"
#include "remote_op.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <span>
#include <type_traits>

namespace tessera::detail {

/// Derived implements:
///   segment<T> allocate<T>(n)                     collective
///   segment<T> expose<T>(std::span<T>)            collective
///   request start_get(const segment_state&, int rank, strided_region, std::byte* local, std::size_t local_stride_bytes)
///   request start_put(... const std::byte* local ...)
///   request start_accumulate(... scalar_code ...)
///   request start_fetch_add(const segment_state&, int rank, std::size_t offset, std::int64_t value, std::int64_t* old)
///   void flush(int rank), void flush_all(), void barrier()
template <class Derived>
class context_base {
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
    check_region(seg.state(), rank, region, "get");
    check_local(into.size(), region, local_stride, "get");
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
    check_region(seg.state(), rank, region, "put");
    check_local(from.size(), region, local_stride, "put");
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
    check_region(seg.state(), rank, region, "accumulate");
    check_local(from.size(), region, local_stride, "accumulate");
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
    check_region(seg.state(), rank, strided_region::contiguous(offset, 1), "fetch_add");
    return self().start_fetch_add(seg.state(), rank, offset, value, &old);
  }
  /// Atomically add `value` to element `offset` of `rank`'s part; the previous value.
  std::int64_t fetch_add(const segment<std::int64_t>& seg, int rank, std::size_t offset, std::int64_t value) {
    std::int64_t old = 0;
    fetch_add_nb(seg, rank, offset, value, old).wait();
    return old;
  }

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
};

/// Copy between a local strided layout and a packed buffer (helpers for backends).
inline void pack_local(const std::byte* local, const strided_region& r, std::size_t local_stride,
                       std::size_t element_size, std::byte* packed) {
  pack_region(local, {0, r.count, r.block_length, local_stride}, element_size, packed);
}
inline void unpack_local(std::byte* local, const strided_region& r, std::size_t local_stride,
                         std::size_t element_size, const std::byte* packed) {
  unpack_region(local, {0, r.count, r.block_length, local_stride}, element_size, packed);
}

}  // namespace tessera::detail
