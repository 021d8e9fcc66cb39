#pragma once
/// @file
/// What a user chooses for bsgemm: the memory budget, screening, the tile kernel; and the two
/// helpers that plan B's distribution before any value exists (pattern_shape,
/// bsgemm_column_owners).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_OPTIONS_HPP
#endif

#include "../../distribution/replicated_columns.hpp"
#include "../../distribution/tiled_range.hpp"
#include "../../storage/block_sparse.hpp"
#include "schedule.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera {

/// How bsgemm multiplies tiles on a rank.
enum class bsgemm_tile_kernel {
  /// `packed` where it is fast (a host execution space and a SIMD kernel for T
  /// compiled in, kernels::has_simd_tile_kernel), `blas` otherwise.
  automatic,
  /// One KokkosBlas::gemm per tile product (the system BLAS on the host,
  /// cuBLAS/rocBLAS on devices).
  blas,
  /// kernels/packed_tile_gemm.hpp: each A tile packed once per chunk, then all
  /// its products run on the packed copy, B read in place. Host only.
  packed,
};

/// Options of bsgemm.
struct bsgemm_options {
  /// Bytes of memory granted to the product's working set on each rank. Half
  /// bounds a block (its B columns and C tiles), a quarter a chunk of A tiles,
  /// the last quarter the chunk being prefetched.
  std::size_t memory_bytes = std::size_t{1} << 30;
  /// Skip tile products with ||A_ik|| * ||B_kj|| below this (0: no screening).
  double screening_threshold = 0.0;
  /// The node-local tile kernel (docs/block_sparse.md, "Tile products").
  bsgemm_tile_kernel tile_kernel = bsgemm_tile_kernel::automatic;
};

/// A shape with zero norms from a pattern predicate `nonzero(ti, tj)` (to plan distributions before any value exists).
template <class Pattern>
[[nodiscard]] block_sparse_shape pattern_shape(const tiled_range& rows, const tiled_range& cols, Pattern&& nonzero) {
  std::vector<tile_norm> tiles;
  for (std::size_t ti = 0; ti < rows.num_tiles(); ++ti)
    for (std::size_t tj = 0; tj < cols.num_tiles(); ++tj)
      if (nonzero(ti, tj)) tiles.push_back({static_cast<std::int64_t>(ti), static_cast<std::int64_t>(tj), 1.0});
  return block_sparse_shape(rows, cols, std::move(tiles));
}

/// Grid columns of B's tile columns for A * B on q grid columns: balanced by
/// flop count, mirrored-cyclic (the seed's §3.2.1), then rebalanced by moves
/// and swaps (rebalance_assignment). Give them to
/// replicated_columns::make_tile_mapping when distributing B.
[[nodiscard]] inline std::vector<int> bsgemm_column_owners(const block_sparse_shape& a, const block_sparse_shape& b,
                                                           int q) {
  const auto flops = bsgemm_column_flops(a, b, 0.0);
  auto owners = mirrored_cyclic_assignment(flops, q);
  rebalance_assignment(flops, owners, q);
  return owners;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_OPTIONS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_OPTIONS_HPP
#endif
