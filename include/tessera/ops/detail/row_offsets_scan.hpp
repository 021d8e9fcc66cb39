#pragma once
/// @file
/// Row offsets from per-row counts in place: the scan between the count and write passes of the
/// element-wise kernels (apply_drop_zeros, add).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/row_offsets_scan.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/index_types.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace tessera::detail {

/// ptr(r) = ptr(0) + ... + ptr(r) in place (counts at r + 1 become row offsets); returns the total,
/// so the caller sizes its output without reading ptr back. Not templated on a user's callable, so
/// its KOKKOS_LAMBDA is allowed (see elementwise.hpp).
template <class Exec, class Mem>
offset_type inclusive_scan_in_place(const Kokkos::View<offset_type*, Mem>& ptr, const char* label) {
  offset_type total = 0;
  Kokkos::parallel_scan(
      label, Kokkos::RangePolicy<Exec>(0, ptr.extent(0)),
      KOKKOS_LAMBDA(const std::size_t r, offset_type& running, const bool final) {
        running += ptr(r);
        if (final) ptr(r) = running;
      },
      total);
  return total;
}

}  // namespace tessera::detail
