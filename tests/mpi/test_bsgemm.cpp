// Block-sparse GEMM against a dense serial reference: irregular tiles, empty
// tiles and tile rows, every process grid of the rank count, beta != 0,
// screening, budgets that force many blocks and chunks, plan reuse, traffic
// asserted from the counters, and bad input raised on every rank.
#include "test_support.hpp"

#include <cmath>
#include <random>

namespace bsgemm_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

// Node-shared memory is host memory (share_on_node refuses device matrices): the in-place cases
// build their operands on the host execution space, which is the default one on host builds.
using host_exec = Kokkos::DefaultHostExecutionSpace;

template <class B, class E = Kokkos::DefaultExecutionSpace>
using a_matrix = dist_matrix<double, policy<block_cyclic_2d, tiles, B, E>>;
template <class B, class E = Kokkos::DefaultExecutionSpace>
using b_matrix = dist_matrix<double, policy<replicated_columns, tiles, B, E>>;

// Tile sizes drawn from [lo, hi] (the same on every rank: a fixed seed).
tiled_range random_tiling(global_index n_tiles, global_index lo, global_index hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<global_index> size(lo, hi);
  std::vector<global_index> sizes;
  for (global_index t = 0; t < n_tiles; ++t) sizes.push_back(size(rng));
  return tiled_range::from_sizes(sizes);
}

double element(global_index i, global_index j, int salt) {
  return 0.125 * static_cast<double>((i * 13 + j * 7 + salt * 5) % 17) - 1.0;
}

// A deterministic pseudo-random pattern with the given density; tile row `empty_row` has no tiles.
auto pattern(double density, unsigned salt, std::size_t empty_row = static_cast<std::size_t>(-1)) {
  return [=](std::size_t ti, std::size_t tj) {
    if (ti == empty_row) return false;
    const auto h = (ti * 2654435761u + tj * 40503u + salt * 97u) % 1000u;
    return static_cast<double>(h) < density * 1000.0;
  };
}

std::vector<process_grid> grids_of(int ranks) {
  std::vector<process_grid> g;
  for (int p = 1; p <= ranks; ++p)
    if (ranks % p == 0) g.push_back({p, ranks / p});
  return g;
}

struct problem {
  tiled_range m, k, n;
};

problem irregular_problem() {
  // Row tiles include an empty (zero-width) tile; sizes vary 1..9.
  std::vector<global_index> m_sizes{5, 0, 7, 3, 9, 4, 6};
  return {tiled_range::from_sizes(m_sizes), random_tiling(9, 1, 8, 11), random_tiling(8, 2, 9, 12)};
}

template <class B, class E = Kokkos::DefaultExecutionSpace>
struct operands {
  a_matrix<B, E> a;
  b_matrix<B, E> b;
};

template <class B, class E = Kokkos::DefaultExecutionSpace>
operands<B, E> make_operands(const communicator& comm, const problem& pr, process_grid grid, double density_a,
                          double density_b, std::size_t empty_a_row = static_cast<std::size_t>(-1)) {
  const auto a_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), pr.m, pr.k);
  auto a = make_block_sparse<double, policy<block_cyclic_2d, tiles, B, E>>(comm, a_map, pattern(density_a, 1, empty_a_row),
                                                         [](global_index i, global_index j) { return element(i, j, 1); });
  const auto b_pattern = pattern(density_b, 2);
  const auto owners = bsgemm_column_owners(a.shape(), pattern_shape(pr.k, pr.n, b_pattern), grid.q);
  const auto b_map = replicated_columns{.grid = grid}.make_tile_mapping(comm.size(), pr.k, pr.n, owners);
  auto b = make_block_sparse<double, policy<replicated_columns, tiles, B, E>>(comm, b_map, b_pattern,
                                                            [](global_index i, global_index j) { return element(i, j, 2); });
  return {std::move(a), std::move(b)};
}

