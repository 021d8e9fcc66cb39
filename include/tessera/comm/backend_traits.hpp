#pragma once
/// @file
/// What a backend tag may declare about itself, read by the algorithms and by the code that
/// decides where MPI's memory lives (mpi_memory.hpp). Both are optional: a backend that declares
/// nothing gets the safe answer (false).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_BACKEND_TRAITS_HPP
#endif

#include <concepts>

namespace tessera {

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

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_BACKEND_TRAITS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_BACKEND_TRAITS_HPP
#endif
