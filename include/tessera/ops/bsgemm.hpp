#pragma once
/// @file
/// Block-sparse GEMM C = alpha * A * B + beta * C for short-and-wide A and C
/// and a large stationary B (the seed 004 algorithm, §3):
///  - A is 2-D tile-cyclic over a p x q grid; B's tile columns are split over
///    the q grid columns by flop count (mirrored-cyclic) and replicated over
///    the p grid rows (then rebalanced by moves and swaps); C follows A's rows
///    and B's columns, so every C tile is computed where it is stored and B
///    never moves;
///  - each rank packs its columns (B column + its C tiles) into blocks bounded
///    by half the granted memory (worst fit); for each block, the A tiles it
///    needs are cut into chunks of a quarter of it, one tile per A row in a
///    cyclic sweep, and fetched one-sided, the next chunk in flight while the
///    current one is multiplied; or, when A is in node-shared memory
///    (share_on_node) and its readers share a node, read where it lies, with
///    no copy at all;
///  - an inspector (bsgemm_plan's constructor) does all of that from the
///    shapes alone; the executor (apply) only moves tiles and multiplies them
///    (bsgemm_tile_kernel: on the host, the packed kernel of
///    kernels/packed_tile_gemm.hpp), and a plan is reused for as many products
///    as the shapes stay the same.
/// The pieces, one header each under ops/bsgemm/: options.hpp (what the user
/// chooses), schedule.hpp (the inspector's plan of blocks, chunks, gets and
/// products), transport.hpp (how A's tiles arrive: fetched or read in place),
/// executor.hpp (the tile products and C's norms); this header composes them.
/// Written once against the backend and distribution concepts.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_HPP
#endif

#include "../comm/communicator.hpp"
#include "../concepts/distribution.hpp"
#include "../core/error.hpp"
#include "../kernels/host_blas.hpp"
#include "../kernels/packed_tile_gemm.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../matrix/make_block_sparse.hpp"
#include "../matrix/share_on_node.hpp"
#include "bsgemm/executor.hpp"
#include "bsgemm/options.hpp"
#include "bsgemm/schedule.hpp"
#include "bsgemm/transport.hpp"
#include "detail/operand_checks.hpp"
#include "kept_plans.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace tessera {

/// The inspected plan of C = alpha * A * B + beta * C for fixed shapes.
///
/// Build it once (collective), apply it to every iteration (collective); the
/// tensor-contraction loop refines A's values with the same shape and B fixed.
template <class T, matrix_policy PolicyA, matrix_policy PolicyB>
class bsgemm_plan {
  static_assert(tile_storage<typename PolicyA::storage_type> && tile_storage<typename PolicyB::storage_type>,
                "tessera::bsgemm: A and B must be tile-stored (policy<..., tiles, backend_type>); convert an element-sparse "
                "matrix with to_tiles");
  static_assert(tile_grid_mapping<typename PolicyA::mapping_type>,
                "tessera::bsgemm: A's distribution must deal tile rows over grid rows and tile columns over grid "
                "columns, one rank per tile, and re-tile for C (tile_grid_mapping, e.g. block_cyclic_2d); move A "
                "there with to_tiles");
  static_assert(replicated_column_mapping<typename PolicyB::mapping_type>,
                "tessera::bsgemm: B's distribution must keep each tile column on one grid column, replicated over the "
                "grid rows (replicated_column_mapping, e.g. replicated_columns); B stays where it is, so its columns "
                "fix where C is computed. Move B there with to_tiles");
  static_assert(std::is_same_v<typename PolicyA::execution_space, typename PolicyB::execution_space>,
                "tessera::bsgemm: A and B must use the same execution space");

 public:
  /// A plan stays where it was made (it holds windows, a shared context and registrations): it
  /// is neither copied nor moved, so no moved-from plan exists. Share it by reference, through
  /// the plans kept with a matrix (kept_plans.hpp) or a std::shared_ptr.
  bsgemm_plan(const bsgemm_plan&) = delete;
  bsgemm_plan& operator=(const bsgemm_plan&) = delete;

  using execution_space = typename PolicyA::execution_space;
  using backend_type = typename PolicyA::backend_type;
  using a_type = dist_matrix<T, PolicyA>;
  using b_type = dist_matrix<T, PolicyB>;
  /// C is distributed as A is, with A's rows and B's columns.
  using c_type = dist_matrix<T, PolicyA>;
  using c_mapping_type = typename PolicyA::mapping_type;
  using memory_space = typename execution_space::memory_space;
  static constexpr bool host_space = Kokkos::SpaceAccessibility<execution_space, Kokkos::HostSpace>::accessible;

