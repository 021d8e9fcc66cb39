#pragma once
/// @file
/// detail::deep_copy: Kokkos::deep_copy's semantics; on the Serial host space, copies between
/// rank-1 host Views are one fence and one memcpy (fills one std::fill_n) in the caller's code.
///
/// Why not Kokkos::deep_copy everywhere: each of its instantiations compiles Kokkos's whole copy
/// dispatch (layout and space checks, a ViewCopy functor, profiling hooks), about 2.5 KB of code
/// per pair of View types. The README program on Serial instantiated ten of them; this path cut its
/// compile by 0.5 s and 30 MB (docs/getting-started.md, "Compile time"). Everything else (threaded
/// or device spaces, rank above 1, strided layouts) goes to Kokkos::deep_copy unchanged.
#include "calling_thread.hpp"
#include "error.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

namespace tessera::detail {

/// A rank-1 View in HostSpace itself (not a space that is merely host-accessible, such as CUDA's
/// UVM, where a memcpy from the host would migrate pages instead of using the copy engine), with
/// a layout whose rank-1 span is contiguous.
template <class V>
concept host_rank1_view = Kokkos::is_view<V>::value && std::is_same_v<typename V::memory_space, Kokkos::HostSpace> &&
                          V::rank == 1 && !std::is_same_v<typename V::array_layout, Kokkos::LayoutStride>;

/// Two host_rank1_views that a memcpy copies between: the same trivially copyable values.
template <class D, class S>
concept host_rank1_copy = host_rank1_view<D> && host_rank1_view<S> &&
                          std::is_same_v<typename D::non_const_value_type, typename S::non_const_value_type> &&
                          std::is_trivially_copyable_v<typename D::non_const_value_type>;

/// A host_rank1_view that `Value` can fill.
template <class V, class Value>
concept host_rank1_fill = host_rank1_view<V> && std::is_convertible_v<const Value&, typename V::non_const_value_type>;

/// The inline path's copy or fill, once what the copy waits for has finished.
template <class D, class S>
void copy_or_fill_on_host(const D& dst, const S& src) {
  if constexpr (host_rank1_copy<D, S>) {
    TESSERA_REQUIRE(dst.extent(0) == src.extent(0), internal, "deep_copy from a View of {} elements into one of {}",
                    src.extent(0), dst.extent(0));
    if (dst.extent(0) != 0 && dst.data() != src.data())
      std::memcpy(static_cast<void*>(dst.data()), static_cast<const void*>(src.data()),
                  dst.extent(0) * sizeof(typename D::non_const_value_type));
  } else {
    std::fill_n(dst.data(), dst.extent(0), static_cast<typename D::non_const_value_type>(src));
  }
}

/// Kokkos::deep_copy(dst, src) for a View or a scalar source. Kokkos copies and fills large host
/// Views in parallel on a threaded host space (and places their pages by first touch), so only
/// the Serial space takes the inline path.
template <class Destination, class Source>
void deep_copy(Destination&& dst, const Source& src) {
  using D = std::remove_cvref_t<Destination>;
  if constexpr (runs_on_calling_thread<Kokkos::DefaultHostExecutionSpace> &&
                (host_rank1_copy<D, Source> || host_rank1_fill<D, Source>)) {
    Kokkos::fence();  // as Kokkos::deep_copy: writes of kernels still running land first
    copy_or_fill_on_host(dst, src);
  } else {
    Kokkos::deep_copy(std::forward<Destination>(dst), src);
  }
}

/// Kokkos::deep_copy(space, dst, src): ordered on `space` (which it waits for, not every instance).
template <class ExecutionSpace, class Destination, class Source>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void deep_copy(const ExecutionSpace& space, Destination&& dst, const Source& src) {
  using D = std::remove_cvref_t<Destination>;
  if constexpr (runs_on_calling_thread<ExecutionSpace> && (host_rank1_copy<D, Source> || host_rank1_fill<D, Source>)) {
    space.fence();
    copy_or_fill_on_host(dst, src);
  } else {
    Kokkos::deep_copy(space, std::forward<Destination>(dst), src);
  }
}

}  // namespace tessera::detail