// Dense reference C = alpha * A * B + beta * C0, skipping the products screening skips.
template <class AMatrix, class BMatrix>
std::vector<double> reference(double alpha, const AMatrix& a, const BMatrix& b, double beta,
                              const std::vector<double>& c0, double threshold) {
  const auto ad = gather_dense(a), bd = gather_dense(b);
  const auto m = static_cast<std::size_t>(a.num_rows()), k = static_cast<std::size_t>(a.num_cols()),
             n = static_cast<std::size_t>(b.num_cols());
  std::vector<double> c(m * n, 0.0);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < m; ++i) {
      double s = 0;
      for (std::size_t l = 0; l < k; ++l) {
        if (threshold > 0) {
          const auto ti = a.row_tiles().tile_of(static_cast<global_index>(i));
          const auto tl = a.col_tiles().tile_of(static_cast<global_index>(l));
          const auto tj = b.col_tiles().tile_of(static_cast<global_index>(j));
          const auto pa = a.shape().find(ti, tl), pb = b.shape().find(tl, tj);
          if (pa == block_sparse_shape::npos || pb == block_sparse_shape::npos) continue;
          if (a.shape().tiles()[pa].norm * b.shape().tiles()[pb].norm < threshold) continue;
        }
        s += ad[i + l * m] * bd[l + j * k];
      }
      c[i + j * m] = alpha * s + (c0.empty() ? 0.0 : beta * c0[i + j * m]);
    }
  return c;
}

void require_close(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t e = 0; e < got.size(); ++e) {
    INFO("element " << e);
    REQUIRE(std::abs(got[e] - expected[e]) <= 1e-10 * (1.0 + std::abs(expected[e])));
  }
}

template <class B>
void check_grid(process_grid grid, bsgemm_options options = {}) {
  const auto& comm = test::world();
  INFO("grid " << grid.p << " x " << grid.q);
  const auto pr = irregular_problem();
  auto [a, b] = make_operands<B>(comm, pr, grid, 0.6, 0.5, 3);
  // beta = 0
  auto c = bsgemm(1.5, a, b, options);
  require_close(gather_dense(c), reference(1.5, a, b, 0.0, {}, 0.0));
  // beta != 0 on the C just computed
  const auto c0 = gather_dense(c);
  bsgemm(-0.5, a, b, 2.0, c, options);
  require_close(gather_dense(c), reference(-0.5, a, b, 2.0, c0, 0.0));
  // beta = 0 into that C, laid out as the plan's: reused in place, each tile's first product overwrites it
  // (whatever C held), tiles no product writes are zeroed.
  bsgemm_plan plan(a, b, options);
  plan.apply(0.25, a, b, 0.0, c);
  require_close(gather_dense(c), reference(0.25, a, b, 0.0, {}, 0.0));
}

// The packed tile kernel runs on host spaces only: on a device space the tests check blas alone
// (and say so).
constexpr bool packed_runs_here = Kokkos::SpaceAccessibility<Kokkos::DefaultExecutionSpace, Kokkos::HostSpace>::accessible;

std::vector<bsgemm_tile_kernel> tile_kernels_here() {
  if (!packed_runs_here) MESSAGE("skipped: the packed tile kernel on a device execution space (host-only)");
  if (packed_runs_here) return {bsgemm_tile_kernel::blas, bsgemm_tile_kernel::packed};
  return {bsgemm_tile_kernel::blas};
}

std::vector<bsgemm_options> both_tile_kernels() {
  std::vector<bsgemm_options> out;
  for (const auto kernel : tile_kernels_here()) out.push_back({.tile_kernel = kernel});
  return out;
}

}  // namespace

TEST_CASE_TEMPLATE("bsgemm equals the dense reference on every grid, with either tile kernel", B, mpi_rma, aggregator) {
  for (const auto& options : both_tile_kernels())
    for (const auto grid : grids_of(test::world().size())) check_grid<B>(grid, options);
}

