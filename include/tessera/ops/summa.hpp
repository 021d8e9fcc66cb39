#pragma once
/// @file
/// Plain SUMMA for block-sparse matrices that are all 2-D tile-cyclic on one
/// p x q grid: for each tile index k of the inner dimension, every rank
/// fetches the A tiles (its rows, column k) and B tiles (row k, its columns)
/// it needs, one-sided, the next step's tiles in flight while this step's
/// products run. For square, dense-ish products where no operand is much
/// larger than the others (bsgemm keeps a large B stationary instead).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SUMMA_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../comm/communicator.hpp"
#include "../comm/shared_context.hpp"
#include "../comm/mpi_memory.hpp"
#include "../comm/request.hpp"
#include "../comm/segment.hpp"
#include "../core/error.hpp"
#include "../distribution/block_cyclic_2d.hpp"
#include "../kernels/tile_gemm.hpp"
#include "../concepts/distribution.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../matrix/make_block_sparse.hpp"
#include "../matrix/gather.hpp"
#include "detail/operand_checks.hpp"
#include "kept_plans.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace tessera {

/// The inspected plan of C = alpha * A * B + beta * C by SUMMA (A and B tile-dealt on one grid;
/// C distributed as A is).
template <class T, matrix_policy PolicyA, matrix_policy PolicyB = PolicyA>
class summa_plan {
  static_assert(tile_storage<typename PolicyA::storage_type> && tile_storage<typename PolicyB::storage_type>,
                "tessera::summa: A and B must be tile-stored (policy<block_cyclic_2d, tiles, backend_type>); convert an "
                "element-sparse matrix with to_tiles");
  static_assert(tile_grid_mapping<typename PolicyA::mapping_type> && tile_grid_mapping<typename PolicyB::mapping_type>,
                "tessera::summa: A's and B's distributions must deal tile rows over grid rows and tile columns over "
                "grid columns, one rank per tile (tile_grid_mapping, e.g. block_cyclic_2d); move them there with "
                "to_tiles");
  static_assert(std::is_same_v<typename PolicyA::execution_space, typename PolicyB::execution_space>,
                "tessera::summa: A and B must use the same execution space");

 public:
  /// A plan stays where it was made (it holds windows, a shared context and registrations): it
  /// is neither copied nor moved, so no moved-from plan exists. Share it by reference, through
  /// the plans kept with a matrix (kept_plans.hpp) or a std::shared_ptr.
  summa_plan(const summa_plan&) = delete;
  summa_plan& operator=(const summa_plan&) = delete;

  using execution_space = typename PolicyA::execution_space;
  using backend_type = typename PolicyA::backend_type;
  using a_type = dist_matrix<T, PolicyA>;
  using b_type = dist_matrix<T, PolicyB>;
  /// C is distributed as A is, with A's rows and B's columns.
  using c_type = dist_matrix<T, PolicyA>;
  using memory_space = typename execution_space::memory_space;
  using backend_context = typename backend_type::context;

