#pragma once
/// @file
/// Whether the runtimes tessera calls into are still up. A matrix or communicator kept past its
/// tessera::environment would otherwise reach MPI after MPI_Finalize (Open MPI aborts the job) or
/// allocate a View after Kokkos::finalize (Kokkos aborts): both become a tessera::error here.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_RUNTIME_LIFETIME_HPP
#endif

#include "error.hpp"

#include <mpi.h>

namespace tessera::detail {

/// Set by a tessera::environment when it finalises the Kokkos it started (Kokkos 3.4 has no
/// Kokkos::is_finalized, and a Kokkos the user started and ended is the user's to watch).
inline bool& kokkos_ended_by_environment() noexcept {
  static bool ended = false;
  return ended;
}

/// Throws invalid_argument naming the runtime if MPI is finalised or the environment ended Kokkos.
inline void require_runtimes_alive() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  TESSERA_REQUIRE(!finalized, invalid_argument,
                  "MPI is already finalised (the tessera::environment ended): every matrix, dense block, plan and "
                  "communicator must be used, and destroyed, before the environment ends");
  TESSERA_REQUIRE(!kokkos_ended_by_environment(), invalid_argument,
                  "Kokkos is already finalised (the tessera::environment ended): every matrix, dense block and plan "
                  "must be used, and destroyed, before the environment ends");
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_RUNTIME_LIFETIME_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_RUNTIME_LIFETIME_HPP
#endif