TEST_CASE("bsgemm with beta = 0 on a C with extra tiles clears the tiles no product writes") {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  for (const auto& options : both_tile_kernels())
    for (const auto grid : grids_of(comm.size())) {
      INFO("grid " << grid.p << " x " << grid.q);
      auto [a, b] = make_operands<mpi_rma>(comm, pr, grid, 0.6, 0.5, 3);  // A's tile row 3 empty
      const bsgemm_plan probe(a, b, options);
      // Every C tile stored, so some (all of tile row 3) have no product.
      auto c = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(
          comm, probe.c_mapping(), [](std::size_t, std::size_t) { return true; },
          [](global_index i, global_index j) { return element(i, j, 9); });
      bsgemm_plan plan(a, b, options, &c.shape());
      REQUIRE(plan.c_shape().num_nonzero_tiles() == c.shape().num_nonzero_tiles());
      const auto c0 = gather_dense(c);
      plan.apply(1.0, a, b, 1.0, c);  // C laid out as the plan's: accumulated in place
      require_close(gather_dense(c), reference(1.0, a, b, 1.0, c0, 0.0));
      plan.apply(0.5, a, b, 0.0, c);
      require_close(gather_dense(c), reference(0.5, a, b, 0.0, {}, 0.0));
    }
}

TEST_CASE("bsgemm on progress ranks equals the dense reference" * doctest::skip(!test::progress_ranks_requested())) {
  for (const auto& options : both_tile_kernels())
    for (const auto grid : grids_of(test::world().size())) check_grid<progress_rank>(grid, options);
}

TEST_CASE_TEMPLATE("bsgemm with a small budget makes many blocks and chunks", B, mpi_rma, aggregator) {
  const auto& comm = test::world();
  for (const auto grid : grids_of(comm.size())) {
    // The largest column (B and C tiles) needs under 6 KB: blocks of 6000 bytes, chunks of 3000.
    bsgemm_options small{.memory_bytes = 12000};
    check_grid<B>(grid, small);
    for (const auto kernel : tile_kernels_here()) {
      small.tile_kernel = kernel;
      check_grid<B>(grid, small);
    }
    small.tile_kernel = bsgemm_tile_kernel::automatic;
    const auto pr = irregular_problem();
    auto [a, b] = make_operands<B>(comm, pr, grid, 0.9, 0.9);
    bsgemm_plan plan(a, b, small);
    if (grid.q == 1) CHECK(plan.num_blocks() > 1);  // every rank holds all 8 columns: they cannot fit one block
    CHECK(comm.max(plan.num_chunks()) > comm.max(plan.num_blocks()));
  }
}

TEST_CASE("bsgemm screening skips the products below the threshold") {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  for (const auto grid : grids_of(comm.size())) {
    auto [a, b] = make_operands<mpi_rma>(comm, pr, grid, 0.8, 0.8);
    // A threshold between the smallest and largest norm products.
    double lo = 1e300, hi = 0;
    for (const auto& x : a.shape().tiles())
      for (const auto& y : b.shape().tiles()) {
        if (x.norm * y.norm > 0) lo = std::min(lo, x.norm * y.norm);  // zero-width tiles have norm 0
        hi = std::max(hi, x.norm * y.norm);
      }
    const double threshold = std::sqrt(lo * hi);
    const bsgemm_options screened{.screening_threshold = threshold};
    auto c = bsgemm(1.0, a, b, screened);
    require_close(gather_dense(c), reference(1.0, a, b, 0.0, {}, threshold));
    bsgemm_plan full(a, b), partial(a, b, screened);
    CHECK(partial.flops() < full.flops());
    CHECK(partial.flops() > 0);
  }
}

TEST_CASE("bsgemm with empty operands") {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  const auto grid = grids_of(comm.size()).back();
  auto [a, b] = make_operands<mpi_rma>(comm, pr, grid, 0.0, 0.5);  // A has no tiles
  auto c = bsgemm(1.0, a, b);
  CHECK(c.shape().num_nonzero_tiles() == 0);
  require_close(gather_dense(c), std::vector<double>(static_cast<std::size_t>(pr.m.extent() * pr.n.extent()), 0.0));
}

