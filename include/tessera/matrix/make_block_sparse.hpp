#pragma once
/// @file
/// make_block_sparse and gather_dense: making and reading a tile-stored dist_matrix
/// (`dist_matrix<T, policy<block_cyclic_2d, tiles, Backend>>`, the block-sparse matrix), and the
/// shape bookkeeping its operations share (tile offsets, norms agreed over ranks).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_MAKE_BLOCK_SPARSE_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../comm/communicator.hpp"
#include "../comm/mpi_check.hpp"
#include "../concepts/backend.hpp"
#include "../core/device_algorithms.hpp"
#include "../core/error.hpp"
#include "../storage/block_sparse.hpp"
#include "../storage/tiles.hpp"
#include "dist_matrix.hpp"

#include "to_view.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstring>
#include <vector>

namespace tessera {

namespace detail {
/// Where each tile of `shape` held by `rank` starts in that rank's values (shape order), and the total.
template <class Mapping>
std::vector<std::size_t> tile_offsets_on(const Mapping& mapping, const block_sparse_shape& shape, int rank,
                                         std::size_t& total) {
  std::vector<std::size_t> offset(shape.num_nonzero_tiles(), static_cast<std::size_t>(-1));
  total = 0;
  const auto& tiles = shape.tiles();
  for (std::size_t k = 0; k < tiles.size(); ++k)
    if (mapping.holds(rank, static_cast<std::size_t>(tiles[k].row), static_cast<std::size_t>(tiles[k].col))) {
      offset[k] = total;
      total += shape.tile_elements(k);
    }
  return offset;
}

/// Allocate this rank's tiles of `shape` (zero-filled), in shape order.
template <class T, class Memory, class Mapping>
block_sparse_tiles<T, Memory> allocate_tiles(const Mapping& mapping, const block_sparse_shape& shape, int rank) {
  block_sparse_tiles<T, Memory> tiles;
  const auto& all = shape.tiles();
  for (std::size_t k = 0; k < all.size(); ++k)
    if (mapping.holds(rank, static_cast<std::size_t>(all[k].row), static_cast<std::size_t>(all[k].col))) {
      tiles.index.push_back(k);
      tiles.offset.push_back(tiles.offset.back() + shape.tile_elements(k));
    }
  tiles.values = Kokkos::View<T*, Memory>("tessera::block_sparse::values", tiles.offset.back());
  return tiles;
}

/// Frobenius norm of `count` host elements. Sixteen partial sums: one running
/// sum is a chain of dependent adds, sixteen vectorise and run at memory speed.
template <class T>
double frobenius_norm(const T* values, std::size_t count) {
  constexpr std::size_t lanes = 16;
  double partial[lanes] = {};
  std::size_t e = 0;
  for (; e + lanes <= count; e += lanes)
    for (std::size_t l = 0; l < lanes; ++l)
      partial[l] += static_cast<double>(values[e + l]) * static_cast<double>(values[e + l]);
  for (; e < count; ++e) partial[0] += static_cast<double>(values[e]) * static_cast<double>(values[e]);
  double s = 0;
  for (const double x : partial) s += x;
  return std::sqrt(s);
}

/// Frobenius norms of this rank's tiles measured where the values are: on a device, copying C to
/// the host and summing there cost twice the tile products themselves (m = 8192 at density 1:
/// 512 MB over PCIe, then one host core). Only the norms come back. A team per tile left most of
/// an H100 idle (57 tiles of 600,000 values: 2.9 ms, 90 GB/s), so each team sums a slice of
/// `norm_slice` values and a second pass adds each tile's slices in order: the same sums in the
/// same order on every run.
inline constexpr std::size_t norm_slice = 16384;

template <class T, class Memory>
std::vector<double> local_norms_in_place(const block_sparse_tiles<T, Memory>& tiles) {
  using exec = typename Memory::execution_space;
  using team_policy = Kokkos::TeamPolicy<exec>;
  const std::size_t n = tiles.num_tiles();
  std::vector<double> out(n, 0.0);
  if (n == 0) return out;
  // Slice q covers values [slice_begin[q], slice_end[q]) of one tile; tile k owns slices
  // [first_slice[k], first_slice[k + 1]).
  std::vector<std::size_t> slice_begin, slice_end, first_slice(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    first_slice[k] = slice_begin.size();
    for (std::size_t e = tiles.offset[k]; e < tiles.offset[k + 1]; e += norm_slice) {
      slice_begin.push_back(e);
      slice_end.push_back(std::min(e + norm_slice, tiles.offset[k + 1]));
    }
  }
  first_slice[n] = slice_begin.size();
  const std::size_t slices = slice_begin.size();
  const auto begin = to_view<std::size_t, Memory>(slice_begin, "tessera::tile_norm_slices");
  const auto end = to_view<std::size_t, Memory>(slice_end, "tessera::tile_norm_slice_ends");
  const auto first = to_view<std::size_t, Memory>(first_slice, "tessera::tile_norm_first_slice");
  const Kokkos::View<double*, Memory> partial("tessera::tile_norm_partials", slices);
  const Kokkos::View<double*, Memory> norms("tessera::tile_norms", n);
  const Kokkos::View<const T*, Memory> values = tiles.values;
  if (slices > 0)
    Kokkos::parallel_for("tessera::tile_norm_slices", team_policy(static_cast<int>(slices), Kokkos::AUTO),
                         KOKKOS_LAMBDA(const typename team_policy::member_type& m) {
                           const auto q = static_cast<std::size_t>(m.league_rank());
                           double sum = 0;
                           Kokkos::parallel_reduce(
                               Kokkos::TeamThreadRange(m, begin(q), end(q)),
                               [&](const std::size_t e, double& acc) {
                                 const auto v = static_cast<double>(values(e));
                                 acc += v * v;
                               },
                               sum);
                           Kokkos::single(Kokkos::PerTeam(m), [&] { partial(q) = sum; });
                         });
  Kokkos::parallel_for("tessera::tile_norms", Kokkos::RangePolicy<exec>(0, n), KOKKOS_LAMBDA(const std::size_t k) {
    double sum = 0;
    for (std::size_t q = first(k); q < first(k + 1); ++q) sum += partial(q);
    norms(k) = sum;
  });
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, norms);
  for (std::size_t k = 0; k < n; ++k) out[k] = std::sqrt(host(k));
  return out;
}

/// Frobenius norms of this rank's tiles: on the host for the host algorithms (the same sum in the
/// same order on every host space), else measured in place (local_norms_in_place).
template <class T, class Memory>
std::vector<double> local_norms(const block_sparse_tiles<T, Memory>& tiles) {
  if constexpr (uses_device_algorithms<typename Memory::execution_space>) {
    return local_norms_in_place(tiles);
  } else {
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, tiles.values);
    std::vector<double> norms(tiles.num_tiles(), 0.0);
    for (std::size_t k = 0; k < tiles.num_tiles(); ++k)
      norms[k] = frobenius_norm(host.data() + tiles.offset[k], tiles.offset[k + 1] - tiles.offset[k]);
    return norms;
  }
}