  /// Inspect the shapes of A and B (and, when given, C's current shape, kept
  /// in C's new shape so that beta * C survives). Collective.
  bsgemm_plan(const a_type& a, const b_type& b, bsgemm_options options = {},
              const block_sparse_shape* c_shape = nullptr)
      : comm_(a.comm()), options_(options) {
    comm_.collectively([&] {
      validate(a, b);
      TESSERA_REQUIRE(c_shape == nullptr ||
                          (c_shape->row_tiles() == a.row_tiles() && c_shape->col_tiles() == b.col_tiles()),
                      dimension_mismatch, "bsgemm: C must be tiled like A's rows and B's columns");
    });
    const auto mine = comm_.collectively([&] {
      return detail::bsgemm_c_tiles_of(comm_.rank(), a.mapping(), a.shape(), b.mapping(), b.shape(), c_shape,
                                       options_.screening_threshold);
    });
    // C's shape: every rank's tiles, agreed.
    std::vector<std::int64_t> coords;
    for (const auto& [ti, tj] : mine) {
      coords.push_back(static_cast<std::int64_t>(ti));
      coords.push_back(static_cast<std::int64_t>(tj));
    }
    const auto all = comm_.allgather_concatenated(coords);
    std::vector<tile_norm> c_tiles;
    for (std::size_t k = 0; k + 1 < all.size(); k += 2) c_tiles.push_back({all[k], all[k + 1], 0.0});
    c_mapping_ = a.mapping().with_tiles(a.row_tiles(), b.col_tiles(), b.mapping().column_owners());
    c_shape_ = block_sparse_shape(a.row_tiles(), b.col_tiles(), std::move(c_tiles));
    a_shape_ = a.shape();
    a_mapping_ = a.mapping();
    b_shape_ = b.shape();
    b_mapping_ = b.mapping();
    schedule_ = comm_.collectively([&] {
      return detail::schedule_bsgemm<T>(comm_.rank(), a.mapping(), a_shape_, b.mapping(), b_shape_, c_mapping_,
                                        c_shape_, options_.memory_bytes, options_.screening_threshold);
    });
    flops_ = comm_.sum(schedule_.flops);
    const bool packed = options_.tile_kernel == bsgemm_tile_kernel::packed ||
                        (options_.tile_kernel == bsgemm_tile_kernel::automatic && host_space &&
                         kernels::has_simd_tile_kernel<T>);
    // A host BLAS older than the CPU runs its oldest kernels (kernels/host_blas.hpp): say so once.
    if (host_space && !packed && comm_.rank() == 0) kernels::host_blas_warning("bsgemm's blas tile kernel");
    executor_ = detail::bsgemm_executor<T, execution_space>(packed, schedule_);
    transport_ = std::make_unique<transport_type>(comm_, schedule_);
  }

