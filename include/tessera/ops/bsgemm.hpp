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
/// Written once against the backend concept: mpi_rma, progress_rank, aggregator.

#include "../comm/communicator.hpp"
#include "../comm/mpi_memory.hpp"
#include "../comm/request.hpp"
#include "../comm/segment.hpp"
#include "../core/error.hpp"
#include "../distribution/block_cyclic_2d.hpp"
#include "../distribution/replicated_columns.hpp"
#include "../kernels/packed_tile_gemm.hpp"
#include "../kernels/tile_gemm.hpp"
#include "../matrix/block_sparse_matrix.hpp"
#include "../matrix/gather.hpp"
#include "../matrix/share_on_node.hpp"
#include "detail/bsgemm_inspect.hpp"
#include "detail/operand_checks.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace tessera {

/// How bsgemm multiplies tiles on a rank.
enum class bsgemm_tile_kernel {
  /// `packed` where it is fast (a host execution space and a SIMD kernel for T
  /// compiled in, kernels::has_simd_tile_kernel), `blas` otherwise.
  automatic,
  /// One KokkosBlas::gemm per tile product (the system BLAS on the host,
  /// cuBLAS/rocBLAS on devices).
  blas,
  /// kernels/packed_tile_gemm.hpp: each A tile packed once per chunk, then all
  /// its products run on the packed copy, B read in place. Host only.
  packed,
};

/// Options of bsgemm.
struct bsgemm_options {
  /// Bytes of memory granted to the product's working set on each rank. Half
  /// bounds a block (its B columns and C tiles), a quarter a chunk of A tiles,
  /// the last quarter the chunk being prefetched.
  std::size_t memory_bytes = std::size_t{1} << 30;
  /// Skip tile products with ||A_ik|| * ||B_kj|| below this (0: no screening).
  double screening_threshold = 0.0;
  /// The node-local tile kernel (docs/block_sparse.md, "Tile products").
  bsgemm_tile_kernel tile_kernel = bsgemm_tile_kernel::automatic;
};

/// A shape with zero norms from a pattern predicate `nonzero(ti, tj)` (to plan distributions before any value exists).
template <class Pattern>
[[nodiscard]] block_sparse_shape pattern_shape(const tiled_range& rows, const tiled_range& cols, Pattern&& nonzero) {
  std::vector<tile_norm> tiles;
  for (std::size_t ti = 0; ti < rows.num_tiles(); ++ti)
    for (std::size_t tj = 0; tj < cols.num_tiles(); ++tj)
      if (nonzero(ti, tj)) tiles.push_back({static_cast<std::int64_t>(ti), static_cast<std::int64_t>(tj), 1.0});
  return block_sparse_shape(rows, cols, std::move(tiles));
}

/// Grid columns of B's tile columns for A * B on q grid columns: balanced by
/// flop count, mirrored-cyclic (the seed's §3.2.1), then rebalanced by moves
/// and swaps (rebalance_assignment). Give them to
/// replicated_columns::make_tile_mapping when distributing B.
[[nodiscard]] inline std::vector<int> bsgemm_column_owners(const block_sparse_shape& a, const block_sparse_shape& b,
                                                           int q) {
  const auto flops = detail::column_flops(a, b, 0.0);
  auto owners = mirrored_cyclic_assignment(flops, q);
  rebalance_assignment(flops, owners, q);
  return owners;
}

namespace detail {
/// values *= beta, in the execution space (no fence). A free function because nvcc refuses an
/// extended (__host__ __device__) lambda inside a private member of bsgemm_plan.
template <class ExecutionSpace, class T, class MemorySpace>
void scale_in_place(T beta, const Kokkos::View<T*, MemorySpace>& values) {
  Kokkos::parallel_for(
      "tessera::bsgemm::scale_c", Kokkos::RangePolicy<ExecutionSpace>(0, values.extent(0)),
      KOKKOS_LAMBDA(const std::size_t e) { values(e) *= beta; });
}
}  // namespace detail

