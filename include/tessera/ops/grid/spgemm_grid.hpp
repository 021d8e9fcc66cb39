#pragma once
/// @file
/// SpGEMM over grid distributions (block_cyclic_2d, replicated_columns, a user's): sparse SUMMA
/// and its communication-avoiding 3-D form, written once against retiling_grid_mapping.
///
/// Every rank (l, r, s) of the layered grid (layered_grid.hpp) computes C's rows of group r and
/// columns of group s over the inner indices of layer l. Per stage (a share of the layer's inner
/// indices): A's entries of the stage go to every rank of their layer's grid row (SUMMA's
/// broadcast along grid rows), B's to every rank of their layer's grid column (along grid
/// columns), each in one personalised exchange through the policy's backend, started before the
/// previous stage multiplies (start_exchange) so it travels meanwhile; the rank multiplies its
/// two pieces (local_product.hpp: any semiring, the mask, the memory budget) and merges the
/// product into the earlier stages'. The partial products of the layers go to C's owners and are
/// folded with the semiring's add; with one layer on A's grid C is built in place.
///
/// Words per rank (entries of 24 bytes for doubles): nnz(A)/(p c) + nnz(B)/(q c) received, plus,
/// for c > 1 or a replicated C, the partial C sent to its owners (docs/scaling.md).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_SPGEMM_GRID_HPP
#endif

#include "../../comm/communicator.hpp"
#include "../../concepts/distribution.hpp"
#include "../../core/combine.hpp"
#include "../../core/error.hpp"
#include "../../kernels/bucket_sort.hpp"
#include "../../matrix/detail/assemble.hpp"
#include "../../matrix/detail/compress_columns.hpp"
#include "../../matrix/to_view.hpp"
#include "../../storage/csr.hpp"
#include "../../matrix/detail/route.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../matrix/local_triplets.hpp"
#include "../detail/operand_checks.hpp"
#include "../spgemm/options.hpp"
#include "layered_grid.hpp"
#include "local_product.hpp"
#include "push_entries.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace tessera::detail {

/// The mapping of C = A * B on a grid: A's grid and row tiles, B's column tiles and their owners.
template <retiling_grid_mapping M>
[[nodiscard]] M product_mapping(const M& a, const M& b) {
  return a.with_tiles(a.row_tiles(), b.col_tiles(), b.column_owners());
}

/// Stage of each inner index: an even share of its layer's indices.
[[nodiscard]] inline std::vector<int> inner_stages(const layered_grid& g, int stages) {
  std::vector<int> stage(g.inner_layer.size(), 0);
  std::size_t begin = 0;
  while (begin < stage.size()) {
    std::size_t end = begin;
    while (end < stage.size() && g.inner_layer[end] == g.inner_layer[begin]) ++end;
    const auto n = static_cast<global_index>(end - begin);
    for (std::size_t k = begin; k < end; ++k) stage[k] = even_share(static_cast<global_index>(k - begin), n, stages);
    begin = end;
  }
  return stage;
}

/// What a grid product's inspector decides from the operands' distributions alone: the layered
/// grid, C's mapping and the stage of every inner index (kept by spgemm_plan).
template <class Mapping>
struct grid_product_setup {
  layered_grid grid;
  Mapping c_mapping;
  std::vector<int> stage_of;
};

/// C's local block and column map straight from one piece product, when it is exactly this
/// rank's part of C: one layer (its stages merged), tiles dealt one rank each (tile_grid_mapping: C's owner
/// is the grid row of the row's tile and the grid column of the column's tile), every row of the
/// product in this grid row, every column in this grid column. Checked per row and per column,
/// not per entry, and decided on every rank alike (one allreduce); nothing otherwise.
template <matrix_value T, matrix_policy Policy>
std::optional<std::pair<typename dist_matrix<T, Policy>::local_block_type,
                        Kokkos::View<global_index*, typename Policy::memory_space>>>
