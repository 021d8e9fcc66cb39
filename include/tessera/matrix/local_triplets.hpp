#pragma once
/// @file
/// This rank's entries of a dist_matrix as host triplets with global indices.

#include "dist_matrix.hpp"
#include "triplets.hpp"

#include <Kokkos_Core.hpp>

namespace tessera {

/// This rank's entries with global indices, sorted by local row then column
/// (for row_block: by global row, then global column). Not collective.
template <class T, class Policy>
[[nodiscard]] triplets<T> local_triplets(const dist_matrix<T, Policy>& a) {
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
  for (std::size_t k = 0; k < n; ++k) {
    const global_coordinate g = a.mapping().to_global(me, rows(k), 0);
    out.rows[k] = g.row;
    out.cols[k] = col_map(cols(k));
    out.values[k] = vals(k);
  }
  return out;
}

}  // namespace tessera
