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

/// `wide` as int, element by element (the caller knows every value is at most INT_MAX).
template <class ExecSpace, class MemorySpace>
Kokkos::View<int*, MemorySpace> narrow_offsets(const ExecSpace& exec, const Kokkos::View<const offset_type*, MemorySpace>& wide) {
  const Kokkos::View<int*, MemorySpace> narrow(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::offsets32"),
                                               wide.extent(0));
  Kokkos::parallel_for(
      "tessera::narrow_offsets", Kokkos::RangePolicy<ExecSpace>(exec, 0, wide.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { narrow(i) = static_cast<int>(wide(i)); });
  return narrow;
}

/// `narrow` as offset_type, element by element.
template <class ExecSpace, class MemorySpace>
Kokkos::View<offset_type*, MemorySpace> widen_offsets(const ExecSpace& exec, const Kokkos::View<const int*, MemorySpace>& narrow) {
  const Kokkos::View<offset_type*, MemorySpace> wide(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::offsets64"),
                                                     narrow.extent(0));
  Kokkos::parallel_for(
      "tessera::widen_offsets", Kokkos::RangePolicy<ExecSpace>(exec, 0, narrow.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { wide(i) = static_cast<offset_type>(narrow(i)); });
  return wide;
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_OFFSET_WIDTH_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_OFFSET_WIDTH_HPP
#endif