  /// Inspect A's and B's shapes (and C's, kept when given). Collective.
  summa_plan(const a_type& a, const b_type& b, const block_sparse_shape* c_shape = nullptr)
      : comm_(a.comm()) {
    const auto& grid = a.mapping().grid();
    comm_.collectively([&] {
      detail::require_same_ranks("summa", comm_, b.comm(), "B");
      TESSERA_REQUIRE(a.col_tiles() == b.row_tiles(), dimension_mismatch,
                      "summa: A's column tiling ({} in {} tiles) differs from B's row tiling ({} in {} tiles)",
                      a.num_cols(), a.col_tiles().num_tiles(), b.num_rows(), b.row_tiles().num_tiles());
      TESSERA_REQUIRE(grid == b.mapping().grid() && grid.size() == comm_.size(), dimension_mismatch,
                      "summa: A ({} x {}) and B ({} x {}) must share one grid of the communicator's {} ranks", grid.p,
                      grid.q, b.mapping().grid().p, b.mapping().grid().q, comm_.size());
      TESSERA_REQUIRE(c_shape == nullptr ||
                          (c_shape->row_tiles() == a.row_tiles() && c_shape->col_tiles() == b.col_tiles()),
                      dimension_mismatch, "summa: C must be tiled like A's rows and B's columns");
    });
    c_mapping_ = a.mapping().with_tiles(a.row_tiles(), b.col_tiles(), b.mapping().column_owners());
    const int me = comm_.rank(), r = grid.row_of(me), c = grid.col_of(me);
    const auto& as = a.shape();
    const auto& bs = b.shape();
    // This rank's C tiles, then everybody's.
    std::vector<std::int64_t> coords;
    std::vector<char> mark(bs.col_tiles().num_tiles());
    for (std::size_t ti = 0; ti < as.row_tiles().num_tiles(); ++ti) {
      if (a.mapping().tile_row_owner(ti) != r) continue;
      std::fill(mark.begin(), mark.end(), 0);
      for (std::size_t e = as.row_begin(ti); e < as.row_end(ti); ++e) {
        const auto kk = static_cast<std::size_t>(as.tiles()[e].col);
        for (std::size_t f = bs.row_begin(kk); f < bs.row_end(kk); ++f)
          if (b.mapping().tile_col_owner(static_cast<std::size_t>(bs.tiles()[f].col)) == c)
            mark[static_cast<std::size_t>(bs.tiles()[f].col)] = 1;
      }
      if (c_shape != nullptr)
        for (std::size_t e = c_shape->row_begin(ti); e < c_shape->row_end(ti); ++e)
          if (b.mapping().tile_col_owner(static_cast<std::size_t>(c_shape->tiles()[e].col)) == c)
            mark[static_cast<std::size_t>(c_shape->tiles()[e].col)] = 1;
      for (std::size_t tj = 0; tj < mark.size(); ++tj)
        if (mark[tj]) {
          coords.push_back(static_cast<std::int64_t>(ti));
          coords.push_back(static_cast<std::int64_t>(tj));
        }
    }
    const auto all = comm_.allgather_concatenated(coords);
    std::vector<tile_norm> c_tiles;
    for (std::size_t k = 0; k + 1 < all.size(); k += 2) c_tiles.push_back({all[k], all[k + 1], 0.0});
    c_shape_ = block_sparse_shape(a.row_tiles(), b.col_tiles(), std::move(c_tiles));
    a_shape_ = as;
    b_shape_ = bs;
    a_mapping_ = a.mapping();
    b_mapping_ = b.mapping();

    // One step per inner tile index: the A tiles of my rows in column kk, the B tiles of my columns in row kk.
    std::size_t unused = 0;
    const auto c_offset = detail::tile_offsets_on(c_mapping_, c_shape_, me, unused);
    std::vector<std::vector<std::size_t>> a_offset(static_cast<std::size_t>(grid.size())),
        b_offset(static_cast<std::size_t>(grid.size()));
    for (int rank = 0; rank < grid.size(); ++rank) {
      a_offset[static_cast<std::size_t>(rank)] = detail::tile_offsets_on(a.mapping(), as, rank, unused);
      b_offset[static_cast<std::size_t>(rank)] = detail::tile_offsets_on(b.mapping(), bs, rank, unused);
    }
    std::size_t a_max = 0, b_max = 0;
    for (std::size_t kk = 0; kk < as.col_tiles().num_tiles(); ++kk) {
      step s;
      std::vector<std::pair<std::size_t, std::size_t>> a_here, b_here;  // (shape position, buffer offset)
      std::size_t a_fill = 0, b_fill = 0;
      for (std::size_t e = as.col_begin(kk); e < as.col_end(kk); ++e) {
        const std::size_t t = as.by_col()[e];
        const auto ti = static_cast<std::size_t>(as.tiles()[t].row);
        if (a.mapping().tile_row_owner(ti) != r) continue;
        const int owner = a.mapping().tile_owner(ti, kk);
        s.gets_a.push_back({owner, a_offset[static_cast<std::size_t>(owner)][t], a_fill, as.tile_elements(t)});
        a_here.emplace_back(t, a_fill);
        a_fill += as.tile_elements(t);
      }
      for (std::size_t f = bs.row_begin(kk); f < bs.row_end(kk); ++f) {
        const auto tj = static_cast<std::size_t>(bs.tiles()[f].col);
        if (b.mapping().tile_col_owner(tj) != c) continue;
        const int owner = b.mapping().tile_owner(kk, tj);
        s.gets_b.push_back({owner, b_offset[static_cast<std::size_t>(owner)][f], b_fill, bs.tile_elements(f)});
        b_here.emplace_back(f, b_fill);
        b_fill += bs.tile_elements(f);
      }
      for (const auto& [ta, at] : a_here)
        for (const auto& [tb, bt] : b_here) {
          const auto ti = static_cast<std::size_t>(as.tiles()[ta].row), tj = static_cast<std::size_t>(bs.tiles()[tb].col);
          const kernels::tile_product p{at,
                                        bt,
                                        c_offset[c_shape_.find(ti, tj)],
                                        static_cast<int>(as.row_tiles().size(ti)),
                                        static_cast<int>(bs.col_tiles().size(tj)),
                                        static_cast<int>(bs.row_tiles().size(kk))};
          local_flops_ += 2.0 * p.m * p.n * p.k;
          s.products.push_back(p);
        }
      a_max = std::max(a_max, a_fill);
      b_max = std::max(b_max, b_fill);
      if (!s.products.empty()) steps_.push_back(std::move(s));
    }
    flops_ = comm_.sum(local_flops_);
    for (int k = 0; k < 2; ++k) {
      a_buf_[k] = Kokkos::View<T*, memory_space>("tessera::summa::a", a_max);
      b_buf_[k] = Kokkos::View<T*, memory_space>("tessera::summa::b", b_max);
      a_landing_[k] = mpi_buffer_for<backend_type>(a_buf_[k]);
      b_landing_[k] = mpi_buffer_for<backend_type>(b_buf_[k]);
    }
    context_ = shared_context<backend_type>(comm_);
    a_stage_ = window_type(*context_, a.local().num_elements());
    b_stage_ = window_type(*context_, b.local().num_elements());
  }

