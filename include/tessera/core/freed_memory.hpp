#pragma once
/// @file
/// Keeping freed host memory in the process for the next allocation, instead of handing it back to
/// the operating system.
///
/// glibc returns large freed blocks (mmap'd ones, and the top of the heap) to the kernel at once,
/// so a loop that makes and drops Views of the same size (SpDNN's batches, a build per layer)
/// faults every page in again, and Kokkos' parallel zero-fill makes its threads take those faults
/// together, serialised on the process's memory-map lock: measured on 1 rank x 2 OpenMP threads,
/// SpDNN inference 1.1-1.3x slower than 2 ranks x 1 thread, and its set-up 1.3x slower, until
/// freed memory was kept. The cost is a footprint that stays at its peak.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_FREED_MEMORY_HPP
#endif

#include <cstddef>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tessera {

/// Keep freed blocks of up to 32 MiB (glibc's largest mmap threshold) in the heap, and never trim
/// the heap below `trim_bytes` of free memory. A no-op where the C library is not glibc.
/// @return whether the C library took the settings.
inline bool retain_freed_memory(std::size_t trim_bytes = std::size_t{1} << 30) noexcept {
#if defined(__GLIBC__)
  constexpr int largest_heap_block = 32 << 20;
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, largest_heap_block) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, static_cast<int>(trim_bytes > (std::size_t{1} << 30) ? (std::size_t{1} << 30) : trim_bytes)) == 1;
  return mmap_ok && trim_ok;
#else
  (void)trim_bytes;
  return false;
#endif
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_FREED_MEMORY_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_FREED_MEMORY_HPP
#endif
