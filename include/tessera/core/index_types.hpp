#pragma once
/// @file
/// Index types shared by every part of tessera.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_INDEX_TYPES_HPP
#endif

#include <cstdint>

namespace tessera {

/// Global row/column index. 64-bit so matrices beyond 2^31 rows or columns work.
using global_index = std::int64_t;

/// Row or column index inside one rank's local block. 32-bit keeps local
/// kernels (and Kokkos-Kernels' ETI-friendly ordinal type) narrow.
using local_index = std::int32_t;

/// Offset into a rank's local nonzero arrays (row pointers, column pointers).
using offset_type = std::int64_t;

/// A position in a global matrix.
struct global_coordinate {
  global_index row;
  global_index col;
  friend constexpr bool operator==(const global_coordinate&, const global_coordinate&) = default;
};

/// A position in one rank's part of a distribution, with the rank that owns it.
/// 64-bit: a distribution's local extent can exceed 2^31 (row_block keeps all columns).
struct local_coordinate {
  int rank;
  global_index row;
  global_index col;
  friend constexpr bool operator==(const local_coordinate&, const local_coordinate&) = default;
};

/// Extents of one rank's part of a distribution.
struct local_extents {
  global_index rows;
  global_index cols;
  friend constexpr bool operator==(const local_extents&, const local_extents&) = default;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_INDEX_TYPES_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_INDEX_TYPES_HPP
#endif
