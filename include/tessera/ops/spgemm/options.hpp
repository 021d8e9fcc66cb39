#pragma once
/// @file
/// The options of spgemm, spgemm_masked and spgemm_accumulate (GraphBLAS's GrB_mxm pieces).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_OPTIONS_HPP
#endif

#include "../semiring.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace tessera {

/// Which node-local kernel multiplies.
enum class spgemm_kernel {
  /// Gustavson without mask or budget on host execution spaces (Kokkos-Kernels for plus-times
  /// elsewhere), expand-sort-compress otherwise
  automatic,
  kokkos_kernels,  ///< KokkosSparse::spgemm_symbolic/numeric (plus-times only; no mask, no budget)
  esc,             ///< tessera's expand-sort-compress: any semiring, masks, memory budgets
  gustavson,       ///< tessera's row-wise Gustavson, dense accumulators: any semiring; no mask, no budget; host spaces only
};

/// Which entries of a mask select C's entries (GraphBLAS's GrB_STRUCTURE or the default value mask).
enum class mask_kind {
  structure,  ///< every stored entry of the mask, whatever its value
  values,     ///< the stored entries whose value is nonzero
};

/// Options of spgemm, spgemm_masked and spgemm_accumulate: a plain aggregate. The semiring is
/// deduced, so no template argument is spelled:
/// @code
/// auto d = tessera::spgemm(A, A, tessera::spgemm_options{.ring = tessera::semirings::min_plus{}});
/// @endcode
template <class Semiring = semirings::plus_times>
struct spgemm_options {
  Semiring ring{};
  spgemm_kernel kernel = spgemm_kernel::automatic;
  /// Bytes the products of one batch of rows may take (0: no limit). Rows are
  /// multiplied in batches whose expanded products fit; a single row larger
  /// than the budget still runs, alone.
  std::size_t memory_budget_bytes = 0;
  /// If set, receives the number of row batches this rank used.
  std::size_t* batches = nullptr;
  /// Multiply A^T instead of A, B^T instead of B (GraphBLAS's GrB_INP0 / GrB_INP1 = GrB_TRAN).
  /// The operand is transposed first (transpose(), its traffic counted under "transpose").
  bool transpose_a = false;
  bool transpose_b = false;
  /// Which of the mask's entries select (spgemm_masked, spgemm_accumulate with a mask).
  tessera::mask_kind mask = tessera::mask_kind::structure;
  /// Keep the entries the mask does NOT select (GrB_COMP). The kernels prune by a stored mask, so
  /// the complement is applied to the unmasked product: the work and memory of A * B, then one
  /// local pass over C and the mask.
  bool complement_mask = false;
  /// Grid distributions only (block_cyclic_2d, replicated_columns, a user's re-tiling grid):
  /// the layers c of the communication-avoiding 3-D algorithm (c = 1: SUMMA on A's grid; c > 1:
  /// c layers of a P / c grid, each multiplying 1/c of the inner dimension, partial products
  /// reduced onto C's owners), and the stages the inner dimension of a layer is cut into (each
  /// moves and multiplies its share of A and B, so a stage's pieces are what must fit in memory).
  int layers = 1;
  int stages = 1;
  /// Grid distributions with stages > 1: start the next stage's exchanges before multiplying the
  /// current stage, so they travel during the product (through the backend's start_exchange;
  /// a backend without one exchanges at once). Two stages' pieces are then held at a time; false
  /// holds one.
  bool prefetch_next_stage = true;
};

namespace detail {

/// Semiring addition as a combine (device-callable): what spgemm_accumulate folds C and A * B with.
template <class Semiring>
struct semiring_add {
  Semiring ring;
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(const T& x, const T& y) const {
    return ring.add(x, y);
  }
};

}  // namespace detail

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_OPTIONS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_OPTIONS_HPP
#endif