TEST_CASE("bsgemm fetches exactly the A tiles each rank needs, and a plan is reused (mpi_rma)") {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  for (const auto grid : grids_of(comm.size())) {
    auto [a, b] = make_operands<mpi_rma>(comm, pr, grid, 0.7, 0.6);
    // Expected: A tiles (ti, kk) of my grid row, held elsewhere, with a nonzero B(kk, tj) in my columns.
    const int me = comm.rank(), r = grid.row_of(me), c = grid.col_of(me);
    std::size_t expected = 0;
    for (std::size_t t = 0; t < a.shape().num_nonzero_tiles(); ++t) {
      const auto& at = a.shape().tiles()[t];
      const auto ti = static_cast<std::size_t>(at.row), kk = static_cast<std::size_t>(at.col);
      if (static_cast<int>(ti) % grid.p != r || a.mapping().tile_owner(ti, kk) == me) continue;
      bool used = false;
      for (std::size_t e = b.shape().row_begin(kk); e < b.shape().row_end(kk); ++e)
        used = used || b.mapping().tile_col_owner(static_cast<std::size_t>(b.shape().tiles()[e].col)) == c;
      if (used) expected += a.shape().tile_elements(t);
    }
    bsgemm_plan plan(a, b);  // the default budget holds everything: one block, one chunk
    CHECK(plan.num_blocks() <= 1);
    CHECK(plan.fetched_elements() == expected);
    auto c_mat = plan.make_c();
    comm.stats().reset();
    plan.apply(1.0, a, b, 0.0, c_mat);
    CHECK(comm.stats().of("bsgemm").bytes == expected * sizeof(double));
    CHECK(comm.stats().of("bsgemm").messages == plan.gets_per_apply());
    require_close(gather_dense(c_mat), reference(1.0, a, b, 0.0, {}, 0.0));
    // The same plan on new values of A with the same shape (an iteration): same traffic, right answer.
    auto a2 = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(
        comm, a.mapping(), pattern(0.7, 1), [](global_index i, global_index j) { return element(i, j, 5); });
    comm.stats().reset();
    plan.apply(2.0, a2, b, 0.0, c_mat);
    CHECK(comm.stats().of("bsgemm").bytes == expected * sizeof(double));
    require_close(gather_dense(c_mat), reference(2.0, a2, b, 0.0, {}, 0.0));
  }
}

// Every rank reads A only from ranks of its grid row: in place when each grid row lies on one node.
bool grid_rows_on_nodes(process_grid grid, int ranks_per_node) {
  if (ranks_per_node <= 0) return true;  // one real node
  for (int r = 0; r < grid.p; ++r)
    for (int c = 0; c < grid.q; ++c)
      if (grid.rank(r, c) / ranks_per_node != grid.rank(r, 0) / ranks_per_node) return false;
  return true;
}

TEST_CASE_TEMPLATE("bsgemm reads a node-shared A in place: no transfer, the same C" * doctest::skip(test::shared_windows_disabled()),
                   B, mpi_rma, aggregator) {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  // The default budget (one chunk) and a small one (many blocks and chunks), on both tile kernels.
  for (const std::size_t budget : {std::size_t{1} << 30, std::size_t{12000}})
    for (auto options : both_tile_kernels())
      for (const auto grid : grids_of(comm.size())) {
        INFO("grid " << grid.p << " x " << grid.q << ", budget " << budget);
        options.memory_bytes = budget;
        auto [private_a, b] = make_operands<B, host_exec>(comm, pr, grid, 0.7, 0.6, 3);
        auto a = share_on_node(private_a);
        REQUIRE(is_node_shared(a));
        bsgemm_plan plan(a, b, options);
        auto c = plan.make_c();
        comm.stats().reset();
        plan.apply(1.0, a, b, 0.0, c);
        CHECK(plan.read_a_in_place());
        CHECK(comm.stats().of("bsgemm").bytes == 0);
        CHECK(comm.stats().of("bsgemm").messages == 0);
        INFO("in place");
        require_close(gather_dense(c), reference(1.0, a, b, 0.0, {}, 0.0));

        // New values written in place (an iteration of the contraction): still shared, still right.
        auto values = a.local().values;
        for (std::size_t e = 0; e < values.extent(0); ++e) values(e) = 0.5 * values(e) + 0.25;
        const auto c0 = gather_dense(c);
        plan.apply(2.0, a, b, -1.0, c);
        CHECK(plan.read_a_in_place());
        INFO("in place, new values");
        require_close(gather_dense(c), reference(2.0, a, b, -1.0, c0, 0.0));
        // beta = 0 into that (nonzero) C: each tile's first product must overwrite it.
        plan.apply(0.5, a, b, 0.0, c);
        INFO("in place, beta = 0 over a nonzero C");
        require_close(gather_dense(c), reference(0.5, a, b, 0.0, {}, 0.0));

        // The same plan on the private copy fetches, as it must: the plans' two paths agree.
        comm.stats().reset();
        plan.apply(1.0, private_a, b, 0.0, c);
        CHECK_FALSE(plan.read_a_in_place());
        if constexpr (std::is_same_v<B, mpi_rma>)
          CHECK(comm.stats().of("bsgemm").bytes == plan.fetched_elements() * sizeof(double));
        INFO("fetched");
        require_close(gather_dense(c), reference(1.0, private_a, b, 0.0, {}, 0.0));
        // And back in place after a fetching apply.
        const auto c1 = gather_dense(c);
        plan.apply(1.0, a, b, 1.0, c);
        CHECK(plan.read_a_in_place());
        INFO("in place after fetching");
        require_close(gather_dense(c), reference(1.0, a, b, 1.0, c1, 0.0));

        // Ranks that disagree (rank 0 passes its private copy, given the same values) all fetch.
        Kokkos::deep_copy(private_a.local().values, a.local().values);
        const auto& mixed = comm.rank() == 0 ? private_a : a;
        plan.apply(1.0, mixed, b, 0.0, c);
        CHECK_FALSE(plan.read_a_in_place());
        INFO("mixed");
        require_close(gather_dense(c), reference(1.0, a, b, 0.0, {}, 0.0));
      }
}

