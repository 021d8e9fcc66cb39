#pragma once
/// @file
/// Conversions between element-sparse storage (csr, csc, coo, a user's) and tiles: to_tiles cuts
/// a matrix into the tiles of a tile distribution's tilings, to_elements builds an
/// element-sparse matrix from a tile-stored one.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_CONVERT_TILES_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../core/runtime_lifetime.hpp"
#include "../comm/buckets.hpp"
#include "../comm/personalised_exchange.hpp"
#include "../concepts/backend.hpp"
#include "../comm/communicator.hpp"
#include "build.hpp"
#include "dist_matrix.hpp"
#include "local_triplets.hpp"
#include "make_block_sparse.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace tessera {

namespace detail {
template <class T>
struct tile_entry {
  global_index row, col;
  T value;
};
}  // namespace detail

/// `a` as tiles of `mapping`'s tilings, on its grid (collective).
///
/// A tile is stored when any of its elements is an entry of `a`; its other elements are zero.
/// Each rank sends its entries to the ranks that hold their tiles (every replica, for
/// replicated_columns): one personalised exchange, counted under the scope "to_tiles", of
/// 2 indices and 1 value per entry and holder, plus one allgather of the stored tiles'
/// coordinates (the shape is replicated). `a` may itself be tile-stored (re-tiling). Raises
/// tessera::error on every rank if the tilings' extents differ from `a`'s shape or the grid from
/// the communicator.
///
/// @code
/// using tiled = tessera::policy<tessera::block_cyclic_2d, tessera::tiles, tessera::mpi_rma>;
/// const tessera::block_cyclic_2d::mapping tiling(grid, row_tiles, col_tiles);
/// auto t = tessera::to_tiles<tiled>(a, tiling);
/// @endcode
template <matrix_policy TilePolicy, class T, matrix_policy Policy>
[[nodiscard]] dist_matrix<T, TilePolicy> to_tiles(const dist_matrix<T, Policy>& a,
                                                  const typename TilePolicy::mapping_type& mapping) {
  detail::require_runtimes_alive();  // kept past the environment: an error, not an abort
  static_assert(tile_storage<typename TilePolicy::storage_type>,
                "tessera::to_tiles: the target policy's storage must be tiles (policy<block_cyclic_2d, tiles, "
                "Backend>)");
  static_assert(std::is_same_v<typename TilePolicy::memory_space, typename Policy::memory_space>,
                "tessera::to_tiles: the target policy must keep the matrix's memory space");
  using memory = typename TilePolicy::memory_space;
  const communicator& comm = a.comm();
  const stats_scope scope(comm, "to_tiles");
  const auto& rows = mapping.row_tiles();
  const auto& cols = mapping.col_tiles();
  comm.collectively([&] {
    TESSERA_REQUIRE(mapping.grid().size() == comm.size(), dimension_mismatch,
                    "to_tiles: the {} x {} grid needs {} ranks but the communicator has {}", mapping.grid().p,
                    mapping.grid().q, mapping.grid().size(), comm.size());
    TESSERA_REQUIRE(rows.extent() == a.num_rows() && cols.extent() == a.num_cols(), dimension_mismatch,
                    "to_tiles: the tilings cover {} x {} but the matrix is {} x {}", rows.extent(), cols.extent(),
                    a.num_rows(), a.num_cols());
  });

  const triplets<T> mine = local_triplets(a);
  // The ranks holding each tile this rank has entries of: asked once per tile, not per entry.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<int>> holders;
  const auto holders_of = [&](global_index i, global_index j) -> const std::vector<int>& {
    const std::pair key{rows.tile_of(i), cols.tile_of(j)};
    auto [it, fresh] = holders.try_emplace(key);
    if (fresh)
      for (int r = 0; r < comm.size(); ++r)
        if (mapping.holds(r, key.first, key.second)) it->second.push_back(r);
    return it->second;
  };
  bucket_builder<detail::tile_entry<T>> out(comm.size());
  for (std::size_t k = 0; k < mine.values.size(); ++k)
    for (const int r : holders_of(mine.rows[k], mine.cols[k])) out.count(r);
  out.allocate();
  for (std::size_t k = 0; k < mine.values.size(); ++k)
    for (const int r : holders_of(mine.rows[k], mine.cols[k]))
      out.push(r, {mine.rows[k], mine.cols[k], mine.values[k]});
  const auto received = exchange_records(typename Policy::backend_type{}, comm, std::move(out).finish());

  // The shape: every rank's stored tiles, agreed.
  std::vector<std::int64_t> coords;
  for (const auto& [tile, who] : holders) {
    coords.push_back(static_cast<std::int64_t>(tile.first));
    coords.push_back(static_cast<std::int64_t>(tile.second));
  }
  auto all = comm.allgather_concatenated(coords);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (std::size_t k = 0; k + 1 < all.size(); k += 2) pairs.emplace_back(all[k], all[k + 1]);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<tile_norm> stored;
  stored.reserve(pairs.size());
  for (const auto& [ti, tj] : pairs) stored.push_back({ti, tj, 0.0});
  block_sparse_shape shape(rows, cols, std::move(stored));

  auto tiles = detail::allocate_tiles<T, memory>(mapping, shape, comm.rank());
  std::vector<std::size_t> local_of(shape.num_nonzero_tiles(), 0);
  for (std::size_t k = 0; k < tiles.num_tiles(); ++k) local_of[tiles.index[k]] = k;
  auto host = Kokkos::create_mirror_view(tiles.values);
  tessera::detail::deep_copy(host, T{0});
  for (const auto& e : received.data) {
    const std::size_t ti = rows.tile_of(e.row), tj = cols.tile_of(e.col);
    const std::size_t k = local_of[shape.find(ti, tj)];
    const auto m = static_cast<std::size_t>(rows.size(ti));
    host(tiles.offset[k] + static_cast<std::size_t>(e.row - rows.begin(ti)) +
         static_cast<std::size_t>(e.col - cols.begin(tj)) * m) = e.value;
  }
  tessera::detail::deep_copy(tiles.values, host);
  shape = detail::refresh_norms(comm, mapping, shape, tiles);
  return dist_matrix<T, TilePolicy>(
      comm, mapping, typename TilePolicy::storage_type::template block<T, memory>(std::move(tiles), std::move(shape)));
}

/// A tile-stored `a` as an element-sparse matrix of `Policy` (collective): the nonzero elements
/// of its tiles (exact zeros inside stored tiles are dropped; a replicated tile counts once),
/// routed to their owners as build_from_triplets does (scope "build").
///
/// @code
/// auto e = tessera::to_elements<tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>>(t);
/// @endcode
template <matrix_policy Policy, class T, matrix_policy TilePolicy>
[[nodiscard]] dist_matrix<T, Policy> to_elements(const dist_matrix<T, TilePolicy>& a,
                                                 const build_options<Policy>& options = {}) {
  detail::require_runtimes_alive();  // kept past the environment: an error, not an abort
  static_assert(tile_storage<typename TilePolicy::storage_type>,
                "tessera::to_elements: converts a tile-stored matrix; between element storages use convert<Storage>");
  static_assert(element_storage<typename Policy::storage_type>,
                "tessera::to_elements: the target policy's storage must be an element storage (csr, csc, coo, a "
                "user's); to re-tile use to_tiles");
  return build_from_triplets<T, Policy>(a.comm(), a.num_rows(), a.num_cols(), local_triplets(a), options);
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_CONVERT_TILES_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_CONVERT_TILES_HPP
#endif