block_in_place(const communicator& comm, const typename Policy::mapping_type& c_mapping, const layered_grid& grid,
               const std::vector<piece_rows<T, typename Policy::memory_space>>& products) {
  using mapping_type = typename Policy::mapping_type;
  using mem = typename Policy::memory_space;
  using exec = typename Policy::execution_space;
  using storage = typename Policy::storage_type;
  if constexpr (!tile_grid_mapping<mapping_type> || replicated_mapping<mapping_type>) {
    return std::nullopt;
  } else {
    const int me = comm.rank();
    const int my_row = c_mapping.grid().row_of(me), my_col = c_mapping.grid().col_of(me);
    bool in_place = grid.layers == 1 && products.size() == 1;
    const auto* c = in_place ? &products.front() : nullptr;
    std::vector<local_index> local_row;
    if (in_place) {
      for (global_index j : c->columns)
        in_place = in_place && c_mapping.tile_col_owner(c_mapping.col_tiles().tile_of(j)) == my_col;
      global_index previous = -1;
      local_row.resize(c->rows.size());
      for (std::size_t r = 0; r < c->rows.size() && in_place && !c->columns.empty(); ++r) {
        const global_index i = c->rows[r];
        in_place = c_mapping.tile_row_owner(c_mapping.row_tiles().tile_of(i)) == my_row;
        const global_index lr = c_mapping.to_local(i, c->columns.front()).row;  // the same for every column
        in_place = in_place && lr > previous;
        local_row[r] = static_cast<local_index>(lr);
        previous = lr;
      }
    }
    if (comm.min(in_place ? 1 : 0) == 0) return std::nullopt;
    const auto rows = static_cast<local_index>(c_mapping.extents(me).rows);
    // Row pointers over all local rows: the product's rows where they are, the others empty.
    const auto piece_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c->ptr);
    std::vector<offset_type> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
    if (!c->columns.empty())
      for (std::size_t r = 0; r < c->rows.size(); ++r)
        row_ptr[static_cast<std::size_t>(local_row[r]) + 1] = piece_ptr(r + 1) - piece_ptr(r);
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) row_ptr[r + 1] += row_ptr[r];
    const auto cols = static_cast<local_index>(c->columns.size());
    auto ptr_view = to_view<offset_type, mem>(row_ptr, "tessera::spgemm::row_ptr");
    typename dist_matrix<T, Policy>::local_block_type block;
    if constexpr (std::same_as<storage, csr>) {
      block = {rows, cols, ptr_view, c->col, c->values};
    } else {
      const exec space{};
      auto row_idx = kernels::expand_groups<exec, mem>(space, ptr_view);
      block = storage::from_coo(space, coo_block<T, mem>{rows, cols, row_idx, c->col, c->values});
      space.fence();
    }
    return std::pair{std::move(block), to_view<global_index, mem>(c->columns, "tessera::spgemm::col_map")};
  }
}

/// The inspector of A * B on a grid (collective: the checks agree on every rank).
template <matrix_value T, matrix_policy Policy, class Semiring>
grid_product_setup<typename Policy::mapping_type> inspect_grid_product(const dist_matrix<T, Policy>& a,
                                                                       const dist_matrix<T, Policy>& b,
                                                                       const spgemm_options<Semiring>& options) {
  static_assert(retiling_grid_mapping<typename Policy::mapping_type>);
  const auto& comm = a.comm();
  return comm.collectively([&] {
    require_same_ranks("spgemm", comm, b.comm(), "B");
    TESSERA_REQUIRE(a.num_cols() == b.num_rows(), dimension_mismatch, "spgemm: A is {} x {} but B is {} x {}",
                    a.num_rows(), a.num_cols(), b.num_rows(), b.num_cols());
    constexpr bool on_host =
        Kokkos::SpaceAccessibility<typename Policy::execution_space, Kokkos::HostSpace>::accessible;
    TESSERA_REQUIRE(options.kernel == spgemm_kernel::automatic || options.kernel == spgemm_kernel::esc ||
                        (options.kernel == spgemm_kernel::gustavson && on_host),
                    invalid_argument,
                    "spgemm: on a grid distribution the local products run Gustavson (host spaces) or "
                    "expand-sort-compress; choose kernel automatic, gustavson or esc (or redistribute to a row "
                    "distribution for Kokkos-Kernels)");
    TESSERA_REQUIRE(options.stages >= 1, invalid_argument, "spgemm: {} stages; at least one is needed", options.stages);
    auto grid = make_layered_grid(a.mapping(), b.mapping(), options.layers);
    auto stages = inner_stages(grid, options.stages);
    return grid_product_setup<typename Policy::mapping_type>{std::move(grid), product_mapping(a.mapping(), b.mapping()),
                                                             std::move(stages)};
  });
}