/// The inspected plan of C = alpha * A * B + beta * C for fixed shapes.
///
/// Build it once (collective), apply it to every iteration (collective); the
/// tensor-contraction loop refines A's values with the same shape and B fixed.
template <class T, class Backend, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class bsgemm_plan {
 public:
  using a_type = block_sparse_matrix<T, block_cyclic_2d, Backend, ExecutionSpace>;
  using b_type = block_sparse_matrix<T, replicated_columns, Backend, ExecutionSpace>;
  using c_type = block_sparse_matrix<T, block_cyclic_2d, Backend, ExecutionSpace>;
  using memory_space = typename ExecutionSpace::memory_space;
  using backend_context = typename Backend::context;
  static constexpr bool host_space = Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;

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
    const auto mine = comm_.collectively([&] { return local_c_tiles(a, b, c_shape); });
    // C's shape: every rank's tiles, agreed.
    std::vector<std::int64_t> coords;
    for (const auto& [ti, tj] : mine) {
      coords.push_back(static_cast<std::int64_t>(ti));
      coords.push_back(static_cast<std::int64_t>(tj));
    }
    const auto all = comm_.allgather_concatenated(coords);
    std::vector<tile_norm> c_tiles;
    for (std::size_t k = 0; k + 1 < all.size(); k += 2) c_tiles.push_back({all[k], all[k + 1], 0.0});
    c_mapping_ = block_cyclic_2d::mapping(a.mapping().grid(), a.row_tiles(), b.col_tiles(), b.mapping().column_owners());
    c_shape_ = block_sparse_shape(a.row_tiles(), b.col_tiles(), std::move(c_tiles));
    packed_ = options_.tile_kernel == bsgemm_tile_kernel::packed ||
              (options_.tile_kernel == bsgemm_tile_kernel::automatic && host_space && kernels::has_simd_tile_kernel<T>);
    comm_.collectively([&] { inspect(a, b); });
    flops_ = comm_.sum(local_flops_);
    // Whether any rank reads this rank's A: if none does, apply skips staging it.
    std::vector<int> readers(static_cast<std::size_t>(comm_.size()), 0);
    for (const auto& ch : chunks_)
      for (const auto& g : ch.gets) readers[static_cast<std::size_t>(g.owner)] = 1;
    for (int rank = 0; rank < comm_.size(); ++rank)
      if (readers[static_cast<std::size_t>(rank)]) sources_.push_back(rank);
    comm_.allreduce_inplace(readers, MPI_SUM);
    staged_ = readers[static_cast<std::size_t>(comm_.rank())] > 0;
    context_ = std::make_unique<backend_context>(comm_, typename Backend::options{});
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
    // C already laid out as the plan's C (every iteration after the first): scale in place, no allocation.
    const bool reuse = c.shape().same_pattern_as(c_shape_);
    auto tiles = reuse ? c.local() : detail::allocate_tiles<T, memory_space>(c_mapping_, c_shape_, comm_.rank());
    // beta = 0: each C tile's first product writes it (tile_product::overwrite), so only
    // tiles that no product writes need zeroing.
    const bool overwrite = beta == T{0};
    if (reuse && beta == T{0}) zero_unwritten(tiles.values);
    else if (reuse && beta != T{1}) detail::scale_in_place<ExecutionSpace>(beta, tiles.values);
    else if (!reuse && beta != T{0}) scale_old_c(beta, c, tiles);

    const Kokkos::View<const T*, memory_space> a_local = a.local().values, b_local = b.local().values;
    // On the host each C tile is measured right after its last product, while it is in cache.
    std::vector<double> norms(host_space ? tiles.num_tiles() : 0, -1.0);
    read_in_place_ = agree_in_place(a);
    if (read_in_place_) {
      run_in_place(alpha, a, a_local, b_local, tiles.values, overwrite, norms);
    } else {
      run_fetched(alpha, a, a_local, b_local, tiles.values, overwrite, norms);
    }
    if constexpr (host_space) {
      for (std::size_t t = 0; t < norms.size(); ++t)
        if (norms[t] < 0)
          norms[t] = detail::frobenius_norm(tiles.values.data() + tiles.offset[t], tiles.offset[t + 1] - tiles.offset[t]);
    }
    auto shape = host_space ? detail::agree_norms(comm_, c_mapping_, c_shape_, tiles, norms)
                            : detail::refresh_norms(comm_, c_mapping_, c_shape_, tiles);
    c = c_type(comm_, c_mapping_, std::move(shape), std::move(tiles));
  }

  /// A zero C with the plan's mapping and shape, ready for apply.
  [[nodiscard]] c_type make_c() const {
    return c_type(comm_, c_mapping_, c_shape_,
                  detail::allocate_tiles<T, memory_space>(c_mapping_, c_shape_, comm_.rank()));
  }

  /// Flops of the tile products one apply performs, summed over ranks.
  [[nodiscard]] double flops() const noexcept { return flops_; }
  /// Blocks and chunks on this rank, and A elements it fetches per apply.
  [[nodiscard]] std::size_t num_blocks() const noexcept { return num_blocks_; }
  [[nodiscard]] std::size_t num_chunks() const noexcept { return chunks_.size(); }
  [[nodiscard]] std::size_t fetched_elements() const noexcept { return fetched_elements_; }
  [[nodiscard]] std::size_t gets_per_apply() const noexcept {
    std::size_t g = 0;
    for (const auto& c : chunks_) g += c.gets.size();
    return g;
  }
  [[nodiscard]] const block_sparse_shape& c_shape() const noexcept { return c_shape_; }
  /// True when the last apply read the other ranks' A tiles in place, in node-shared memory
  /// (A made by share_on_node, all its readers on one node), instead of fetching them.
  [[nodiscard]] bool read_a_in_place() const noexcept { return read_in_place_; }
  /// True when the tiles are multiplied by the packed host kernel (bsgemm_tile_kernel).
  [[nodiscard]] bool packed_tiles() const noexcept { return packed_; }
  [[nodiscard]] const block_cyclic_2d::mapping& c_mapping() const noexcept { return c_mapping_; }

 private:
  // Whether this apply reads the other ranks' A tiles in place: A is node-shared on every rank
  // (one share_on_node, the same everywhere), and every rank it reads from shares this rank's node.
  bool agree_in_place(const a_type& a) const {
    const auto& shared = a.local().node_shared;
    bool mine = host_space && is_node_shared(a);
    if (mine)
      for (const int owner : sources_) mine = mine && shared->on_node(owner);
    const auto id = mine ? static_cast<std::int64_t>(shared->id()) : std::int64_t{-1};
    // Stores into A before this call (kernels still running included) reach the readers, ordered by this allreduce.
    if (mine) {
      ExecutionSpace().fence();
      shared->sync();
    }
    std::vector<std::int64_t> agreed{id, -id};
    comm_.allreduce_inplace(agreed, MPI_MIN);
    const bool everywhere = agreed[0] >= 0 && agreed[0] == -agreed[1];
    if (everywhere) shared->sync();
    return everywhere;
  }

  // Fetched tiles read where they lie in the owners' node-shared A.
  void run_in_place(T alpha, const a_type& a, const Kokkos::View<const T*, memory_space>& a_local,
                    const Kokkos::View<const T*, memory_space>& b_local, const Kokkos::View<T*, memory_space>& c,
                    bool overwrite, std::vector<double>& norms) {
    if constexpr (!host_space) return;  // node-shared memory is host memory: never agreed
    const auto& shared = *a.local().node_shared;
    for (const auto& ch : chunks_) {
      run_products(ch.local_products, alpha, a_local, b_local, c, overwrite, norms);
      for (const auto& run : ch.in_place) {
        const auto there = shared.peer(run.owner);
        const Kokkos::View<const T*, memory_space> owner_a(there.data(), there.size());
        run_products(run.products, alpha, owner_a, b_local, c, overwrite, norms);
      }
    }
    ExecutionSpace().fence();
    // Nobody may write its A while others still read it.
    shared.sync();
    comm_.barrier();
    shared.sync();
  }

  // Fetched tiles copied into this rank's chunk buffers, the next chunk in flight while one is multiplied.
  void run_fetched(T alpha, const a_type& a, const Kokkos::View<const T*, memory_space>& a_local,
                   const Kokkos::View<const T*, memory_space>& b_local, const Kokkos::View<T*, memory_space>& c,
                   bool overwrite, std::vector<double>& norms) {
    // Made at the first apply that fetches (collective: every rank agreed to fetch).
    if (!staging_.valid()) {
      staging_ = staging_window<T, memory_space, Backend>(*context_, a.local().num_elements());
      for (int k = 0; k < 2; ++k) {
        buffers_[k] = Kokkos::View<T*, memory_space>("tessera::bsgemm::chunk", buffer_elements_);
        landing_[k] = mpi_buffer_for<Backend>(buffers_[k]);
      }
    }
    // Stage this rank's A where the others can fetch it.
    if (staged_) Kokkos::deep_copy(staging_.local(), a.local().values);
    fence_before_mpi(ExecutionSpace());
    context_->barrier();
    std::vector<request> in_flight;
    auto start = [&](std::size_t k) {
      const auto& buffer = landing_[k % 2];
      for (const auto& g : chunks_[k].gets)
        in_flight.push_back(context_->get_nb(staging_.segment_handle(), g.owner, g.remote, std::span<T>(buffer.data() + g.local, g.count)));
    };
    if (!chunks_.empty()) start(0);
    for (std::size_t k = 0; k < chunks_.size(); ++k) {
      std::vector<request> current = std::move(in_flight);
      in_flight.clear();
      // The other buffer is free (chunk k - 1 is done): prefetch chunk k + 1 into it.
      if (k + 1 < chunks_.size()) start(k + 1);
      // Local A tiles need no transfer: multiply them while the chunk arrives.
      run_products(chunks_[k].local_products, alpha, a_local, b_local, c, overwrite, norms);
      wait_all(current);
      copy_from_mpi(buffers_[k % 2], landing_[k % 2]);
      const Kokkos::View<const T*, memory_space> chunk = buffers_[k % 2];
      run_products(chunks_[k].fetched_products, alpha, chunk, b_local, c, overwrite, norms);
    }
    ExecutionSpace().fence();
    // Nobody may restage its A while others still read it.
    context_->barrier();
  }

  struct get_op {
    int owner;
    std::size_t remote, local, count;
  };
  struct owner_products {
    int owner;
    std::vector<kernels::tile_product> products;  ///< A at offsets on `owner`
  };
  struct chunk {
    std::vector<get_op> gets;
    std::vector<kernels::tile_product> local_products, fetched_products;
    std::vector<owner_products> in_place;  ///< fetched_products, in order, grouped by owner
  };

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

  // The C tiles this rank computes: rows of its grid row, columns of its grid column.
  std::vector<std::pair<std::size_t, std::size_t>> local_c_tiles(const a_type& a, const b_type& b,
                                                                 const block_sparse_shape* old) const {
    const auto& grid = a.mapping().grid();
    const int r = grid.row_of(comm_.rank()), c = grid.col_of(comm_.rank());
    const auto& as = a.shape();
    const auto& bs = b.shape();
    std::vector<std::pair<std::size_t, std::size_t>> out;
    std::vector<char> mark(bs.col_tiles().num_tiles(), 0);
    for (std::size_t ti = static_cast<std::size_t>(r); ti < as.row_tiles().num_tiles(); ti += static_cast<std::size_t>(grid.p)) {
      std::fill(mark.begin(), mark.end(), 0);
      for (std::size_t e = as.row_begin(ti); e < as.row_end(ti); ++e) {
        const auto kk = static_cast<std::size_t>(as.tiles()[e].col);
        for (std::size_t f = bs.row_begin(kk); f < bs.row_end(kk); ++f) {
          const auto tj = static_cast<std::size_t>(bs.tiles()[f].col);
          if (b.mapping().tile_col_owner(tj) == c &&
              detail::passes_screening(as.tiles()[e].norm, bs.tiles()[f].norm, options_.screening_threshold))
            mark[tj] = 1;
        }
      }
      if (old != nullptr)
        for (std::size_t e = old->row_begin(ti); e < old->row_end(ti); ++e) {
          const auto tj = static_cast<std::size_t>(old->tiles()[e].col);
          if (b.mapping().tile_col_owner(tj) == c) mark[tj] = 1;
        }
      for (std::size_t tj = 0; tj < mark.size(); ++tj)
        if (mark[tj]) out.emplace_back(ti, tj);
    }
    return out;
  }

  void inspect(const a_type& a, const b_type& b) {
    const auto& grid = a.mapping().grid();
    const int me = comm_.rank();
    const int r = grid.row_of(me), c = grid.col_of(me);
    a_shape_ = a.shape();
    a_mapping_ = a.mapping();
    b_shape_ = b.shape();
    const auto& as = a_shape_;
    const auto& bs = b_shape_;
    const auto& cs = c_shape_;

    // Where every A tile of this grid row lives on its owner, and B's and C's tiles here.
    std::vector<std::vector<std::size_t>> a_offset(static_cast<std::size_t>(grid.q));
    for (int col = 0; col < grid.q; ++col) {
      std::size_t total = 0;
      a_offset[static_cast<std::size_t>(col)] = detail::tile_offsets_on(a.mapping(), as, grid.rank(r, col), total);
    }
    std::size_t unused = 0;
    const auto b_offset = detail::tile_offsets_on(b.mapping(), bs, me, unused);
    const auto c_offset = detail::tile_offsets_on(c_mapping_, cs, me, unused);
    const auto elems_a = [&](std::size_t t) { return as.tile_elements(t); };

    // Columns of this rank and the memory each needs in a block: its B tiles and this rank's C tiles.
    std::vector<std::size_t> columns, bytes;
    for (std::size_t tj = 0; tj < bs.col_tiles().num_tiles(); ++tj) {
      if (b.mapping().tile_col_owner(tj) != c) continue;
      std::size_t elements = 0;
      for (std::size_t e = bs.col_begin(tj); e < bs.col_end(tj); ++e) elements += bs.tile_elements(bs.by_col()[e]);
      for (std::size_t e = cs.col_begin(tj); e < cs.col_end(tj); ++e)
        if (cs.tiles()[cs.by_col()[e]].row % grid.p == r) elements += cs.tile_elements(cs.by_col()[e]);
      columns.push_back(tj);
      bytes.push_back(elements * sizeof(T));
    }
    const std::size_t block_capacity = options_.memory_bytes / 2, chunk_capacity = options_.memory_bytes / 4;
    for (std::size_t k = 0; k < columns.size(); ++k)
      TESSERA_REQUIRE(bytes[k] <= block_capacity, invalid_argument,
                      "bsgemm: memory budget of {} bytes too small: tile column {} needs {} bytes for its B and C "
                      "tiles, and a block may use half the budget",
                      options_.memory_bytes, columns[k], bytes[k]);
    const auto blocks = detail::worst_fit_blocks(columns, bytes, block_capacity);
    num_blocks_ = blocks.size();

    std::size_t buffer_elements = 0;
    for (const auto& block : blocks) {
      // The products of this block, and the A tiles they need grouped by A row.
      struct product {
        std::size_t a, b, c;
      };
      std::vector<product> products;
      std::vector<std::vector<std::size_t>> rows(as.row_tiles().num_tiles());
      std::vector<char> needed(as.num_nonzero_tiles(), 0);
      for (std::size_t tj : block)
        for (std::size_t e = bs.col_begin(tj); e < bs.col_end(tj); ++e) {
          const std::size_t bt = bs.by_col()[e];
          const auto kk = static_cast<std::size_t>(bs.tiles()[bt].row);
          for (std::size_t f = as.col_begin(kk); f < as.col_end(kk); ++f) {
            const std::size_t at = as.by_col()[f];
            const auto ti = static_cast<std::size_t>(as.tiles()[at].row);
            if (static_cast<int>(ti % static_cast<std::size_t>(grid.p)) != r) continue;
            if (!detail::passes_screening(as.tiles()[at].norm, bs.tiles()[bt].norm, options_.screening_threshold))
              continue;
            const std::size_t ct = cs.find(ti, tj);
            TESSERA_REQUIRE(ct != block_sparse_shape::npos, internal, "bsgemm: C tile ({}, {}) missing", ti, tj);
            products.push_back({at, bt, ct});
            if (!needed[at]) {
              needed[at] = 1;
              rows[ti].push_back(at);
            }
          }
        }
      for (auto& row : rows) std::sort(row.begin(), row.end());
      for (std::size_t t = 0; t < needed.size(); ++t)
        TESSERA_REQUIRE(!needed[t] || as.tile_elements(t) * sizeof(T) <= chunk_capacity, invalid_argument,
                        "bsgemm: memory budget of {} bytes too small: A tile ({}, {}) needs {} bytes and a chunk may "
                        "use a quarter of the budget",
                        options_.memory_bytes, as.tiles()[t].row, as.tiles()[t].col, as.tile_elements(t) * sizeof(T));
      const auto cut = detail::cyclic_chunks(rows, [&](std::size_t t) { return elems_a(t) * sizeof(T); }, chunk_capacity);
      std::vector<std::size_t> chunk_of(as.num_nonzero_tiles()), place(as.num_nonzero_tiles());
      const std::size_t first_chunk = chunks_.size();
      const auto owner_of = [&](std::size_t at) {
        const auto& t = as.tiles()[at];
        return a.mapping().tile_owner(static_cast<std::size_t>(t.row), static_cast<std::size_t>(t.col));
      };
      const auto offset_on_owner = [&](std::size_t at) {
        return a_offset[static_cast<std::size_t>(grid.col_of(owner_of(at)))][at];
      };
      for (std::size_t k = 0; k < cut.size(); ++k) {
        chunk ch;
        std::size_t filled = 0;
        // A chunk's tiles by owner, as they lie there: one get per contiguous run, and the buffer
        // holds each owner's tiles in the order they are read in place (apply_in_place).
        auto tiles_of_chunk = cut[k];
        std::sort(tiles_of_chunk.begin(), tiles_of_chunk.end(), [&](std::size_t x, std::size_t y) {
          return std::pair(owner_of(x), offset_on_owner(x)) < std::pair(owner_of(y), offset_on_owner(y));
        });
        for (std::size_t at : tiles_of_chunk) {
          chunk_of[at] = first_chunk + k;
          const int owner = owner_of(at);
          const std::size_t remote = offset_on_owner(at);
          if (owner == me) {
            place[at] = remote;  // read in place from the local A
            continue;
          }
          place[at] = filled;
          const std::size_t n = elems_a(at);
          if (n == 0) continue;  // a zero-width tile: nothing to move
          // Tiles contiguous on their owner and here travel in one get.
          if (!ch.gets.empty() && ch.gets.back().owner == owner && ch.gets.back().remote + ch.gets.back().count == remote &&
              ch.gets.back().local + ch.gets.back().count == filled)
            ch.gets.back().count += n;
          else
            ch.gets.push_back({owner, remote, filled, n});
          filled += n;
          fetched_elements_ += n;
        }
        buffer_elements = std::max(buffer_elements, filled);
        chunks_.push_back(std::move(ch));
      }
      for (const auto& p : products) {
        const auto& ta = as.tiles()[p.a];
        const auto& tb = bs.tiles()[p.b];
        const kernels::tile_product tp{place[p.a],
                                       b_offset[p.b],
                                       c_offset[p.c],
                                       static_cast<int>(as.row_tiles().size(static_cast<std::size_t>(ta.row))),
                                       static_cast<int>(bs.col_tiles().size(static_cast<std::size_t>(tb.col))),
                                       static_cast<int>(bs.row_tiles().size(static_cast<std::size_t>(tb.row)))};
        local_flops_ += 2.0 * tp.m * tp.n * tp.k;
        auto& ch = chunks_[chunk_of[p.a]];
        (owner_of(p.a) == me ? ch.local_products : ch.fetched_products).push_back(tp);
      }
    }
    // Each A tile's products together (the packed kernel packs it once, then it meets its B tiles),
    // and so, fetched tiles by owner. Empty products write nothing: C tiles only they touch are unwritten_.
    std::size_t packed_a = 0;
    for (auto& ch : chunks_)
      for (auto* list : {&ch.local_products, &ch.fetched_products}) {
        std::erase_if(*list, [](const kernels::tile_product& t) { return t.m == 0 || t.n == 0 || t.k == 0; });
        std::stable_sort(list->begin(), list->end(),
                         [](const kernels::tile_product& x, const kernels::tile_product& y) { return x.a < y.a; });
        for (const auto& t : *list)
          packed_a = std::max(packed_a, kernels::packed_shape<T>::a_elements(static_cast<std::size_t>(t.m),
                                                                            static_cast<std::size_t>(t.k)));
      }
    if (packed_) packed_a_ = Kokkos::View<T*, memory_space>("tessera::bsgemm::packed_a", packed_a);
    mark_first_writes(c_offset, cs);
    for (auto& ch : chunks_) ch.in_place = read_in_place(ch);
    buffer_elements_ = buffer_elements;
  }

  // The fetched products of a chunk with A read where it lies on its owner: the chunk buffer's
  // tiles are its gets' runs back to back, so a buffer position names an owner and an offset there.
  static std::vector<owner_products> read_in_place(const chunk& ch) {
    std::vector<owner_products> runs;
    for (auto p : ch.fetched_products) {
      const auto g = std::upper_bound(ch.gets.begin(), ch.gets.end(), p.a,
                                      [](std::size_t place, const get_op& x) { return place < x.local; });
      TESSERA_REQUIRE(g != ch.gets.begin(), internal, "bsgemm: fetched A tile at {} outside the chunk's gets", p.a);
      const auto& from = *std::prev(g);
      p.a = from.remote + (p.a - from.local);
      if (runs.empty() || runs.back().owner != from.owner) runs.push_back({from.owner, {}});
      runs.back().products.push_back(p);
    }
    return runs;
  }

  static constexpr std::size_t npos_offset = static_cast<std::size_t>(-1);  // tile_offsets_on: not on this rank

  // In execution order, the first product of every C tile overwrites it and the
  // last one marks it final; the local C tiles no product writes are
  // remembered, to be zeroed when beta = 0.
  void mark_first_writes(const std::vector<std::size_t>& c_offset, const block_sparse_shape& cs) {
    c_tiles_.clear();  // in shape order, so by increasing offset
    for (std::size_t t = 0, local = 0; t < cs.num_nonzero_tiles(); ++t) {
      if (c_offset[t] == npos_offset) continue;
      if (cs.tile_elements(t) > 0) c_tiles_.push_back({c_offset[t], local, cs.tile_elements(t)});
      ++local;
    }
    std::vector<kernels::tile_product*> last(c_tiles_.size(), nullptr);
    for (auto& ch : chunks_)
      for (auto* list : {&ch.local_products, &ch.fetched_products})
        for (auto& p : *list) {
          if (p.m == 0 || p.n == 0 || p.k == 0) continue;
          const std::size_t at = c_position(p.c);
          p.overwrite = last[at] == nullptr;
          last[at] = &p;
        }
    unwritten_.clear();
    for (std::size_t at = 0; at < last.size(); ++at) {
      if (last[at] != nullptr) last[at]->last = true;
      else unwritten_.emplace_back(c_tiles_[at].offset, c_tiles_[at].elements);
    }
  }

  // Index into c_tiles_ of the C tile at `offset`.
  std::size_t c_position(std::size_t offset) const {
    const auto it = std::lower_bound(c_tiles_.begin(), c_tiles_.end(), offset,
                                     [](const c_tile_ref& t, std::size_t o) { return t.offset < o; });
    TESSERA_REQUIRE(it != c_tiles_.end() && it->offset == offset, internal, "bsgemm: product into an unknown C tile");
    return static_cast<std::size_t>(it - c_tiles_.begin());
  }

  void zero_unwritten(const Kokkos::View<T*, memory_space>& values) const {
    for (const auto& [offset, count] : unwritten_)
      Kokkos::deep_copy(Kokkos::subview(values, std::pair<std::size_t, std::size_t>(offset, offset + count)), T{0});
  }

  void run_products(const std::vector<kernels::tile_product>& products, T alpha,
                    const Kokkos::View<const T*, memory_space>& a, const Kokkos::View<const T*, memory_space>& b,
                    const Kokkos::View<T*, memory_space>& c, bool may_overwrite, std::vector<double>& norms) const {
    if constexpr (host_space) {
      if (packed_) {
        run_packed(products, alpha, a, b, c, may_overwrite, norms);
        return;
      }
      for (const auto& p : products) {
        kernels::tile_gemm<ExecutionSpace, T, memory_space>(p, alpha, a, b, c, may_overwrite);
        if (p.last) measure(p, c, norms);
      }
    } else {
      kernels::tile_gemms<ExecutionSpace, T, memory_space>(products, alpha, a, b, c, may_overwrite);
    }
  }

  // The norm of a finished C tile (host memory).
  void measure(const kernels::tile_product& p, const Kokkos::View<T*, memory_space>& c, std::vector<double>& norms) const {
    const auto& tile = c_tiles_[c_position(p.c)];
    norms[tile.local] = detail::frobenius_norm(c.data() + tile.offset, tile.elements);
  }

  // Products sorted by A tile: pack each A tile once, then run all its products.
  void run_packed(const std::vector<kernels::tile_product>& products, T alpha,
                  const Kokkos::View<const T*, memory_space>& a, const Kokkos::View<const T*, memory_space>& b,
                  const Kokkos::View<T*, memory_space>& c, bool may_overwrite, std::vector<double>& norms) const {
    for (std::size_t first = 0; first < products.size();) {
      const auto& lead = products[first];
      kernels::pack_a<ExecutionSpace>(a.data() + lead.a, lead.m, lead.k, packed_a_.data());
      std::size_t last = first;
      for (; last < products.size() && products[last].a == lead.a; ++last) {
        const auto& p = products[last];
        // The next product's B tile is fetched while this one finishes.
        kernels::following_product<T> following;
        if (last + 1 < products.size())
          following = {b.data() + products[last + 1].b, products[last + 1].n, products[last + 1].k};
        kernels::packed_gemm<ExecutionSpace>(p.m, p.n, p.k, alpha, packed_a_.data(), b.data() + p.b, c.data() + p.c,
                                             may_overwrite && p.overwrite, following);
        if (p.last) measure(p, c, norms);
      }
      first = last;
    }
  }

  // beta * C's old tiles, into the tiles of the plan's shape.
  void scale_old_c(T beta, const c_type& c, block_sparse_tiles<T, memory_space>& tiles) const {
    const auto old_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.local().values);
    auto host = Kokkos::create_mirror_view(tiles.values);
    Kokkos::deep_copy(host, T{0});
    std::vector<std::size_t> where(c_shape_.num_nonzero_tiles(), static_cast<std::size_t>(-1));
    for (std::size_t k = 0; k < tiles.num_tiles(); ++k) where[tiles.index[k]] = k;
    for (std::size_t k = 0; k < c.local().num_tiles(); ++k) {
      const auto& t = c.shape().tiles()[c.local().index[k]];
      const std::size_t pos = c_shape_.find(static_cast<std::size_t>(t.row), static_cast<std::size_t>(t.col));
      const std::size_t to = where[pos];
      for (std::size_t e = 0; e < c.local().offset[k + 1] - c.local().offset[k]; ++e)
        host(tiles.offset[to] + e) = beta * old_host(c.local().offset[k] + e);
    }
    Kokkos::deep_copy(tiles.values, host);
  }

  communicator comm_;
  bsgemm_options options_;
  block_sparse_shape a_shape_, b_shape_, c_shape_;
  block_cyclic_2d::mapping a_mapping_;
  block_cyclic_2d::mapping c_mapping_;
  std::vector<chunk> chunks_;
  std::size_t num_blocks_ = 0, fetched_elements_ = 0;
  bool staged_ = true, read_in_place_ = false;
  std::vector<int> sources_;  // the ranks whose A tiles this rank reads
  std::size_t buffer_elements_ = 0;
  double local_flops_ = 0, flops_ = 0;
  Kokkos::View<T*, memory_space> buffers_[2];
  // The packed kernel's scratch: one packed A tile.
  bool packed_ = false;
  Kokkos::View<T*, memory_space> packed_a_;
  std::vector<std::pair<std::size_t, std::size_t>> unwritten_;  // {offset, elements} of C tiles no product writes
  struct c_tile_ref {
    std::size_t offset, local, elements;
  };
  std::vector<c_tile_ref> c_tiles_;  // this rank's nonzero-size C tiles
  // Where the gets land (comm/mpi_memory.hpp): buffers_ themselves where MPI reaches them.
  decltype(mpi_buffer_for<Backend>(std::declval<Kokkos::View<T*, memory_space>>())) landing_[2];
  std::unique_ptr<backend_context> context_;
  staging_window<T, memory_space, Backend> staging_;
};