  /// C = alpha * A * B + beta * C (collective); C gets the plan's shape.
  void apply(T alpha, const a_type& a, const b_type& b, T beta, c_type& c) {
    comm_.collectively([&] {
      detail::require_product_operands("summa", comm_, a, b, c);
      TESSERA_REQUIRE(a.shape().same_pattern_as(a_shape_) && b.shape().same_pattern_as(b_shape_), invalid_argument,
                      "summa: the nonzero pattern of A or B changed since the plan was made; make a new plan");
      TESSERA_REQUIRE(c.mapping() == c_mapping_, dimension_mismatch, "summa: C must follow A's rows and B's columns");
      TESSERA_REQUIRE(beta == T{0} || c_shape_.covers(c.shape()), invalid_argument,
                      "summa: C has tiles that are not in the plan's C shape; make the plan with C's shape to keep "
                      "beta * C");
    });
    const stats_scope scope(comm_, "summa");
    auto tiles = detail::allocate_tiles<T, memory_space>(c_mapping_, c_shape_, comm_.rank());
    if (beta != T{0}) {
      const auto old_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.local().values);
      auto host = Kokkos::create_mirror_view(tiles.values);
      tessera::detail::deep_copy(host, T{0});
      for (std::size_t k = 0; k < c.local().num_tiles(); ++k) {
        const auto& t = c.shape().tiles()[c.local().index[k]];
        const std::size_t pos = c_shape_.find(static_cast<std::size_t>(t.row), static_cast<std::size_t>(t.col));
        const auto to = static_cast<std::size_t>(
            std::lower_bound(tiles.index.begin(), tiles.index.end(), pos) - tiles.index.begin());
        for (std::size_t e = 0; e < c.local().offset[k + 1] - c.local().offset[k]; ++e)
          host(tiles.offset[to] + e) = beta * old_host(c.local().offset[k] + e);
      }
      tessera::detail::deep_copy(tiles.values, host);
    }
    tessera::detail::deep_copy(a_stage_.local(), a.local().values);
    tessera::detail::deep_copy(b_stage_.local(), b.local().values);
    fence_before_mpi(execution_space());
    context_->barrier();
    std::vector<request> in_flight;
    auto start = [&](std::size_t k) {
      for (const auto& g : steps_[k].gets_a)
        in_flight.push_back(context_->get_nb(a_stage_.segment_handle(), g.owner, g.remote, std::span<T>(a_landing_[k % 2].data() + g.local, g.count)));
      for (const auto& g : steps_[k].gets_b)
        in_flight.push_back(context_->get_nb(b_stage_.segment_handle(), g.owner, g.remote, std::span<T>(b_landing_[k % 2].data() + g.local, g.count)));
    };
    if (!steps_.empty()) start(0);
    for (std::size_t k = 0; k < steps_.size(); ++k) {
      std::vector<request> current = std::move(in_flight);
      in_flight.clear();
      wait_all(current);
      if (k + 1 < steps_.size()) start(k + 1);  // the next step's panels travel while this one multiplies
      copy_from_mpi(a_buf_[k % 2], a_landing_[k % 2]);
      copy_from_mpi(b_buf_[k % 2], b_landing_[k % 2]);
      const Kokkos::View<const T*, memory_space> ap = a_buf_[k % 2], bp = b_buf_[k % 2];
      kernels::tile_gemms<execution_space, T, memory_space>(steps_[k].products, alpha, ap, bp, tiles.values);
    }
    execution_space().fence();
    context_->barrier();
    auto shape = detail::refresh_norms(comm_, c_mapping_, c_shape_, tiles);
    c = c_type(comm_, c_mapping_, typename c_type::local_block_type(std::move(tiles), std::move(shape)));
  }

  /// Whether this plan is for A's and B's nonzero patterns and distributions and a C whose tiles
  /// it keeps when beta != 0 (`c_shape`, or nullptr) (not collective: summa() agrees through kept_plan).
  [[nodiscard]] bool fits(const a_type& a, const b_type& b, const block_sparse_shape* c_shape) const {
    return a.mapping() == a_mapping_ && b.mapping() == b_mapping_ && a.shape().same_pattern_as(a_shape_) &&
           b.shape().same_pattern_as(b_shape_) && (c_shape == nullptr || c_shape_.covers(*c_shape));
  }

  /// A zero C with the plan's mapping and shape.
  [[nodiscard]] c_type make_c() const {
    return c_type(comm_, c_mapping_,
                  typename c_type::local_block_type(
                      detail::allocate_tiles<T, memory_space>(c_mapping_, c_shape_, comm_.rank()), c_shape_));
  }
  /// Flops of one apply, summed over ranks; steps (inner tile indices with work) on this rank.
  [[nodiscard]] double flops() const noexcept { return flops_; }
  [[nodiscard]] std::size_t num_steps() const noexcept { return steps_.size(); }

 private:
  struct get_op {
    int owner;
    std::size_t remote, local, count;
  };
  struct step {
    std::vector<get_op> gets_a, gets_b;
    std::vector<kernels::tile_product> products;
  };

  communicator comm_;
  typename PolicyA::mapping_type c_mapping_;
  block_sparse_shape c_shape_;
  block_sparse_shape a_shape_, b_shape_;  ///< the patterns the plan was made for
  typename PolicyA::mapping_type a_mapping_;
  typename PolicyB::mapping_type b_mapping_;
  std::vector<step> steps_;
  double local_flops_ = 0, flops_ = 0;
  Kokkos::View<T*, memory_space> a_buf_[2], b_buf_[2];
  using window_type = staging_window<T, memory_space, backend_type>;
  // Where the gets land (comm/mpi_memory.hpp): the panels themselves where MPI reaches them.
  decltype(mpi_buffer_for<backend_type>(std::declval<Kokkos::View<T*, memory_space>>())) a_landing_[2], b_landing_[2];
  std::shared_ptr<backend_context> context_;
  window_type a_stage_, b_stage_;
};

