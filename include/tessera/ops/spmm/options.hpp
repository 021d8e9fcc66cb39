#pragma once
/// @file
/// The options of spmm: which node-local kernel, and when Y is written past the caches.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_OPTIONS_HPP
#endif

#include <cstddef>

namespace tessera {

/// The node-local kernel of SpMM.
enum class spmm_kernel {
  tessera,         ///< kernels/spmm_rows.hpp: row-major X and Y, k innermost; overlaps the halo fetch
  kokkos_kernels,  ///< KokkosSparse::spmv on a LayoutLeft multivector gathered in column-map order (no overlap)
};

/// Options of spmm.
struct spmm_options {
  spmm_kernel kernel = spmm_kernel::tessera;
  /// tessera kernel on the host: write rows of Y with non-temporal stores (past
  /// the caches, without reading Y's lines first) when this rank's Y has at
  /// least this many bytes. A Y larger than a core's share of cache is evicted
  /// before anyone reads it; streaming it saves a third of the memory traffic
  /// of a k >= 8 product. Needs AVX-512, doubles and k a multiple of 8
  /// (kernels::has_streaming_rows); SIZE_MAX turns it off.
  std::size_t streaming_store_bytes = std::size_t{8} << 20;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_OPTIONS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_OPTIONS_HPP
#endif