/// C = alpha * A * B + beta * C with a fresh plan (collective). Keep a
/// bsgemm_plan to reuse the inspection across iterations.
template <class T, class Backend, class E>
void bsgemm(T alpha, const block_sparse_matrix<T, block_cyclic_2d, Backend, E>& a,
            const block_sparse_matrix<T, replicated_columns, Backend, E>& b, T beta,
            block_sparse_matrix<T, block_cyclic_2d, Backend, E>& c, bsgemm_options options = {}) {
  bsgemm_plan<T, Backend, E> plan(a, b, options, beta != T{0} ? &c.shape() : nullptr);
  plan.apply(alpha, a, b, beta, c);
}

/// C = alpha * A * B (collective); C follows A's rows and B's columns.
template <class T, class Backend, class E>
[[nodiscard]] block_sparse_matrix<T, block_cyclic_2d, Backend, E> bsgemm(
    T alpha, const block_sparse_matrix<T, block_cyclic_2d, Backend, E>& a,
    const block_sparse_matrix<T, replicated_columns, Backend, E>& b, bsgemm_options options = {}) {
  bsgemm_plan<T, Backend, E> plan(a, b, options);
  auto c = plan.make_c();
  plan.apply(alpha, a, b, T{0}, c);
  return c;
}

}  // namespace tessera
