#pragma once
/// @file
/// SpGEMM over grid distributions (block_cyclic_2d, replicated_columns, a user's): sparse SUMMA
/// and its communication-avoiding 3-D form, written once against retiling_grid_mapping.
///
/// Every rank (l, r, s) of the layered grid (layered_grid.hpp) computes C's rows of group r and
/// columns of group s over the inner indices of layer l. Per stage (a share of the layer's inner
/// indices): A's entries of the stage go to every rank of their layer's grid row (SUMMA's
/// broadcast along grid rows), B's to every rank of their layer's grid column (along grid
/// columns), each in one personalised exchange through the policy's backend; the rank multiplies
/// its two pieces (local_product.hpp: any semiring, the mask, the memory budget). The partial
/// products of all stages and layers go to C's owners and are folded with the semiring's add.
///
/// Words per rank (entries of 24 bytes for doubles): nnz(A)/(p c) + nnz(B)/(q c) received, plus,
/// for c > 1 or a replicated C, the partial C sent to its owners (docs/scaling.md).

#include "../../comm/communicator.hpp"
#include "../../concepts/distribution.hpp"
#include "../../core/combine.hpp"
#include "../../core/error.hpp"
#include "../../matrix/detail/assemble.hpp"
#include "../../matrix/detail/route.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../matrix/local_triplets.hpp"
#include "../detail/operand_checks.hpp"
#include "../spgemm/options.hpp"
#include "layered_grid.hpp"
#include "local_product.hpp"
#include "push_entries.hpp"

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
    TESSERA_REQUIRE(options.kernel == spgemm_kernel::automatic || options.kernel == spgemm_kernel::esc,
                    invalid_argument,
                    "spgemm: on a grid distribution the local products run expand-sort-compress; choose kernel "
                    "automatic or esc (or redistribute to a row distribution for the other kernels)");
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
  triplets<T> partial;
  piece_product_stats product_stats;
  for (int s = 0; s < options.stages; ++s) {
    const auto in_stage = [&](global_index k) { return stage_of[static_cast<std::size_t>(k)] == s; };
    // A(i, k) to every rank of grid row group(i) in layer(k); B(k, j) to every rank of grid column group(j).
    const auto a_piece = push_entries<T>(
        comm, backend, a.mapping(), a_held,
        [&](global_index i, global_index k, auto emit) {
          const int l = grid.inner_layer[static_cast<std::size_t>(k)], r = grid.row_group[static_cast<std::size_t>(i)];
          for (int col = 0; col < grid.grid.q; ++col) emit(grid.rank(l, r, col));
        },
        [&](global_index, global_index k) { return in_stage(k); });
    const auto b_piece = push_entries<T>(
        comm, backend, b.mapping(), b_held,
        [&](global_index k, global_index j, auto emit) {
          const int l = grid.inner_layer[static_cast<std::size_t>(k)], col = grid.col_group[static_cast<std::size_t>(j)];
          for (int r = 0; r < grid.grid.p; ++r) emit(grid.rank(l, r, col));
        },
        [&](global_index k, global_index) { return in_stage(k); });
    // The user's semiring runs here: a throw on one rank is raised on every rank.
    const auto product = comm.collectively([&] {
      return multiply_pieces<exec, mem>(a_piece, b_piece, mask != nullptr ? &mask_piece : nullptr, options.ring,
                                        options.memory_budget_bytes, product_stats);
    });
    partial.rows.insert(partial.rows.end(), product.rows.begin(), product.rows.end());
    partial.cols.insert(partial.cols.end(), product.cols.begin(), product.cols.end());
    partial.values.insert(partial.values.end(), product.values.begin(), product.values.end());
  }
  if (options.batches != nullptr) *options.batches = product_stats.batches;
  // Partial products to C's owners (with one layer on A's own grid, each is computed where it is
  // stored and only a replicated C moves), folded with the semiring's add.
  const auto owned = route_to_owners<T>(comm, backend, c_mapping, std::span<const global_index>(partial.rows),
                                        std::span<const global_index>(partial.cols), std::span<const T>(partial.values));
  return assemble_owned<T, Policy>(comm, c_mapping, owned, semiring_add<Semiring>{options.ring});
}

}  // namespace tessera::detail
