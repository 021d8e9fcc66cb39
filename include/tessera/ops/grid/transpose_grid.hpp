#pragma once
/// @file
/// Transpose over grid distributions: every rank transposes the entries it is the owner of and
/// sends them, in one personalised exchange, to their owners under `mapping().transposed()`. On
/// block_cyclic_2d with cyclic column owners that is one partner per rank: (r, c) on the p x q
/// grid sends everything to (c, r) on the q x p grid. Under replicated_columns each replica of
/// A^T is filled (its primaries are sent to every replica).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_TRANSPOSE_GRID_HPP
#endif

#include "../../comm/communicator.hpp"
#include "../../concepts/distribution.hpp"
#include "../../core/combine.hpp"
#include "../../matrix/detail/assemble.hpp"
#include "../../matrix/detail/route.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../matrix/local_triplets.hpp"

#include <span>

namespace tessera::detail {

template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> transpose_on_grid(const dist_matrix<T, Policy>& a) {
  static_assert(retiling_grid_mapping<typename Policy::mapping_type>);
  const auto& comm = a.comm();
  const auto target = comm.collectively([&] { return a.mapping().transposed(); });
  const auto mine = comm.collectively([&] { return local_triplets(a); });
  // (i, j) -> (j, i): the swapped index arrays are the entries of A^T.
  const auto arrived = route_to_owners<T>(comm, typename Policy::backend_type{}, target,
                                          std::span<const global_index>(mine.cols),
                                          std::span<const global_index>(mine.rows), std::span<const T>(mine.values));
  return assemble_owned<T, Policy>(comm, target, arrived, combine::any{});
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_TRANSPOSE_GRID_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_TRANSPOSE_GRID_HPP
#endif