/// C = A * B (C<M> = A * B when `mask` is given) for grid distributions, as `setup` (made for A's
/// and B's distributions and these options) says; collective.
template <matrix_value T, matrix_policy Policy, class Semiring>
dist_matrix<T, Policy> multiply_on_grid(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                        const dist_matrix<T, Policy>* mask, const spgemm_options<Semiring>& options,
                                        const grid_product_setup<typename Policy::mapping_type>& setup) {
  using exec = typename Policy::execution_space;
  using mem = typename Policy::memory_space;
  const auto& comm = a.comm();
  const layered_grid& grid = setup.grid;
  const auto& c_mapping = setup.c_mapping;
  if (mask != nullptr)
    comm.collectively([&] {
      require_same_ranks("spgemm", comm, mask->comm(), "the mask");
      TESSERA_REQUIRE(mask->num_rows() == a.num_rows() && mask->num_cols() == b.num_cols(), dimension_mismatch,
                      "spgemm: the mask is {} x {} but A * B is {} x {}", mask->num_rows(), mask->num_cols(),
                      a.num_rows(), b.num_cols());
      TESSERA_REQUIRE(mask->mapping() == c_mapping, dimension_mismatch,
                      "spgemm: the mask must be distributed as A * B is (A's grid and rows, B's columns); "
                      "redistribute it first");
    });
  const stats_scope scope(comm, "spgemm");
  const typename Policy::backend_type backend{};

  triplets<T> mask_piece;
  if (mask != nullptr) {
    // Every layer computing C(i, j) filters by the mask.
    mask_piece = push_entries<T>(
        comm, backend, mask->mapping(), held_triplets(*mask),
        [&](global_index i, global_index j, auto emit) {
          for (int l = 0; l < grid.layers; ++l)
            emit(grid.rank(l, grid.row_group[static_cast<std::size_t>(i)], grid.col_group[static_cast<std::size_t>(j)]));
        },
        [](global_index, global_index) { return true; });
    if (options.mask == mask_kind::values)
      mask_piece.retain([](global_index, global_index, const T& v) { return v != T{0}; });
  }

  const auto& stage_of = setup.stage_of;
  const auto a_held = held_triplets(a);
  const auto b_held = held_triplets(b);
  std::vector<piece_rows<T, mem>> products;
  piece_product_stats product_stats;
  const bool gustavson_allowed = options.kernel != spgemm_kernel::esc;
  // A(i, k) to every rank of grid row group(i) in layer(k); B(k, j) to every rank of grid column
  // group(j): SUMMA's broadcasts of stage s, both started at once.
  const auto start_stage = [&](int s) {
    const auto in_stage = [&stage_of, s](global_index k) { return stage_of[static_cast<std::size_t>(k)] == s; };
    auto a_piece = start_push_entries<T>(
        comm, backend, a.mapping(), a_held,
        [&](global_index i, global_index k, auto emit) {
          const int l = grid.inner_layer[static_cast<std::size_t>(k)], r = grid.row_group[static_cast<std::size_t>(i)];
          for (int col = 0; col < grid.grid.q; ++col) emit(grid.rank(l, r, col));
        },
        [&](global_index, global_index k) { return in_stage(k); });
    auto b_piece = start_push_entries<T>(
        comm, backend, b.mapping(), b_held,
        [&](global_index k, global_index j, auto emit) {
          const int l = grid.inner_layer[static_cast<std::size_t>(k)], col = grid.col_group[static_cast<std::size_t>(j)];
          for (int r = 0; r < grid.grid.p; ++r) emit(grid.rank(l, r, col));
        },
        [&](global_index k, global_index) { return in_stage(k); });
    return std::pair{std::move(a_piece), std::move(b_piece)};
  };
  auto next = std::optional{start_stage(0)};
  for (int s = 0; s < options.stages; ++s) {
    auto current = std::move(*next);
    next.reset();
    const auto a_piece = std::move(current.first).finish();
    const auto b_piece = std::move(current.second).finish();
    // The next stage travels while this one multiplies.
    if (s + 1 < options.stages && options.prefetch_next_stage) next.emplace(start_stage(s + 1));
    // The user's semiring runs here: a throw on one rank is raised on every rank. Each stage's
    // product is merged into the earlier stages' at once: one product is kept, and one is routed.
    comm.collectively([&] {
      auto product = multiply_pieces<exec, mem>(a_piece, b_piece, mask != nullptr ? &mask_piece : nullptr, options.ring,
                                                options.memory_budget_bytes, gustavson_allowed, b.num_cols(),
                                                product_stats);
      if (products.empty())
        products.push_back(std::move(product));
      else
        products.front() = merge_pieces(products.front(), product, options.ring);
    });
    if (s + 1 < options.stages && !next) next.emplace(start_stage(s + 1));
  }
  if (options.batches != nullptr) *options.batches = product_stats.batches;

  // SUMMA on A's own grid (the stages merged): every entry was computed where C stores it, once,
  // rows and columns ascending, so the product is C's block as it is (no exchange, no assembly).
  if (auto block = comm.collectively([&] { return block_in_place<T, Policy>(comm, c_mapping, grid, products); }))
    return dist_matrix<T, Policy>(detail::assembled_block, comm, c_mapping, std::move(block->first), std::move(block->second));

  // Otherwise the partial products go to C's owners (reduced over layers and stages, copied to
  // every replica), folded with the semiring's add.
  triplets<T> partial;
  for (const auto& product : products) product.append_to(partial);
  products.clear();
  const auto owned = route_to_owners<T>(comm, backend, c_mapping, std::span<const global_index>(partial.rows),
                                        std::span<const global_index>(partial.cols), std::span<const T>(partial.values));
  return assemble_owned<T, Policy>(comm, c_mapping, owned, semiring_add<Semiring>{options.ring});
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_SPGEMM_GRID_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_SPGEMM_GRID_HPP
#endif