/// Collective: the shape with the norms `mine` of this rank's tiles (in tile
/// order) agreed over ranks (each tile's primary holder's value counts).
template <class T, class Memory, class Mapping>
block_sparse_shape agree_norms(const communicator& comm, const Mapping& mapping, const block_sparse_shape& shape,
                               const block_sparse_tiles<T, Memory>& tiles, const std::vector<double>& mine) {
  std::vector<double> norms(shape.num_nonzero_tiles(), 0.0);
  for (std::size_t k = 0; k < tiles.num_tiles(); ++k) {
    const auto& t = shape.tiles()[tiles.index[k]];
    if (mapping.tile_owner(static_cast<std::size_t>(t.row), static_cast<std::size_t>(t.col)) == comm.rank())
      norms[tiles.index[k]] = mine[k];
  }
  comm.allreduce_inplace(norms, MPI_SUM);
  std::vector<tile_norm> updated = shape.tiles();
  for (std::size_t k = 0; k < updated.size(); ++k) updated[k].norm = norms[k];
  return block_sparse_shape(shape.row_tiles(), shape.col_tiles(), std::move(updated));
}

/// Collective: the shape's norms recomputed from the values (each tile's primary holder measures it).
template <class T, class Memory, class Mapping>
block_sparse_shape refresh_norms(const communicator& comm, const Mapping& mapping, const block_sparse_shape& shape,
                                 const block_sparse_tiles<T, Memory>& tiles) {
  return agree_norms(comm, mapping, shape, tiles, local_norms(tiles));
}
}  // namespace detail

