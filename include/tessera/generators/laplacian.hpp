#pragma once
/// @file
/// The 2-D 5-point Laplacian on an n x n grid.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_LAPLACIAN_HPP
#endif

#include "../core/error.hpp"
#include "../matrix/build.hpp"
#include "share.hpp"

namespace tessera::generate {

/// The n^2 x n^2 matrix of the 5-point stencil (4 on the diagonal, -1 for each
/// grid neighbour), rows in lexicographic grid order (collective). Each rank
/// generates its own share of rows.
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_matrix<T, Policy> laplacian_2d(const communicator& comm, global_index n) {
  comm.collectively(
      [&] { TESSERA_REQUIRE(n >= 0 && n <= (global_index{1} << 31), invalid_argument, "laplacian_2d: grid size {}", n); });
  const global_index rows = n * n;
  const auto mine = detail::own_share(comm, rows);
  triplets<T> entries;
  entries.reserve(static_cast<std::size_t>(5 * (mine.end - mine.begin)));
  for (global_index row = mine.begin; row < mine.end; ++row) {
    const global_index x = row % n, y = row / n;
    if (y > 0) entries.push_back(row, row - n, T(-1));
    if (x > 0) entries.push_back(row, row - 1, T(-1));
    entries.push_back(row, row, T(4));
    if (x + 1 < n) entries.push_back(row, row + 1, T(-1));
    if (y + 1 < n) entries.push_back(row, row + n, T(-1));
  }
  return build_from_triplets<T, Policy>(comm, rows, rows, entries);
}

}  // namespace tessera::generate

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_LAPLACIAN_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_LAPLACIAN_HPP
#endif
