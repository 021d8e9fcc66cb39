#pragma once
/// @file
/// Which algorithm family an execution space gets: the host ones (a row per thread, stable
/// counting sorts in chunks, registers per row) or the device ones (work split by nonzeros,
/// lanes across the dense width, sorts by atomics then keys), each the faster where it runs.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_DEVICE_ALGORITHMS_HPP
#endif

#include <Kokkos_Core.hpp>

namespace tessera {

/// True when tessera runs its device algorithms on ExecSpace: every space that cannot run host
/// code (CUDA, HIP, SYCL). A build with `TESSERA_DEVICE_ALGORITHMS_ON_HOST` defined takes them
/// on every space: the test suite builds its operation tests that way too, so the device
/// algorithms are checked on Serial and OpenMP where no GPU is.
template <class ExecSpace>
inline constexpr bool uses_device_algorithms =
#if defined(TESSERA_DEVICE_ALGORITHMS_ON_HOST)
    true;
#else
    !Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
#endif

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_DEVICE_ALGORITHMS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_DEVICE_ALGORITHMS_HPP
#endif
