#pragma once
/// @file
/// A local block as compressed rows, whatever its storage: what SpMM and SpGEMM multiply.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_AS_COMPRESSED_ROWS_HPP
#endif

#include "../concepts/storage.hpp"
#include "../storage/csr.hpp"

#include <Kokkos_Core.hpp>

#include <concepts>

namespace tessera {

/// `block` as a CSR block on the same memory space.
///
/// Free for csr and for any storage with compressed rows (the Views are shared, not copied).
/// Any other storage goes through its own to_coo and csr::from_coo: O(nnz) work and one copy of
/// the entries per call (for csc a counting sort by row; for coo only the row pointers are
/// new). Operations that take such a matrix do this on every call: convert once with
/// `convert<csr>(A)` when the same matrix is multiplied many times.
template <class Storage, class ExecSpace, class Block>
[[nodiscard]] csr_block<typename Block::value_type, typename Block::memory_space> as_compressed_rows(
    const ExecSpace& exec, const Block& block) {
  using T = typename Block::value_type;
  using memory_space = typename Block::memory_space;
  if constexpr (std::same_as<Block, csr_block<T, memory_space>>) {
    return block;
  } else if constexpr (compressed_row_block<Block>) {
    return {block.num_rows(), block.num_cols(), block.row_ptr, block.col_idx, block.values};
  } else {
    auto rows = csr::from_coo(exec, Storage::to_coo(exec, block));
    exec.fence();
    return rows;
  }
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_AS_COMPRESSED_ROWS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_AS_COMPRESSED_ROWS_HPP
#endif