  /// C = alpha * A * B + beta * C (collective). A and B must have the shapes the
  /// plan inspected; C gets the plan's shape (beta * its old tiles kept).
  void apply(T alpha, const a_type& a, const b_type& b, T beta, c_type& c) {
    comm_.collectively([&] {
      detail::require_product_operands("bsgemm", comm_, a, b, c);
      TESSERA_REQUIRE(a.shape().same_pattern_as(a_shape_) && b.shape().same_pattern_as(b_shape_), invalid_argument,
                      "bsgemm: the nonzero pattern of A or B changed since the plan was made; make a new plan");
      TESSERA_REQUIRE(a.mapping() == a_mapping_, dimension_mismatch,
                      "bsgemm: A is distributed differently from the A the plan was made for; make a new plan");
      TESSERA_REQUIRE(c.mapping() == c_mapping_, dimension_mismatch,
                      "bsgemm: C must follow A's rows and B's columns ({} x {} tiles on the {} x {} grid)",
                      c_shape_.row_tiles().num_tiles(), c_shape_.col_tiles().num_tiles(), c_mapping_.grid().p,
                      c_mapping_.grid().q);
      if (beta != T{0})
        for (const auto& t : c.shape().tiles())
          TESSERA_REQUIRE(c_shape_.find(static_cast<std::size_t>(t.row), static_cast<std::size_t>(t.col)) !=
                              block_sparse_shape::npos,
                          invalid_argument,
                          "bsgemm: C's tile ({}, {}) is not in the plan's C shape; make the plan with C's shape "
                          "to keep beta * C",
                          t.row, t.col);
    });
    const stats_scope scope(comm_, "bsgemm");
    using executor = detail::bsgemm_executor<T, execution_space>;
    // C already laid out as the plan's C (every iteration after the first): scale in place, no allocation.
    const bool reuse = c.shape().same_pattern_as(c_shape_);
    block_sparse_tiles<T, memory_space> tiles =
        reuse ? static_cast<const block_sparse_tiles<T, memory_space>&>(c.local())
              : detail::allocate_tiles<T, memory_space>(c_mapping_, c_shape_, comm_.rank());
    // beta = 0: each C tile's first product writes it (tile_product::overwrite), so only
    // tiles that no product writes need zeroing.
    const bool overwrite = beta == T{0};
    if (reuse && beta == T{0}) executor::zero_unwritten(schedule_, tiles.values);
    else if (reuse && beta != T{1}) detail::scale_in_place<execution_space>(beta, tiles.values);
    else if (!reuse && beta != T{0}) executor::scale_old_c(beta, c.local(), c.shape(), c_shape_, tiles);

    const Kokkos::View<const T*, memory_space> a_local = a.local().values, b_local = b.local().values;
    // On the host each C tile is measured right after its last product, while it is in cache.
    std::vector<double> norms(host_space ? tiles.num_tiles() : 0, -1.0);
    const auto multiply = [&](const std::vector<kernels::tile_product>& products,
                              const Kokkos::View<const T*, memory_space>& a_tiles) {
      executor_.run(schedule_, products, alpha, a_tiles, b_local, tiles.values, overwrite, norms);
    };
    read_in_place_ = transport_->agree_in_place(a.local().node_shared, is_node_shared(a));
    if (read_in_place_) transport_->run_in_place(schedule_, *a.local().node_shared, a_local, multiply);
    else transport_->run_fetched(schedule_, a_local, a.local().num_elements(), multiply);
    if constexpr (host_space) {
      for (std::size_t t = 0; t < norms.size(); ++t)
        if (norms[t] < 0)
          norms[t] = detail::frobenius_norm(tiles.values.data() + tiles.offset[t], tiles.offset[t + 1] - tiles.offset[t]);
    }
    auto shape = host_space ? detail::agree_norms(comm_, c_mapping_, c_shape_, tiles, norms)
                            : detail::refresh_norms(comm_, c_mapping_, c_shape_, tiles);
    c = c_type(comm_, c_mapping_, typename c_type::local_block_type(std::move(tiles), std::move(shape)));
  }

  /// Whether this plan is for A's and B's nonzero patterns and distributions, `options`, and a C
  /// whose tiles it keeps when beta != 0 (`c_shape`, or nullptr); with a screening threshold
  /// the tile norms must match too, as they decide the products (not collective: this rank's
  /// answer; bsgemm() agrees over the ranks through kept_plan).
  [[nodiscard]] bool fits(const a_type& a, const b_type& b, const bsgemm_options& options,
                          const block_sparse_shape* c_shape) const {
    const bool same_options = options.memory_bytes == options_.memory_bytes &&
                              options.screening_threshold == options_.screening_threshold &&
                              options.tile_kernel == options_.tile_kernel;
    if (!same_options || !(a.mapping() == a_mapping_) || !(b.mapping() == b_mapping_)) return false;
    if (!a.shape().same_pattern_as(a_shape_) || !b.shape().same_pattern_as(b_shape_)) return false;
    if (options_.screening_threshold > 0 && !(a.shape() == a_shape_ && b.shape() == b_shape_)) return false;
    return c_shape == nullptr || c_shape_.covers(*c_shape);
  }

  /// A zero C with the plan's mapping and shape, ready for apply.
  [[nodiscard]] c_type make_c() const {
    return c_type(comm_, c_mapping_,
                  typename c_type::local_block_type(
                      detail::allocate_tiles<T, memory_space>(c_mapping_, c_shape_, comm_.rank()), c_shape_));
  }

  /// Flops of the tile products one apply performs, summed over ranks.
  [[nodiscard]] double flops() const noexcept { return flops_; }
  /// Blocks and chunks on this rank, and A elements it fetches per apply.
  [[nodiscard]] std::size_t num_blocks() const noexcept { return schedule_.num_blocks; }
  [[nodiscard]] std::size_t num_chunks() const noexcept { return schedule_.chunks.size(); }
  [[nodiscard]] std::size_t fetched_elements() const noexcept { return schedule_.fetched_elements; }
  [[nodiscard]] std::size_t gets_per_apply() const noexcept { return schedule_.gets(); }
  [[nodiscard]] const block_sparse_shape& c_shape() const noexcept { return c_shape_; }
  /// True when the last apply read the other ranks' A tiles in place, in node-shared memory
  /// (A made by share_on_node, all its readers on one node), instead of fetching them.
  [[nodiscard]] bool read_a_in_place() const noexcept { return read_in_place_; }
  /// True when the tiles are multiplied by the packed host kernel (bsgemm_tile_kernel).
  [[nodiscard]] bool packed_tiles() const noexcept { return executor_.packed(); }
  [[nodiscard]] const c_mapping_type& c_mapping() const noexcept { return c_mapping_; }

