#pragma once
/// @file
/// This rank's entries of a dist_matrix as host triplets with global indices.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_LOCAL_TRIPLETS_HPP
#endif

#include "../core/runtime_lifetime.hpp"
#include "dist_matrix.hpp"
#include "triplets.hpp"

#include <Kokkos_Core.hpp>

namespace tessera {

namespace detail {
template <class T, class Policy>
[[nodiscard]] triplets<T> tile_triplets(const dist_matrix<T, Policy>& a) {
  triplets<T> out;
  const auto& tiles = a.local();
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, tiles.values);
  const auto& rows = a.row_tiles();
  const auto& cols = a.col_tiles();
  for (std::size_t k = 0; k < tiles.num_tiles(); ++k) {
    const auto& t = a.shape().tiles()[tiles.index[k]];
    const auto ti = static_cast<std::size_t>(t.row), tj = static_cast<std::size_t>(t.col);
    if (a.mapping().tile_owner(ti, tj) != a.comm().rank()) continue;
    std::size_t e = tiles.offset[k];
    for (global_index j = cols.begin(tj); j < cols.end(tj); ++j)
      for (global_index i = rows.begin(ti); i < rows.end(ti); ++i, ++e)
        if (host(e) != T{0}) {
          out.rows.push_back(i);
          out.cols.push_back(j);
          out.values.push_back(host(e));
        }
  }
  return out;
}

/// Every entry this rank holds, replicas included (`primaries_only`: those it is the owner of).
template <class T, class Policy>
[[nodiscard]] triplets<T> element_triplets(const dist_matrix<T, Policy>& a, bool primaries_only) {
  using exec = typename Policy::execution_space;
  const exec space{};
  const auto coo = Policy::storage_type::to_coo(space, a.local());
  space.fence();
  auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, coo.row_idx);
  auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, coo.col_idx);
  auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, coo.values);
  auto col_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.col_map());

  triplets<T> out;
  const auto n = static_cast<std::size_t>(coo.nnz());
  out.rows.resize(n);
  out.cols.resize(n);
  out.values.resize(n);
  const int me = a.comm().rank();
  std::size_t kept = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const global_coordinate g = a.mapping().to_global(me, rows(k), 0);
    const global_index col = col_map(cols(k));
    if (primaries_only && a.mapping().owner(g.row, col) != me) continue;
    out.rows[kept] = g.row;
    out.cols[kept] = col;
    out.values[kept] = vals(k);
    ++kept;
  }
  out.rows.resize(kept);
  out.cols.resize(kept);
  out.values.resize(kept);
  return out;
}

/// Every entry this rank's block holds, replicas included, with global indices (not
/// collective): what an operation that rebuilds the block in place (add, prune) reads.
template <class T, class Policy>
[[nodiscard]] triplets<T> held_triplets(const dist_matrix<T, Policy>& a) {
  if constexpr (dist_matrix<T, Policy>::tiled)
    return tile_triplets(a);
  else
    return element_triplets(a, false);
}
}  // namespace detail

/// This rank's entries with global indices, sorted by local row then column
/// (for row_block: by global row, then global column). Not collective. With a replicated
/// distribution only the primary copies (`mapping().owner(i, j)` is this rank), so that every
/// entry is listed once over the ranks.
///
/// With tile storage: the nonzero elements of the tiles this rank is the primary holder of
/// (tile_owner), so that a replicated tile counts once over the ranks; tile by tile in shape
/// order, each column-major.
template <class T, class Policy>
[[nodiscard]] triplets<T> local_triplets(const dist_matrix<T, Policy>& a) {
  detail::require_runtimes_alive();  // kept past the environment: an error, not an abort
  if constexpr (dist_matrix<T, Policy>::tiled) {
    return detail::tile_triplets(a);
  } else {
    return detail::element_triplets(a, replicated_mapping<typename Policy::mapping_type>);
  }
}


}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_LOCAL_TRIPLETS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_LOCAL_TRIPLETS_HPP
#endif