TEST_CASE("bsgemm reads A in place only when its grid row shares a node (emulated nodes)" *
          doctest::skip(test::shared_windows_disabled())) {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  for (const int ranks_per_node : {1, 2, 3})  // 3 at 4 ranks: nodes {0, 1, 2} and {3}
    for (const auto grid : grids_of(comm.size())) {
      INFO("grid " << grid.p << " x " << grid.q << ", " << ranks_per_node << " ranks per node");
      auto [private_a, b] = make_operands<mpi_rma, host_exec>(comm, pr, grid, 0.7, 0.6);
      auto a = share_on_node(private_a, ranks_per_node);
      bsgemm_plan plan(a, b);
      auto c = plan.make_c();
      // Ranks that read nothing (a grid row of one) never leave their node.
      const bool expected = grid.q == 1 || grid_rows_on_nodes(grid, ranks_per_node);
      comm.stats().reset();
      plan.apply(1.0, a, b, 0.0, c);
      CHECK(plan.read_a_in_place() == expected);
      CHECK(comm.stats().of("bsgemm").bytes == (expected ? 0 : plan.fetched_elements() * sizeof(double)));
      require_close(gather_dense(c), reference(1.0, a, b, 0.0, {}, 0.0));
    }
}

TEST_CASE("share_on_node keeps the matrix, and a new View makes it private again" *
          doctest::skip(test::shared_windows_disabled())) {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  const auto grid = grids_of(comm.size()).back();
  auto [private_a, b] = make_operands<mpi_rma, host_exec>(comm, pr, grid, 0.7, 0.6);
  auto a = share_on_node(private_a);
  CHECK(is_node_shared(a));
  CHECK_FALSE(is_node_shared(private_a));
  CHECK(a.shape() == private_a.shape());
  CHECK(gather_dense(a) == gather_dense(private_a));
  if (a.local().num_elements() > 0) CHECK(a.local().values.data() != private_a.local().values.data());
  a.local().values = Kokkos::View<double*, Kokkos::HostSpace>("copy", a.local().values.extent(0));
  CHECK_FALSE(is_node_shared(a));
}

