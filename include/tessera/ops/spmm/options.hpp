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

/// When spmm reads the rows of X that node peers own where they lie, X being in node-shared memory
/// (share_on_node) on every rank and every rank read from on the reader's node, instead of
/// fetching them.
enum class x_in_place {
  /// When X's shared memory has transparent huge pages (node_shared_array::huge_pages) or the
  /// node's X spans at most x_in_place_small_bytes: on 4 KiB pages the random reads of a larger
  /// X's rows missed the TLB and the product measured up to 1.3x slower than fetching into
  /// private memory (which has huge pages); with them, up to 1.25x faster (docs/operations.md).
  automatic,
  always,  ///< whenever X is node-shared (and every rank read from is on the node)
  never,   ///< always fetch
};

/// x_in_place::automatic reads a node's X in place without huge pages up to this size: about what
/// a core's TLB reaches with 4 KiB pages (1,536 to 2,048 entries).
inline constexpr std::size_t x_in_place_small_bytes = std::size_t{6} << 20;

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
  /// tessera kernel on host memory: when to read a node-shared X in place (x_in_place).
  x_in_place read_x_in_place = x_in_place::automatic;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_OPTIONS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_OPTIONS_HPP
#endif
