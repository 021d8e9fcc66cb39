#pragma once
/// @file
/// Row offsets between tessera's 64-bit offset_type and the 32-bit ints that vendor sparse
/// libraries take (cuSPARSE through Kokkos-Kernels), converted in the execution space.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_OFFSET_WIDTH_HPP
#endif

#include "../core/index_types.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace tessera::kernels {

/// `from` with every element converted to the type of `to` (as long), in the execution space: row
/// offsets narrowed to int (the caller knows every value is at most INT_MAX) or widened back.
template <class ExecSpace, class From, class MemorySpace, class ToView>
void offsets_into(const ExecSpace& exec, const Kokkos::View<const From*, MemorySpace>& from, const ToView& to) {
  using To = typename ToView::non_const_value_type;
  Kokkos::parallel_for(
      "tessera::convert_offsets", Kokkos::RangePolicy<ExecSpace>(exec, 0, from.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { to(i) = static_cast<To>(from(i)); });
}

/// `from` with every element converted to `To`, in a new View (see offsets_into).
template <class To, class ExecSpace, class From, class MemorySpace>
Kokkos::View<To*, MemorySpace> offsets_as(const ExecSpace& exec, const Kokkos::View<const From*, MemorySpace>& from) {
  const Kokkos::View<To*, MemorySpace> to(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::offsets"),
                                          from.extent(0));
  offsets_into(exec, from, to);
  return to;
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_OFFSET_WIDTH_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_OFFSET_WIDTH_HPP
#endif