TEST_CASE("bsgemm rejects bad input on every rank") {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  const auto grid = grids_of(comm.size()).back();
  auto [a, b] = make_operands<mpi_rma>(comm, pr, grid, 0.7, 0.6);
  auto expect = [](auto&& f, error_kind kind, const char* words) {
    try {
      f();
      FAIL("no error");
    } catch (const error& e) {
      CHECK(e.kind() == kind);
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  // A's columns tiled unlike B's rows.
  const auto other_k = random_tiling(9, 1, 8, 99);
  const auto bad_map = replicated_columns{.grid = grid}.make_tile_mapping(comm.size(), other_k, pr.n);
  auto bad_b = make_block_sparse<double, policy<replicated_columns, tiles, mpi_rma>>(comm, bad_map, pattern(0.5, 2),
                                                                      [](global_index, global_index) { return 1.0; });
  expect([&] { (void)bsgemm(1.0, a, bad_b); }, error_kind::dimension_mismatch, "tiling");
  // A C tiled unlike A's rows and B's columns, with beta != 0.
  const auto c_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), pr.m, other_k);
  auto bad_c = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(comm, c_map, pattern(0.5, 3),
                                                                   [](global_index, global_index) { return 1.0; });
  expect([&] { bsgemm(1.0, a, b, 1.0, bad_c); }, error_kind::dimension_mismatch, "tiled");
  // A budget that cannot hold one column.
  expect([&] { (void)bsgemm(1.0, a, b, bsgemm_options{.memory_bytes = 64}); }, error_kind::invalid_argument,
         "memory budget");
  // A plan applied to an A with its shape but another distribution.
  if (comm.size() > 1) {
    const auto other_map = block_cyclic_2d{.grid = grids_of(comm.size()).front()}.make_tile_mapping(comm.size(), pr.m, pr.k);
    auto other_a = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(
        comm, other_map, pattern(0.7, 1), [](global_index i, global_index j) { return element(i, j, 1); });
    bsgemm_plan plan(a, b);
    auto c = plan.make_c();
    expect([&] { plan.apply(1.0, other_a, b, 0.0, c); }, error_kind::dimension_mismatch, "distributed differently");
  }
  // A grid that does not match the rank count.
  expect([&] { (void)block_cyclic_2d{.grid = process_grid{comm.size() + 1, 1}}.make_tile_mapping(comm.size(), pr.m, pr.k); },
         error_kind::dimension_mismatch, "grid");
  // B's grid differs from A's.
  if (comm.size() == 4) {
    const auto b_map = replicated_columns{.grid = process_grid{1, 4}}.make_tile_mapping(4, pr.k, pr.n);
    auto b14 = make_block_sparse<double, policy<replicated_columns, tiles, mpi_rma>>(comm, b_map, pattern(0.5, 2),
                                                                      [](global_index, global_index) { return 1.0; });
    const auto a_map = block_cyclic_2d{.grid = process_grid{2, 2}}.make_tile_mapping(4, pr.m, pr.k);
    auto a22 = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(comm, a_map, pattern(0.5, 1),
                                                                   [](global_index, global_index) { return 1.0; });
    expect([&] { (void)bsgemm(1.0, a22, b14); }, error_kind::dimension_mismatch, "grid");
  }
}

namespace {
template <class B>
void check_summa(process_grid grid) {
  const auto& comm = test::world();
  INFO("grid " << grid.p << " x " << grid.q);
  const auto pr = irregular_problem();
  const auto a_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), pr.m, pr.k);
  const auto b_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), pr.k, pr.n);
  auto a = make_block_sparse<double, policy<block_cyclic_2d, tiles, B>>(comm, a_map, pattern(0.7, 1, 3),
                                                         [](global_index i, global_index j) { return element(i, j, 1); });
  auto b = make_block_sparse<double, policy<block_cyclic_2d, tiles, B>>(comm, b_map, pattern(0.6, 2),
                                                         [](global_index i, global_index j) { return element(i, j, 2); });
  const auto ad = gather_dense(a), bd = gather_dense(b);
  const auto m = static_cast<std::size_t>(a.num_rows()), k = static_cast<std::size_t>(a.num_cols()),
             n = static_cast<std::size_t>(b.num_cols());
  auto dense = [&](double alpha, double beta, const std::vector<double>& c0) {
    std::vector<double> c(m * n, 0.0);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < m; ++i) {
        double s = 0;
        for (std::size_t l = 0; l < k; ++l) s += ad[i + l * m] * bd[l + j * k];
        c[i + j * m] = alpha * s + (c0.empty() ? 0.0 : beta * c0[i + j * m]);
      }
    return c;
  };
  auto c = summa(1.25, a, b);
  require_close(gather_dense(c), dense(1.25, 0.0, {}));
  const auto c0 = gather_dense(c);
  summa(0.5, a, b, -1.0, c);
  require_close(gather_dense(c), dense(0.5, -1.0, c0));
}
}  // namespace

