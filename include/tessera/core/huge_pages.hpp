#pragma once
/// @file
/// Asking the kernel to back a large, freshly allocated host array with transparent huge pages.
///
/// Fresh arrays of tens of megabytes (the rows of a SpGEMM's C) are first touched page by page:
/// with 4 KiB pages their page faults took a third of a Laplacian product's numeric pass; 2 MiB
/// pages cut the faults 512-fold. Where the system runs transparent huge pages only on request
/// ("madvise" mode) this is that request; elsewhere it changes nothing.
///
/// Only arrays of at least huge_page_min_bytes are advised. An earlier benchmark machine (a VM,
/// THP in madvise mode) faulted arrays of half a gigabyte and more in slower as huge pages, so they
/// were left alone (huge_page_max_bytes was 256 MiB); on the 2-core EPYC VM of 2026-11-27 the same
/// cap cost R-MAT 16 products (C of a gigabyte per rank) 18%: 1.41 s -> 1.16 s with the cap lifted,
/// R-MAT 15 and 17 and the Laplacian the same or faster. The cap is now far above any array a rank
/// holds; it stays as the one place to put a limit back.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_HUGE_PAGES_HPP
#endif

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#endif

namespace tessera {

/// Smaller arrays are left alone: a huge page would mostly be padding.
inline constexpr std::size_t huge_page_min_bytes = std::size_t{4} << 20;
/// Larger arrays are left alone: see the file comment.
inline constexpr std::size_t huge_page_max_bytes = std::size_t{1} << 40;  // 1 TiB

/// Advise huge pages for the whole pages inside [data, data + bytes) (host memory not yet
/// touched; a hint: failure is harmless and ignored).
inline void advise_huge_pages([[maybe_unused]] void* data, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (data == nullptr || bytes < huge_page_min_bytes || bytes > huge_page_max_bytes) return;
  constexpr std::uintptr_t page = 4096;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

/// Whether the mapping that holds `address` may be backed by transparent huge pages: on Linux its
/// `THPeligible` in /proc/self/smaps (for shared memory, what the tmpfs it lives on was mounted
/// with, `huge=`; MPI's shared windows live in /dev/shm, mounted `huge=never` by most systems);
/// false elsewhere or when the kernel does not say.
[[nodiscard]] inline bool huge_pages_eligible([[maybe_unused]] const void* address) noexcept {
#if defined(__linux__)
  std::FILE* smaps = std::fopen("/proc/self/smaps", "r");
  if (smaps == nullptr) return false;
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  char line[512];
  bool inside = false, eligible = false;
  while (std::fgets(line, sizeof line, smaps) != nullptr) {
    unsigned long begin = 0, end = 0;
    // A mapping's first line: "begin-end perms offset device inode path"; its fields follow.
    if (std::sscanf(line, "%lx-%lx ", &begin, &end) == 2 && std::strchr(line, ' ') > std::strchr(line, '-')) {
      inside = at >= begin && at < end;
    } else if (inside && std::strncmp(line, "THPeligible:", 12) == 0) {
      eligible = std::atoi(line + 12) == 1;
      break;
    }
  }
  std::fclose(smaps);
  return eligible;
#else
  return false;
#endif
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_HUGE_PAGES_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_HUGE_PAGES_HPP
#endif