 private:
  using transport_type = detail::bsgemm_a_transport<T, execution_space, backend_type>;

  void validate(const a_type& a, const b_type& b) const {
    detail::require_same_ranks("bsgemm", comm_, b.comm(), "B");
    TESSERA_REQUIRE(a.col_tiles() == b.row_tiles(), dimension_mismatch,
                    "bsgemm: A's column tiling ({} columns in {} tiles) differs from B's row tiling ({} rows in {} "
                    "tiles)",
                    a.num_cols(), a.col_tiles().num_tiles(), b.num_rows(), b.row_tiles().num_tiles());
    TESSERA_REQUIRE(a.mapping().grid() == b.mapping().grid(), dimension_mismatch,
                    "bsgemm: A is on a {} x {} grid but B's columns are on a {} x {} grid", a.mapping().grid().p,
                    a.mapping().grid().q, b.mapping().grid().p, b.mapping().grid().q);
    TESSERA_REQUIRE(a.mapping().grid().size() == comm_.size(), dimension_mismatch,
                    "bsgemm: the {} x {} grid does not match the communicator's {} ranks", a.mapping().grid().p,
                    a.mapping().grid().q, comm_.size());
    TESSERA_REQUIRE(options_.memory_bytes >= 4 * sizeof(T), invalid_argument,
                    "bsgemm: a memory budget of {} bytes cannot hold a tile", options_.memory_bytes);
    TESSERA_REQUIRE(options_.tile_kernel != bsgemm_tile_kernel::packed || host_space, invalid_argument,
                    "bsgemm: tile_kernel::packed runs on host execution spaces only; use automatic or blas");
  }

  communicator comm_;
  bsgemm_options options_;
  block_sparse_shape a_shape_, b_shape_, c_shape_;
  c_mapping_type a_mapping_;
  typename PolicyB::mapping_type b_mapping_;
  c_mapping_type c_mapping_;
  detail::bsgemm_schedule schedule_;
  double flops_ = 0;
  bool read_in_place_ = false;
  detail::bsgemm_executor<T, execution_space> executor_;
  std::unique_ptr<transport_type> transport_;
};

/// Deduces the plan's policies from its operands: `bsgemm_plan plan(a, b, options);`
template <class T, class PolicyA, class PolicyB, class... Rest>
bsgemm_plan(const dist_matrix<T, PolicyA>&, const dist_matrix<T, PolicyB>&, Rest&&...) -> bsgemm_plan<T, PolicyA, PolicyB>;

/// The plan of A * B under `options` (and C's tiles when given), made on first use and kept in
/// A.plan_cache() (collective; kept_plans.hpp): an iteration that refines A's values in place, or
/// multiplies A by B again, inspects once.
template <class T, matrix_policy PolicyA, matrix_policy PolicyB>
bsgemm_plan<T, PolicyA, PolicyB>& bsgemm_plan_for(const dist_matrix<T, PolicyA>& a, const dist_matrix<T, PolicyB>& b,
                                                  bsgemm_options options = {},
                                                  const block_sparse_shape* c_shape = nullptr) {
  using plan_type = bsgemm_plan<T, PolicyA, PolicyB>;
  return kept_plan<plan_type>(
      a.comm(), a.plan_cache(), [&](const plan_type& plan) { return plan.fits(a, b, options, c_shape); },
      [&] { return std::make_shared<plan_type>(a, b, options, c_shape); }, plans_kept_holding_operands);
}

/// C = alpha * A * B + beta * C (collective), through the plan kept with A (bsgemm_plan_for).
template <class T, matrix_policy PolicyA, matrix_policy PolicyB>
void bsgemm(T alpha, const dist_matrix<T, PolicyA>& a, const dist_matrix<T, PolicyB>& b, T beta,
            dist_matrix<T, PolicyA>& c, bsgemm_options options = {}) {
  bsgemm_plan_for(a, b, options, beta != T{0} ? &c.shape() : nullptr).apply(alpha, a, b, beta, c);
}

/// C = alpha * A * B (collective); C follows A's rows and B's columns.
template <class T, matrix_policy PolicyA, matrix_policy PolicyB>
[[nodiscard]] dist_matrix<T, PolicyA> bsgemm(T alpha, const dist_matrix<T, PolicyA>& a, const dist_matrix<T, PolicyB>& b,
                                             bsgemm_options options = {}) {
  auto& plan = bsgemm_plan_for(a, b, options);
  auto c = plan.make_c();
  plan.apply(alpha, a, b, T{0}, c);
  return c;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_HPP
#endif