TEST_CASE_TEMPLATE("summa equals the dense reference on every grid", B, mpi_rma, aggregator) {
  for (const auto grid : grids_of(test::world().size())) check_summa<B>(grid);
}

TEST_CASE("summa on progress ranks equals the dense reference" * doctest::skip(!test::progress_ranks_requested())) {
  for (const auto grid : grids_of(test::world().size())) check_summa<progress_rank>(grid);
}

TEST_CASE("summa rejects operands on different grids, on every rank") {
  const auto& comm = test::world();
  if (comm.size() != 4) return;
  const auto pr = irregular_problem();
  const auto a_map = block_cyclic_2d{.grid = process_grid{2, 2}}.make_tile_mapping(4, pr.m, pr.k);
  const auto b_map = block_cyclic_2d{.grid = process_grid{1, 4}}.make_tile_mapping(4, pr.k, pr.n);
  auto a = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(comm, a_map, pattern(0.5, 1),
                                                               [](global_index, global_index) { return 1.0; });
  auto b = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(comm, b_map, pattern(0.5, 2),
                                                               [](global_index, global_index) { return 1.0; });
  try {
    (void)summa(1.0, a, b);
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::dimension_mismatch);
  }
}

TEST_CASE("bsgemm() and summa() keep their plans with A: an iteration inspects once") {
  const auto& comm = test::world();
  const auto pr = irregular_problem();
  for (const auto grid : grids_of(comm.size())) {
    INFO("grid " << grid.p << " x " << grid.q);
    auto [a, b] = make_operands<mpi_rma>(comm, pr, grid, 0.6, 0.5);
    auto c = bsgemm(1.0, a, b);
    CHECK(a.plan_cache().size() == 1);
    require_close(gather_dense(c), reference(1.0, a, b, 0.0, {}, 0.0));
    // A refined in place (the tensor-contraction loop): the kept plan, the new values.
    const auto values = a.local().values;
    Kokkos::parallel_for(
        "test::refine", Kokkos::RangePolicy<>(0, values.extent(0)), KOKKOS_LAMBDA(const std::size_t e) { values(e) *= 0.5; });
    Kokkos::fence();
    const auto c0 = gather_dense(c);
    bsgemm(2.0, a, b, 1.0, c);
    CHECK(a.plan_cache().size() == 1);
    require_close(gather_dense(c), reference(2.0, a, b, 1.0, c0, 0.0));
    // Other options: a plan of their own, which replaces the first (a bsgemm plan holds a staged
    // copy of A, so one is kept); back to the first options, a new plan again, right results.
    require_close(gather_dense(bsgemm(1.0, a, b, bsgemm_options{.memory_bytes = 1 << 14})),
                  reference(1.0, a, b, 0.0, {}, 0.0));
    CHECK(a.plan_cache().size() == 1);
    require_close(gather_dense(bsgemm(1.0, a, b)), reference(1.0, a, b, 0.0, {}, 0.0));
    CHECK(a.plan_cache().size() == 1);
  }
  const process_grid grid{1, comm.size()};
  const auto a_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), pr.m, pr.k);
  const auto b_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), pr.k, pr.n);
  auto a = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(
      comm, a_map, pattern(0.7, 1), [](global_index i, global_index j) { return element(i, j, 1); });
  auto b = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(
      comm, b_map, pattern(0.6, 2), [](global_index i, global_index j) { return element(i, j, 2); });
  const auto first = gather_dense(summa(1.0, a, b));
  const auto again = gather_dense(summa(1.0, a, b));
  CHECK(a.plan_cache().size() == 1);
  require_close(again, first);
}

}  // namespace bsgemm_tests