/// Build a tile-stored matrix from a pattern and an element function (collective).
///
/// @code
/// using tiled = tessera::policy<tessera::block_cyclic_2d, tessera::tiles, tessera::mpi_rma>;
/// auto a = tessera::make_block_sparse<double, tiled>(comm, mapping, nonzero, value);
/// @endcode
///
/// `nonzero(ti, tj)` says whether tile (ti, tj) is stored (it must give the
/// same answer on every rank); `value(i, j)` gives element (i, j) of a stored
/// tile. Each rank fills only the tiles it holds; the norms are then agreed.
/// Raises tessera::error on every rank if the mapping's tilings or grid do not
/// match the communicator.
template <class T, matrix_policy Policy, class Pattern, class Values>
[[nodiscard]] dist_matrix<T, Policy> make_block_sparse(const communicator& comm,
                                                       const typename Policy::mapping_type& mapping, Pattern&& nonzero,
                                                       Values&& value) {
  static_assert(tile_storage<typename Policy::storage_type>,
                "tessera::make_block_sparse: the policy's storage must be tiles (policy<block_cyclic_2d, tiles, "
                "Backend>); element-sparse matrices are made by build_from_triplets");
  using memory = typename Policy::memory_space;
  auto [shape, tiles] = comm.collectively([&] {
    TESSERA_REQUIRE(mapping.grid().size() == comm.size(), dimension_mismatch,
                    "make_block_sparse: the {} x {} grid needs {} ranks but the communicator has {}", mapping.grid().p,
                    mapping.grid().q, mapping.grid().size(), comm.size());
    const auto& rows = mapping.row_tiles();
    const auto& cols = mapping.col_tiles();
    std::vector<tile_norm> pattern;
    for (std::size_t ti = 0; ti < rows.num_tiles(); ++ti)
      for (std::size_t tj = 0; tj < cols.num_tiles(); ++tj)
        if (nonzero(ti, tj)) pattern.push_back({static_cast<std::int64_t>(ti), static_cast<std::int64_t>(tj), 0.0});
    block_sparse_shape s(rows, cols, std::move(pattern));
    auto t = detail::allocate_tiles<T, memory>(mapping, s, comm.rank());
    auto host = Kokkos::create_mirror_view(t.values);
    for (std::size_t k = 0; k < t.num_tiles(); ++k) {
      const auto& tile = s.tiles()[t.index[k]];
      const auto ti = static_cast<std::size_t>(tile.row), tj = static_cast<std::size_t>(tile.col);
      std::size_t e = t.offset[k];
      for (global_index j = cols.begin(tj); j < cols.end(tj); ++j)
        for (global_index i = rows.begin(ti); i < rows.end(ti); ++i) host(e++) = static_cast<T>(value(i, j));
    }
    tessera::detail::deep_copy(t.values, host);
    return std::pair{std::move(s), std::move(t)};
  });
  shape = detail::refresh_norms(comm, mapping, shape, tiles);
  return dist_matrix<T, Policy>(comm, mapping, typename Policy::storage_type::template block<T, memory>(std::move(tiles), std::move(shape)));
}

/// The whole matrix, dense and column-major (m * n values, element (i, j) at i + j * m), on every rank.
/// Collective; for tests and small checks.
template <class T, matrix_policy Policy>
  requires tile_storage<typename Policy::storage_type>
[[nodiscard]] std::vector<T> gather_dense(const dist_matrix<T, Policy>& a) {
  const auto m = static_cast<std::size_t>(a.num_rows()), n = static_cast<std::size_t>(a.num_cols());
  std::vector<T> dense(m * n, T{0});
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.local().values);
  const auto& shape = a.shape();
  for (std::size_t k = 0; k < a.local().num_tiles(); ++k) {
    const auto& t = shape.tiles()[a.local().index[k]];
    const auto ti = static_cast<std::size_t>(t.row), tj = static_cast<std::size_t>(t.col);
    if (a.mapping().tile_owner(ti, tj) != a.comm().rank()) continue;  // one copy of replicated tiles
    std::size_t e = a.local().offset[k];
    for (global_index j = a.col_tiles().begin(tj); j < a.col_tiles().end(tj); ++j)
      for (global_index i = a.row_tiles().begin(ti); i < a.row_tiles().end(ti); ++i)
        dense[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * m] = host(e++);
  }
  if (!dense.empty()) {
    communicator::require_int_count(dense.size(), "gather_dense");
    TESSERA_MPI(MPI_Allreduce(MPI_IN_PLACE, dense.data(), static_cast<int>(dense.size()), mpi_datatype<T>(), MPI_SUM,
                              a.comm().get()));
  }
  return dense;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_MAKE_BLOCK_SPARSE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_MAKE_BLOCK_SPARSE_HPP
#endif
