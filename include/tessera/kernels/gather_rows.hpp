#pragma once
/// @file
/// Rows of a dense block picked by a list of row positions: what SpMM's owners pack for their
/// requesters, what the grid SpMM answers and sends as partial sums. One kernel, any space.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_GATHER_ROWS_HPP
#endif

#include "../core/deep_copy.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace tessera::kernels {

/// into(t, :) = src(rows(t), :) for every t, on ExecSpace (not fenced). `into` may be any 2-D View
/// (or unmanaged host buffer) the space can write, with src's width.
template <class ExecSpace, class Src, class Rows, class Into>
void gather_rows(const Src& src, const Rows& rows, const Into& into) {
  const auto k = src.extent(1);
  Kokkos::parallel_for(
      "tessera::gather_rows", Kokkos::RangePolicy<ExecSpace>(0, rows.extent(0)), KOKKOS_LAMBDA(const std::size_t t) {
        const auto r = static_cast<std::size_t>(rows(t));
        for (std::size_t v = 0; v < k; ++v) into(t, v) = src(r, v);
      });
}

/// The same into host memory `out` (an exchange's buffer, a window): by the space's own threads
/// where they can write host memory, else gathered where src lives and copied once. Fenced.
template <class ExecSpace, class Src, class Rows, class HostOut>
void gather_rows_to_host(const Src& src, const Rows& rows, const HostOut& out) {
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
    gather_rows<ExecSpace>(src, rows, out);
    ExecSpace().fence();
  } else {
    const Kokkos::View<typename Src::non_const_value_type**, Kokkos::LayoutRight, typename Src::memory_space> packed(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::gather_rows::packed")), rows.extent(0),
        src.extent(1));
    gather_rows<ExecSpace>(src, rows, packed);
    tessera::detail::deep_copy(out, packed);
  }
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_GATHER_ROWS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_GATHER_ROWS_HPP
#endif