/// Deduces the plan's policies from its operands: `summa_plan plan(a, b);`
template <class T, class PolicyA, class PolicyB, class... Rest>
summa_plan(const dist_matrix<T, PolicyA>&, const dist_matrix<T, PolicyB>&, Rest&&...) -> summa_plan<T, PolicyA, PolicyB>;

/// The SUMMA plan of A * B (keeping C's tiles when given), made on first use and kept in
/// A.plan_cache() (collective; kept_plans.hpp).
template <class T, matrix_policy PolicyA, matrix_policy PolicyB>
summa_plan<T, PolicyA, PolicyB>& summa_plan_for(const dist_matrix<T, PolicyA>& a, const dist_matrix<T, PolicyB>& b,
                                                const block_sparse_shape* c_shape = nullptr) {
  using plan_type = summa_plan<T, PolicyA, PolicyB>;
  return kept_plan<plan_type>(
      a.comm(), a.plan_cache(), [&](const plan_type& plan) { return plan.fits(a, b, c_shape); },
      [&] { return std::make_shared<plan_type>(a, b, c_shape); }, plans_kept_holding_operands);
}

/// C = alpha * A * B by SUMMA (collective); C follows A's rows and B's columns.
template <class T, matrix_policy PolicyA, matrix_policy PolicyB>
[[nodiscard]] dist_matrix<T, PolicyA> summa(T alpha, const dist_matrix<T, PolicyA>& a, const dist_matrix<T, PolicyB>& b) {
  auto& plan = summa_plan_for(a, b);
  auto c = plan.make_c();
  plan.apply(alpha, a, b, T{0}, c);
  return c;
}

/// C = alpha * A * B + beta * C by SUMMA (collective).
template <class T, matrix_policy PolicyA, matrix_policy PolicyB>
void summa(T alpha, const dist_matrix<T, PolicyA>& a, const dist_matrix<T, PolicyB>& b, T beta,
           dist_matrix<T, PolicyA>& c) {
  summa_plan_for(a, b, beta != T{0} ? &c.shape() : nullptr).apply(alpha, a, b, beta, c);
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SUMMA_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SUMMA_HPP
#endif
