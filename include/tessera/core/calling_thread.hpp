#pragma once
/// @file
/// runs_on_calling_thread: whether an execution space runs a kernel's work items one after
/// another on the thread that launched it (Kokkos::Serial), where plain stores may stand in for
/// atomics and a host memcpy for a parallel copy.
#include <Kokkos_Core.hpp>

#include <type_traits>

namespace tessera::detail {

template <class Exec>
inline constexpr bool runs_on_calling_thread =
#ifdef KOKKOS_ENABLE_SERIAL
    std::is_same_v<Exec, Kokkos::Serial>;
#else
    false;
#endif

}  // namespace tessera::detail
