// SpGEMM (sparse SUMMA and its 3-D form), SpMM, transpose and redistribute over the grid
// distributions block_cyclic_2d and replicated_columns, against a serial reference, on every
// p x q grid of the communicator (1x4, 2x2, 4x1, 1x3, 3x1, 3x3 at 9 ranks...), block sizes from
// 1 to larger than the matrix, csr and coo storage, the backends; and the traffic counters
// against the words-and-messages model of docs/scaling.md, exactly.
#include "../../examples/custom_policies/row_cyclic.hpp"
#include "../../examples/custom_policies/tracing_backend.hpp"
#include "test_support.hpp"

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace grid_operations_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

using entries = test::random_entries;
using test::share;

host_csr<double> reference(const entries& e) { return host_csr<double>::from_triplets(e.rows, e.cols, e.all); }

// Serial C = A * B over (+, x) or (min, +).
template <class Add, class Mul>
host_csr<double> product(const host_csr<double>& a, const host_csr<double>& b, Add add, Mul mul) {
  std::map<std::pair<global_index, global_index>, double> c;
  for (global_index i = 0; i < a.rows; ++i)
    for (auto e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      const auto k = a.col_idx[static_cast<std::size_t>(e)];
      for (auto f = b.row_ptr[static_cast<std::size_t>(k)]; f < b.row_ptr[static_cast<std::size_t>(k) + 1]; ++f) {
        const auto key = std::pair(i, b.col_idx[static_cast<std::size_t>(f)]);
        const double v = mul(a.values[static_cast<std::size_t>(e)], b.values[static_cast<std::size_t>(f)]);
        auto [it, fresh] = c.try_emplace(key, v);
        if (!fresh) it->second = add(it->second, v);
      }
    }
  triplets<double> t;
  for (const auto& [key, v] : c) t.push_back(key.first, key.second, v);
  return host_csr<double>::from_triplets(a.rows, b.cols, t);
}
host_csr<double> product(const host_csr<double>& a, const host_csr<double>& b) {
  return product(a, b, std::plus<>{}, std::multiplies<>{});
}

// Serial Y = A X for X(i, v) = x(i, v), row-major, k columns.
template <class X>
std::vector<double> dense_product(const host_csr<double>& a, global_index k, X x) {
  std::vector<double> y(static_cast<std::size_t>(a.rows * k), 0.0);
  for (global_index i = 0; i < a.rows; ++i)
    for (auto e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
      for (global_index v = 0; v < k; ++v)
        y[static_cast<std::size_t>(i * k + v)] +=
            a.values[static_cast<std::size_t>(e)] * x(a.col_idx[static_cast<std::size_t>(e)], v);
  return y;
}

// Every p x q grid of the communicator.
std::vector<process_grid> grids_of(int ranks) {
  std::vector<process_grid> g;
  for (int p = 1; p <= ranks; ++p)
    if (ranks % p == 0) g.push_back({p, ranks / p});
  return g;
}

template <class Storage, class Backend>
using grid_policy = policy<block_cyclic_2d, Storage, Backend>;
template <class Storage, class Backend>
using replicated_policy = policy<replicated_columns, Storage, Backend>;

template <class Policy>
dist_matrix<double, Policy> build(const communicator& comm, const entries& e, typename Policy::distribution_type d) {
  return build_from_triplets<double, Policy>(comm, e.rows, e.cols, share(e.all, comm), {.distribution = d});
}

}  // namespace

TEST_CASE_TEMPLATE("spgemm on block_cyclic_2d equals the serial product on every grid, block size and layer count", B,
                   mpi_rma, aggregator) {
  const auto& comm = test::world();
  const auto a = test::make_entries(23, 17, 0.2, 1);
  const auto b = test::make_entries(17, 29, 0.2, 2);
  const auto expected = product(reference(a), reference(b));
  for (const auto grid : grids_of(comm.size()))
    for (const global_index block : {1, 3, 64}) {
      const block_cyclic_2d d{.grid = grid, .block_rows = block, .block_cols = block};
      const auto da = build<grid_policy<csr, B>>(comm, a, d);
      const auto db = build<grid_policy<csr, B>>(comm, b, d);
      for (int layers = 1; layers <= comm.size(); ++layers) {
        if (comm.size() % layers != 0) continue;
        for (int stages : {1, 3}) {
          INFO("grid " << grid.p << "x" << grid.q << ", block " << block << ", layers " << layers << ", stages "
                       << stages);
          const auto kernel = stages == 1 ? spgemm_kernel::automatic : spgemm_kernel::esc;
          const auto c = spgemm(da, db, spgemm_options{.kernel = kernel, .layers = layers, .stages = stages});
          CHECK(c.mapping() == da.mapping().with_tiles(da.mapping().row_tiles(), db.mapping().col_tiles(),
                                                       db.mapping().column_owners()));
          test::require_equal(c, expected);
          CHECK(c.global_nnz() == expected.nnz());
        }
      }
    }
}

TEST_CASE("spgemm, spmm and transpose on a grid over progress ranks" * doctest::skip(!test::progress_ranks_requested())) {
  const auto& comm = test::world();
  using P = grid_policy<csr, progress_rank>;
  const auto a = test::make_entries(16, 16, 0.3, 12);
  const auto ra = reference(a);
  const auto da = build<P>(comm, a, block_cyclic_2d{.grid = {}, .block_rows = 3, .block_cols = 3});
  test::require_equal(spgemm(da, da, spgemm_options{.layers = comm.size()}), product(ra, ra));
  test::require_equal(transpose(da), test::transposed(ra));
  dist_dense<double, policy<row_block, csr, progress_rank>> x(comm, 16, 2);
  x.fill(1.0);
  const auto y = spmm(da, x).gather_to_root();
  if (comm.rank() == 0) CHECK(*y == dense_product(ra, 2, [](global_index, global_index) { return 1.0; }));
}

// A user's backend with only the blocking exchange (no start_exchange): the staged product
// exchanges each stage at once instead of prefetching it, and is the same product.
static_assert(!starts_exchanges<custom::tracing<>>);
TEST_CASE("staged SUMMA on a backend that cannot start exchanges exchanges at once, with the same result") {
  const auto& comm = test::world();
  using P = policy<block_cyclic_2d, csr, custom::tracing<>>;
  const auto a = test::make_entries(19, 19, 0.25, 15);
  const auto ra = reference(a);
  const auto da = build<P>(comm, a, block_cyclic_2d{.grid = {}, .block_rows = 2, .block_cols = 2});
  custom::trace_log().clear();
  const auto c = spgemm(da, da, spgemm_options{.stages = 3});
  test::require_equal(c, product(ra, ra));
  std::size_t exchanges = 0;
  for (const auto& e : custom::trace_log()) exchanges += e.what == "exchange" ? 1 : 0;
  CHECK(exchanges == 2 * 3);  // A's and B's piece of every stage, through the backend's own exchange
}

// The same backend has no exchange_planned either: a planned SpMM's products go through its own
// exchange (sizes agreed again and checked against the plan's), with the same result.
static_assert(!exchanges_planned<custom::tracing<>> && exchanges_planned<mpi_rma>);
TEST_CASE("planned grid SpMM on a backend without planned exchanges exchanges as usual, with the same result") {
  const auto& comm = test::world();
  using P = policy<block_cyclic_2d, csr, custom::tracing<>>;
  const auto a = test::make_entries(19, 23, 0.25, 16);
  const auto ra = reference(a);
  const auto da = build<P>(comm, a, block_cyclic_2d{.grid = {}, .block_rows = 2, .block_cols = 2});
  const auto x_value = [](global_index i, global_index v) { return static_cast<double>((2 * i + v) % 7); };
  dist_dense<double, policy<row_block, csr, custom::tracing<>>> x(comm, 23, 3);
  x.fill(x_value);
  const auto first = spmm(da, x);  // makes the plan
  custom::trace_log().clear();
  const auto again = spmm(da, x).gather_to_root();  // through the plan
  std::size_t exchanges = 0;
  for (const auto& e : custom::trace_log()) exchanges += e.what == "exchange" ? 1 : 0;
  CHECK(exchanges == 2);  // X's rows, then Y's partial rows
  if (comm.rank() == 0) CHECK(*again == dense_product(ra, 3, x_value));
  CHECK(first.gather_to_root() == spmm(da, x).gather_to_root());
}

TEST_CASE("spgemm on grids: coo storage, semirings, masks, budgets, transposed inputs, accumulate") {
  const auto& comm = test::world();
  const auto grid = process_grid::squarest(comm.size());
  const block_cyclic_2d d{.grid = grid, .block_rows = 4, .block_cols = 4};
  const auto a = test::make_entries(20, 20, 0.25, 3);
  const auto b = test::make_entries(20, 20, 0.25, 4);
  const auto ra = reference(a), rb = reference(b);
  using P = grid_policy<coo, mpi_rma>;
  const auto da = build<P>(comm, a, d);
  const auto db = build<P>(comm, b, d);

  SUBCASE("min-plus, through the deduced semiring") {
    const auto c = spgemm(da, db, spgemm_options{.ring = semirings::min_plus{}, .layers = comm.size() % 2 == 0 ? 2 : 1});
    test::require_equal(
        c, product(ra, rb, [](double x, double y) { return std::min(x, y); }, std::plus<>{}));
  }
  SUBCASE("a structural mask, its values and its complement, and a memory budget") {
    const auto full = product(ra, rb);
    // The mask: every other entry of the product's pattern, some stored as zero, plus entries outside it.
    triplets<double> mt;
    for (global_index i = 0; i < 20; ++i)
      for (global_index j = (i % 2); j < 20; j += 2) mt.push_back(i, j, (i + j) % 3 == 0 ? 0.0 : 1.0);
    const entries me{20, 20, mt};
    const auto c_map = da.mapping().with_tiles(da.mapping().row_tiles(), db.mapping().col_tiles(), db.mapping().column_owners());
    const auto mask = redistribute(build<P>(comm, me, d), c_map);
    auto select = [&](auto keep) {
      triplets<double> t;
      for (global_index i = 0; i < 20; ++i)
        for (auto e = full.row_ptr[static_cast<std::size_t>(i)]; e < full.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
          const auto j = full.col_idx[static_cast<std::size_t>(e)];
          if (keep(i, j)) t.push_back(i, j, full.values[static_cast<std::size_t>(e)]);
        }
      return host_csr<double>::from_triplets(20, 20, t);
    };
    const auto in_mask = [](global_index i, global_index j) { return (i + j) % 2 == 0; };
    const auto valued = [](global_index i, global_index j) { return (i + j) % 2 == 0 && (i + j) % 3 != 0; };
    std::size_t batches = 0;
    test::require_equal(spgemm_masked(mask, da, db, spgemm_options{.memory_budget_bytes = 64, .batches = &batches}),
                        select(in_mask));
    CHECK(comm.max(batches) > 1);
    test::require_equal(spgemm_masked(mask, da, db, spgemm_options{.mask = mask_kind::values, .layers = comm.size()}),
                        select(valued));
    test::require_equal(spgemm_masked(mask, da, db, spgemm_options{.complement_mask = true}),
                        select([&](global_index i, global_index j) { return !in_mask(i, j); }));
  }
  SUBCASE("transposed inputs on a p != q grid, and accumulate into C") {
    test::require_equal(spgemm(da, db, spgemm_options{.transpose_a = true}), product(test::transposed(ra), rb));
    test::require_equal(spgemm(da, db, spgemm_options{.transpose_a = true, .transpose_b = true}),
                        product(test::transposed(ra), test::transposed(rb)));
    auto c = spgemm(da, db);
    spgemm_accumulate(da, db, c);
    const auto once = product(ra, rb);
    triplets<double> twice;
    for (global_index i = 0; i < 20; ++i)
      for (auto e = once.row_ptr[static_cast<std::size_t>(i)]; e < once.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
        twice.push_back(i, once.col_idx[static_cast<std::size_t>(e)], 2 * once.values[static_cast<std::size_t>(e)]);
    test::require_equal(c, host_csr<double>::from_triplets(20, 20, twice));
  }
  SUBCASE("bad input is refused on every rank") {
    test::require_rejected([&] { (void)spgemm(da, db, spgemm_options{.layers = comm.size() + 1}); },
                           error_kind::invalid_argument, "layers do not divide");
    test::require_rejected([&] { (void)spgemm(da, db, spgemm_options{.kernel = spgemm_kernel::kokkos_kernels}); },
                           error_kind::invalid_argument, "Kokkos-Kernels");
    test::require_rejected([&] { (void)spgemm(da, db, spgemm_options{.stages = 0}); }, error_kind::invalid_argument,
                           "stages");
    const auto wrong = build<P>(comm, test::make_entries(7, 20, 0.3, 9), d);
    test::require_rejected([&] { (void)spgemm(da, wrong); }, error_kind::dimension_mismatch, "A is 20 x 20 but B is 7");
  }
  SUBCASE("spmm with X or Y of the wrong shape, before and after a plan is kept") {
    using V = policy<row_block, csr, mpi_rma>;
    dist_dense<double, V> x(comm, 20, 2), y(comm, 20, 2), short_x(comm, 19, 2), narrow_y(comm, 20, 1);
    x.fill(1.0);
    test::require_rejected([&] { spmm(da, short_x, y); }, error_kind::dimension_mismatch, "X has 19 rows");
    spmm(da, x, y);  // a plan for x and y is kept
    test::require_rejected([&] { spmm(da, x, narrow_y); }, error_kind::dimension_mismatch, "Y is 20 x 1");
  }
}

TEST_CASE("replicated_columns keeps every replica, and runs spgemm, spmm and transpose") {
  const auto& comm = test::world();
  const auto a = test::make_entries(19, 22, 0.25, 5);
  const auto b = test::make_entries(22, 13, 0.25, 6);
  const auto ra = reference(a), rb = reference(b);
  using P = replicated_policy<csr, mpi_rma>;
  for (const auto grid : grids_of(comm.size())) {
    INFO("grid " << grid.p << "x" << grid.q);
    const replicated_columns d{.grid = grid, .block_cols = 5};
    const auto da = build<P>(comm, a, d);
    const auto db = build<P>(comm, b, d);
    // Every rank of a grid column holds the whole column block; the primaries count once.
    CHECK(da.global_nnz() == ra.nnz());
    CHECK(da.local_rows() == a.rows);
    const auto gathered = comm.allgather_concatenated(std::vector<offset_type>{da.local_nnz()});
    for (int r = 0; r < comm.size(); ++r)
      CHECK(gathered[static_cast<std::size_t>(r)] == gathered[static_cast<std::size_t>(grid.rank(0, grid.col_of(r)))]);
    test::require_equal(da, ra);
    test::require_equal(spgemm(da, db), product(ra, rb));
    test::require_equal(transpose(da), test::transposed(ra));
    const auto t = transpose(da);
    CHECK(t.global_nnz() == ra.nnz());
    // spmm with X and Y by rows: the replicas split the rows of their column block.
    dist_dense<double, policy<row_block, csr, mpi_rma>> x(comm, 22, 3);
    x.fill([](global_index i, global_index j) { return static_cast<double>(1 + i + 2 * j); });
    const auto y = spmm(da, x);
    const auto got = y.gather_to_root();
    if (comm.rank() == 0)
      CHECK(*got == dense_product(ra, 3, [](global_index i, global_index v) { return static_cast<double>(1 + i + 2 * v); }));
    // Element-wise operations keep the replicas consistent.
    const auto doubled = add(da, da);
    CHECK(doubled.global_nnz() == ra.nnz());
  }
}

TEST_CASE_TEMPLATE("spmm and transpose on block_cyclic_2d on every grid", B, mpi_rma, aggregator) {
  const auto& comm = test::world();
  const auto a = test::make_entries(21, 26, 0.2, 7);
  const auto ra = reference(a);
  for (const auto grid : grids_of(comm.size()))
    for (const global_index block : {1, 4, 64}) {
      INFO("grid " << grid.p << "x" << grid.q << ", block " << block);
      const block_cyclic_2d d{.grid = grid, .block_rows = block, .block_cols = block};
      const auto da = build<grid_policy<csr, B>>(comm, a, d);
      const auto t = transpose(da);
      test::require_equal(t, test::transposed(ra));
      CHECK(t.mapping().grid() == process_grid{grid.q, grid.p});
      test::require_equal(transpose(t), ra);
      // Widths of the kernel's fixed-size paths (2, 32), its generic one (5) and none at all (0).
      for (const global_index k : {2, 5, 32, 0}) {
        INFO("k " << k);
        const auto x_value = [](global_index i, global_index v) { return static_cast<double>((i * 3 + v) % 5); };
        dist_dense<double, policy<row_block, csr, B>> x(comm, 26, k);
        x.fill(x_value);
        const auto got = spmm(da, x).gather_to_root();
        if (comm.rank() == 0) CHECK(*got == dense_product(ra, k, x_value));
      }
    }
}

TEST_CASE("redistribute between any two distributions and storages") {
  const auto& comm = test::world();
  const auto a = test::make_entries(18, 15, 0.3, 8);
  const auto ra = reference(a);
  using rows = policy<row_block, csr, mpi_rma>;
  using grid = policy<block_cyclic_2d, coo, mpi_rma>;
  using repl = policy<replicated_columns, csc, mpi_rma>;
  using cyclic = policy<custom::row_cyclic, csr, mpi_rma>;
  const auto r = build<rows>(comm, a, {});
  const auto g = redistribute<grid>(r, block_cyclic_2d{.grid = {}, .block_rows = 2, .block_cols = 3});
  test::require_equal(g, ra);
  const auto p = redistribute<repl>(g, replicated_columns{.grid = process_grid{comm.size(), 1}, .block_cols = 4});
  test::require_equal(p, ra);
  CHECK(p.local_nnz() == static_cast<offset_type>(ra.nnz()));  // a p x 1 grid: every rank holds all of it
  const auto c = redistribute<cyclic>(p);
  test::require_equal(c, ra);
  const auto back = redistribute<rows>(c);
  test::require_equal(back, ra);
  // Each entry moves once: a replicated source sends its primaries only.
  comm.stats().reset();
  (void)redistribute<rows>(p);
  const auto sent = comm.sum(comm.stats().of("redistribute").bytes);
  const auto size_messages = static_cast<std::uint64_t>(comm.size()) * static_cast<std::uint64_t>(comm.size() - 1) * 8;
  CHECK(sent <= size_messages + static_cast<std::uint64_t>(ra.nnz()) * 24);
  test::require_rejected([&] { (void)redistribute<grid>(r, block_cyclic_2d{.grid = process_grid{comm.size() + 1, 1}}); },
                         error_kind::dimension_mismatch, "process grid needs");
}

// The model of docs/scaling.md, evaluated on the serial matrices, against the counters.
TEST_CASE("traffic of the grid algorithms equals the model") {
  const auto& comm = test::world();
  const int ranks = comm.size();
  const auto a = test::make_entries(30, 30, 0.15, 10);
  const auto b = test::make_entries(30, 30, 0.15, 11);
  const auto ra = reference(a), rb = reference(b);
  using P = grid_policy<csr, mpi_rma>;
  // Pieces of A and B travel as compact records (32-bit indices: 16 bytes), partial C as full ones (24).
  constexpr std::uint64_t piece_entry = 16, entry = 24, size_message = 8;
  const auto exchange = static_cast<std::uint64_t>(ranks - 1) * size_message;  // per rank and exchange
  for (const auto grid : grids_of(ranks))
    for (int layers = 1; layers <= ranks; ++layers) {
      if (ranks % layers != 0) continue;
      INFO("grid " << grid.p << "x" << grid.q << ", layers " << layers);
      const block_cyclic_2d d{.grid = grid, .block_rows = 4, .block_cols = 4};
      const auto da = build<P>(comm, a, d);
      const auto db = build<P>(comm, b, d);
      const auto lg = make_layered_grid(da.mapping(), db.mapping(), layers);
      const auto c_map = da.mapping().with_tiles(da.mapping().row_tiles(), db.mapping().col_tiles(), db.mapping().column_owners());
      // Entries each rank must send: A(i, k) to the q ranks of its layer's grid row, B(k, j) to the
      // p ranks of its layer's grid column, each but itself; partial C(i, j) of each layer to its owner.
      std::uint64_t entries_sent = 0;
      for (global_index i = 0; i < ra.rows; ++i)
        for (auto e = ra.row_ptr[static_cast<std::size_t>(i)]; e < ra.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
          const auto k = ra.col_idx[static_cast<std::size_t>(e)];
          const int from = da.mapping().owner(i, k);
          for (int s = 0; s < lg.grid.q; ++s)
            entries_sent += lg.rank(lg.inner_layer[static_cast<std::size_t>(k)], lg.row_group[static_cast<std::size_t>(i)], s) != from;
        }
      std::set<std::tuple<int, global_index, global_index>> partial;  // (layer, i, j)
      for (global_index k = 0; k < rb.rows; ++k)
        for (auto f = rb.row_ptr[static_cast<std::size_t>(k)]; f < rb.row_ptr[static_cast<std::size_t>(k) + 1]; ++f) {
          const auto j = rb.col_idx[static_cast<std::size_t>(f)];
          const int from = db.mapping().owner(k, j);
          for (int r = 0; r < lg.grid.p; ++r)
            entries_sent += lg.rank(lg.inner_layer[static_cast<std::size_t>(k)], r, lg.col_group[static_cast<std::size_t>(j)]) != from;
        }
      for (global_index i = 0; i < ra.rows; ++i)
        for (auto e = ra.row_ptr[static_cast<std::size_t>(i)]; e < ra.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
          const auto k = ra.col_idx[static_cast<std::size_t>(e)];
          for (auto f = rb.row_ptr[static_cast<std::size_t>(k)]; f < rb.row_ptr[static_cast<std::size_t>(k) + 1]; ++f)
            partial.emplace(lg.inner_layer[static_cast<std::size_t>(k)], i, rb.col_idx[static_cast<std::size_t>(f)]);
        }
      std::uint64_t partials_sent = 0;
      for (const auto& [l, i, j] : partial)
        partials_sent += lg.rank(l, lg.row_group[static_cast<std::size_t>(i)], lg.col_group[static_cast<std::size_t>(j)]) !=
                         c_map.owner(i, j);
      if (layers == 1) CHECK(partial.size() == static_cast<std::size_t>(product(ra, rb).nnz()));  // nothing reduced

      comm.stats().reset();
      (void)spgemm(da, db, spgemm_options{.layers = layers});
      const auto bytes = comm.sum(comm.stats().of("spgemm").bytes);
      // Exchanges of A and B, and with more than one layer of the partial C, each with P - 1 size
      // messages per rank (with one layer C is computed in place: no third exchange).
      const std::uint64_t exchanges = layers == 1 ? 2 : 3;
      CHECK(bytes == entries_sent * piece_entry + partials_sent * entry +
                         exchanges * exchange * static_cast<std::uint64_t>(ranks));
      if (layers == 1) CHECK(partials_sent == 0);
      if (layers == 1) {
        // SUMMA on A's grid: each rank sends its A to q - 1 ranks, its B to p - 1 ranks, no C.
        const auto mine = comm.sum(static_cast<std::uint64_t>((grid.q - 1) * da.local_nnz() + (grid.p - 1) * db.local_nnz()));
        CHECK(mine == entries_sent);
      }
      if (layers == 1)
        // In three stages, each stage's pieces started before the previous stage multiplies or
        // after: the same entries move, in three exchanges each of A and B, and the stages'
        // products, merged where they were computed, are C's block (no third exchange).
        for (const bool prefetch : {true, false}) {
          INFO("three stages, prefetch " << prefetch);
          comm.stats().reset();
          const auto staged = spgemm(da, db, spgemm_options{.stages = 3, .prefetch_next_stage = prefetch});
          CHECK(comm.sum(comm.stats().of("spgemm").bytes) ==
                entries_sent * piece_entry + 2 * 3 * exchange * static_cast<std::uint64_t>(ranks));
          test::require_equal(staged, product(ra, rb));
        }
    }

  // Transpose on block_cyclic_2d: one partner per rank, everything not already in place moves once.
  for (const auto grid : grids_of(ranks)) {
    const auto da = build<P>(comm, a, block_cyclic_2d{.grid = grid, .block_rows = 3, .block_cols = 3});
    comm.stats().reset();
    const auto t = transpose(da);
    const auto traffic = comm.stats().of("transpose");
    std::uint64_t moved = 0;
    for (global_index i = 0; i < ra.rows; ++i)
      for (auto e = ra.row_ptr[static_cast<std::size_t>(i)]; e < ra.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
        const auto j = ra.col_idx[static_cast<std::size_t>(e)];
        moved += da.mapping().owner(i, j) != t.mapping().owner(j, i);
      }
    CHECK(comm.sum(traffic.bytes) == moved * entry + exchange * static_cast<std::uint64_t>(ranks));
    // Data goes to one partner at most: the transposed grid position.
    CHECK(traffic.messages <= static_cast<std::uint64_t>(ranks - 1) + 1);
  }

  // SpMM: the plan tells X's owners which rows each rank needs and Y's owners which partial rows
  // each rank sends (8 bytes per remote row, two exchanges); a product then moves k values per
  // remote row of X and per remote partial row of Y (two exchanges). X and Y by row blocks, then
  // laid out along the grid (grid_aligned_rows), where X moves only within grid columns and Y
  // only within grid rows.
  for (const auto grid : grids_of(ranks)) {
    INFO("grid " << grid.p << "x" << grid.q);
    const auto da = build<P>(comm, a, block_cyclic_2d{.grid = grid, .block_rows = 4, .block_cols = 4});
    const global_index k = 3;
    const auto x_value = [](global_index i, global_index v) { return static_cast<double>(1 + (i + 2 * v) % 5); };
    const auto expected_y = dense_product(ra, k, x_value);
    // Remote rows (of X fetched, of Y sent) over all ranks, for X's and Y's row owners, and the
    // messages that carry them (one per pair of ranks and direction with any).
    const auto remote_rows = [&](const auto& x_rows, const auto& y_rows, bool along_grid) {
      std::uint64_t remote = 0, messages = 0;
      for (int r = 0; r < ranks; ++r) {
        std::set<global_index> cols, rws;
        for (global_index i = 0; i < ra.rows; ++i)
          for (auto e = ra.row_ptr[static_cast<std::size_t>(i)]; e < ra.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
            if (da.mapping().owner(i, ra.col_idx[static_cast<std::size_t>(e)]) == r) {
              cols.insert(ra.col_idx[static_cast<std::size_t>(e)]);
              rws.insert(i);
            }
        std::set<int> x_owners, y_owners;
        for (global_index c : cols) {
          if (along_grid) CHECK(grid.col_of(x_rows.row_owner(c)) == grid.col_of(r));
          remote += x_rows.row_owner(c) != r;
          if (x_rows.row_owner(c) != r) x_owners.insert(x_rows.row_owner(c));
        }
        for (global_index i : rws) {
          if (along_grid) CHECK(grid.row_of(y_rows.row_owner(i)) == grid.row_of(r));
          remote += y_rows.row_owner(i) != r;
          if (y_rows.row_owner(i) != r) y_owners.insert(y_rows.row_owner(i));
        }
        messages += x_owners.size() + y_owners.size();
      }
      return std::pair{remote, messages};
    };
    const auto check_traffic = [&](auto& x, auto& y, bool along_grid) {
      x.fill(x_value);
      const auto [remote, messages] = remote_rows(x.mapping(), y.mapping(), along_grid);
      const auto sizes = exchange * static_cast<std::uint64_t>(ranks);
      comm.stats().reset();
      spmm(da, x, y);  // inspects (two exchanges whose sizes are agreed), then multiplies
      CHECK(comm.sum(comm.stats().of("spmm").bytes) == remote * (8 + 8 * static_cast<std::uint64_t>(k)) + 2 * sizes);
      comm.stats().reset();
      spmm(da, x, y);  // the plan: values only, every size known, so no size messages
      CHECK(comm.sum(comm.stats().of("spmm").bytes) == remote * 8 * static_cast<std::uint64_t>(k));
      CHECK(comm.sum(comm.stats().of("spmm").messages) == messages);
      const auto got = y.gather_to_root();
      if (comm.rank() == 0) CHECK(*got == expected_y);
    };
    {
      using V = policy<row_block, csr, mpi_rma>;
      dist_dense<double, V> x(comm, 30, k), y(comm, 30, k);
      check_traffic(x, y, false);
    }
    {
      using V = policy<row_partition, csr, mpi_rma>;
      dist_dense<double, V> x(comm, grid_aligned_rows(da.mapping(), grid_side::columns), k);
      dist_dense<double, V> y(comm, grid_aligned_rows(da.mapping(), grid_side::rows), k);
      check_traffic(x, y, true);
      // The plan's sizes: every row of X this rank's columns name, every row its entries make.
      auto& plan = grid_spmm_plan_for(da, x, y);
      CHECK(plan.halo_rows() <= static_cast<std::size_t>(da.local_cols()));
      CHECK(plan.partial_rows() <= static_cast<std::size_t>(da.local_rows()));
      // New values in A, same structure: the plan multiplies them.
      const auto doubled = apply(da, KOKKOS_LAMBDA(const double v) { return 2 * v; });
      plan.apply(doubled, x, y);
      const auto got = y.gather_to_root();
      if (comm.rank() == 0)
        for (std::size_t t = 0; t < expected_y.size(); ++t) CHECK((*got)[t] == 2 * expected_y[t]);
    }
  }
}

// The 3-D row of docs/scaling.md at 2 layers on an R-MAT input (issue 27, item 8): a few hubs
// carry most of the paths i -> k -> j, the case where the model's partial_c needed the higher
// order terms of -log(1 - a_ik a_kj / c). Here every term is evaluated exactly from the operand:
// the copies of A(i, k) and of B(k, j) = A(k, j) not on their owner (16 bytes), partial_c as the
// layers' products nnz(A(:, K_l) A(K_l, :)) computed serially, each partial entry not computed on
// C's owner (24 bytes), and three size exchanges; their sum must equal the counters.
TEST_CASE("3-D spgemm at 2 layers on R-MAT: counters equal the pieces plus the layers' partial products") {
  const auto& comm = test::world();
  const int ranks = comm.size();
  constexpr int layers = 2;
  if (ranks % layers != 0) return;  // two layers of P / 2 ranks each
  using Rows = policy<row_block, csr, mpi_rma>;
  using P = grid_policy<csr, mpi_rma>;
  constexpr std::uint64_t piece_entry = 16, entry = 24, size_message = 8;
  const auto generated = generate::rmat<double, Rows>(comm, 7, 16, 1);  // n = 128, 2,048 edges
  const auto ra = gather_to_all(generated);
  const auto full = product(ra, ra);
  std::uint64_t flops = 0;
  for (global_index i = 0; i < ra.rows; ++i)
    for (auto e = ra.row_ptr[static_cast<std::size_t>(i)]; e < ra.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      const auto k = static_cast<std::size_t>(ra.col_idx[static_cast<std::size_t>(e)]);
      flops += static_cast<std::uint64_t>(ra.row_ptr[k + 1] - ra.row_ptr[k]);
    }
  for (const auto grid : grids_of(ranks)) {
    INFO("grid " << grid.p << "x" << grid.q);
    const auto da = redistribute<P>(generated, block_cyclic_2d{.grid = grid, .block_rows = 8, .block_cols = 8});
    const auto& m = da.mapping();
    const auto lg = make_layered_grid(m, m, layers);
    const auto c_map = m.with_tiles(m.row_tiles(), m.col_tiles(), m.column_owners());
    const auto layer = [&](global_index k) { return lg.inner_layer[static_cast<std::size_t>(k)]; };
    const auto row_group = [&](global_index i) { return lg.row_group[static_cast<std::size_t>(i)]; };
    const auto col_group = [&](global_index j) { return lg.col_group[static_cast<std::size_t>(j)]; };
    // Each entry (i, k) is A(i, k), sent to the q' ranks of (layer(k), row group(i)), and B(i, k),
    // sent to the p' ranks of (layer(i), column group(k)); copies on the owner are not sent.
    std::uint64_t pieces = 0;
    std::vector<triplets<double>> left(layers), right(layers);  // A(:, K_l), A(K_l, :)
    for (global_index i = 0; i < ra.rows; ++i)
      for (auto e = ra.row_ptr[static_cast<std::size_t>(i)]; e < ra.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
        const auto k = ra.col_idx[static_cast<std::size_t>(e)];
        const double v = ra.values[static_cast<std::size_t>(e)];
        const int from = m.owner(i, k);
        for (int s = 0; s < lg.grid.q; ++s) pieces += lg.rank(layer(k), row_group(i), s) != from;
        for (int r = 0; r < lg.grid.p; ++r) pieces += lg.rank(layer(i), r, col_group(k)) != from;
        left[static_cast<std::size_t>(layer(k))].push_back(i, k, v);
        right[static_cast<std::size_t>(layer(i))].push_back(i, k, v);
      }
    // partial_c: the layers' products, each entry computed on (l, row group(i), column group(j)).
    std::uint64_t partial_c = 0, partials_sent = 0;
    for (int l = 0; l < layers; ++l) {
      const auto piece = product(host_csr<double>::from_triplets(ra.rows, ra.cols, left[static_cast<std::size_t>(l)]),
                                 host_csr<double>::from_triplets(ra.rows, ra.cols, right[static_cast<std::size_t>(l)]));
      partial_c += static_cast<std::uint64_t>(piece.nnz());
      for (global_index i = 0; i < piece.rows; ++i)
        for (auto e = piece.row_ptr[static_cast<std::size_t>(i)]; e < piece.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
          const auto j = piece.col_idx[static_cast<std::size_t>(e)];
          partials_sent += lg.rank(l, row_group(i), col_group(j)) != c_map.owner(i, j);
        }
    }
    // nnz(C) < partial_c <= min(c nnz(C), flops): the hubs' entries have paths in both layers.
    const auto nnz_c = static_cast<std::uint64_t>(full.nnz());
    CHECK(partial_c > nnz_c);
    CHECK(partial_c <= std::min<std::uint64_t>(layers * nnz_c, flops));

    comm.stats().reset();
    const auto c = spgemm(da, da, spgemm_options{.layers = layers});
    const auto bytes = comm.sum(comm.stats().of("spgemm").bytes);
    const auto sizes = 3 * size_message * static_cast<std::uint64_t>(ranks - 1) * static_cast<std::uint64_t>(ranks);
    CHECK(bytes == pieces * piece_entry + partials_sent * entry + sizes);
    test::require_equal(c, full);
  }
}

TEST_CASE("row_partition: rows scattered by an owner list run spgemm, transpose and spmm") {
  const auto& comm = test::world();
  const auto a = test::make_entries(21, 21, 0.2, 14);
  const auto ra = reference(a);
  std::vector<int> owners(21);
  for (std::size_t i = 0; i < owners.size(); ++i) owners[i] = static_cast<int>((7 * i + 3) % 5) % comm.size();
  using P = policy<row_partition, csr, aggregator>;
  const row_partition parts{std::make_shared<const std::vector<int>>(owners)};
  const auto da = build<P>(comm, a, parts);
  for (global_index i = 0; i < 21; ++i) CHECK(da.mapping().row_owner(i) == owners[static_cast<std::size_t>(i)]);
  test::require_equal(spgemm(da, da), product(ra, ra));
  test::require_equal(transpose(da), test::transposed(ra));
  dist_dense<double, P> x(comm, da.mapping(), 2);
  x.fill([](global_index i, global_index v) { return static_cast<double>(i + v); });
  const auto y = spmm(da, x).gather_to_root();
  if (comm.rank() == 0)
    CHECK(*y == dense_product(ra, 2, [](global_index i, global_index v) { return static_cast<double>(i + v); }));
  // Redistributed from row blocks onto the partition: the same matrix, rows where the list says.
  const auto moved = redistribute<P>(build<policy<row_block, csr, aggregator>>(comm, a, row_block{}), da.mapping());
  test::require_equal(moved, ra);
  CHECK(moved.mapping() == da.mapping());
  // An owner list of the wrong length is refused on every rank.
  const row_partition short_list{std::make_shared<const std::vector<int>>(std::vector<int>(20, 0))};
  test::require_rejected([&] { (void)build<P>(comm, a, short_list); }, error_kind::invalid_argument,
                         "20 owners given for a matrix of 21 rows");
}

TEST_CASE("spgemm plans: made once, reused while the structure stays, refused when it changes") {
  const auto& comm = test::world();
  const auto a = test::make_entries(24, 24, 0.2, 13);
  const auto ra = reference(a);
  auto check_plans = [&]<class P>(typename P::distribution_type d) {
    const auto da = build<P>(comm, a, d);
    // Kept by A: the second product finds the first one's plan.
    const auto c1 = spgemm(da, da);
    const auto c2 = spgemm(da, da);
    CHECK(da.plan_cache().template entries<std::shared_ptr<spgemm_plan<double, P>>>().size() == 1);
    test::require_equal(c2, product(ra, ra));
    // Owned by the caller: new values, same structure.
    spgemm_plan plan(da, da);
    const auto twice = scale(da, 2.0);
    test::require_equal(plan.apply(twice, da), product(reference(entries{24, 24, [&] {
                                                         auto t = a.all;
                                                         for (auto& v : t.values) v *= 2;
                                                         return t;
                                                       }()}),
                                                       ra));
    const auto e_other = test::make_entries(24, 24, 0.3, 14);
    const auto other = build<P>(comm, e_other, d);
    if constexpr (whole_row_mapping<typename P::mapping_type>) {
      // The 1-D plan is for A's column map (which rows of B it fetches): a matrix whose ranks touch
      // other columns is refused on every rank.
      entries narrow{24, 24, {}};
      for (global_index i = 0; i < 24; ++i) narrow.all.push_back(i, i % 6, 1.0);
      const auto n = build<P>(comm, narrow, d);
      test::require_rejected([&] { (void)plan.apply(n, da); }, error_kind::invalid_argument, "make a new plan");
      test::require_equal(spgemm(n, da), product(reference(narrow), ra));  // a plan of its own
    } else {
      // The grid plan depends on the distributions alone: any structure on the same grid runs.
      test::require_equal(plan.apply(other, da), product(reference(e_other), ra));
      const auto moved = redistribute(other, d.make_mapping(comm.size(), 24, 24).with_tiles(
                                                 tiled_range::uniform(24, 3), tiled_range::uniform(24, 3), {}));
      test::require_rejected([&] { (void)plan.apply(moved, da); }, error_kind::invalid_argument, "make a new plan");
    }
  };
  check_plans.template operator()<policy<row_block, csr, mpi_rma>>(row_block{});
  check_plans.template operator()<grid_policy<csr, mpi_rma>>(block_cyclic_2d{.grid = {}, .block_rows = 5, .block_cols = 5});
}

TEST_CASE("tile-stored matrices run spgemm, transpose and spmm through their elements") {
  const auto& comm = test::world();
  const auto a = test::make_entries(17, 17, 0.25, 15);
  const auto ra = reference(a);
  using Rows = policy<row_block, csr, mpi_rma>;
  using Tiles = policy<block_cyclic_2d, tiles, mpi_rma>;
  const auto ea = build<Rows>(comm, a, {});
  const tiled_range irregular({0, 3, 4, 9, 9, 17});  // a zero-width tile too
  for (const auto grid : grids_of(comm.size())) {
    INFO("grid " << grid.p << "x" << grid.q);
    const auto t = to_tiles<Tiles>(ea, block_cyclic_2d::mapping(grid, irregular, irregular));
    const auto c = spgemm(t, t);
    CHECK(c.row_tiles() == irregular);
    test::require_equal(c, product(ra, ra));
    const auto tt = transpose(t);
    CHECK(tt.mapping().grid() == process_grid{grid.q, grid.p});
    test::require_equal(tt, test::transposed(ra));
    dist_dense<double, Rows> x(comm, 17, 2);
    x.fill(1.0);
    const auto y = spmm(t, x).gather_to_root();
    if (comm.rank() == 0) CHECK(*y == dense_product(ra, 2, [](global_index, global_index) { return 1.0; }));
  }
}

TEST_CASE("transpose plans move values only, on rows and on grids") {
  const auto& comm = test::world();
  const auto a = test::make_entries(19, 14, 0.3, 16);
  const auto ra = reference(a);
  auto doubled = [&] {
    auto t = a.all;
    for (auto& v : t.values) v *= 2;
    return reference(entries{19, 14, t});
  }();
  auto check = [&]<class P>(typename P::distribution_type d) {
    const auto da = build<P>(comm, a, d);
    transpose_plan plan(da);
    comm.stats().reset();
    test::require_equal(plan.apply(da), test::transposed(ra));
    const auto values_only = comm.stats().of("transpose");
    test::require_equal(plan.apply(scale(da, 2.0)), test::transposed(doubled));
    // 8 bytes per value that leaves its rank, and no size messages (the plan knows every size);
    // the one-shot transpose moves the same entries as (row, column, value) triples, sizes agreed.
    const auto size_messages = 8 * static_cast<std::uint64_t>(comm.size() - 1);
    // A backend without exchange_planned agrees the sizes as usual, and gets the same transpose.
    const bool planned = exchanges_planned<typename P::backend_type>;
    CHECK(values_only.bytes == 8 * plan.values_moved() + (planned ? 0 : size_messages));
    comm.stats().reset();
    const auto full = transpose(da);
    CHECK(comm.stats().of("transpose").bytes == 24 * plan.values_moved() + size_messages);
    test::require_equal(full, test::transposed(ra));
    const auto other = build<P>(comm, test::make_entries(19, 14, 0.5, 17), d);
    test::require_rejected([&] { (void)plan.apply(other); }, error_kind::invalid_argument, "make a new plan");
  };
  check.template operator()<policy<row_block, csr, mpi_rma>>(row_block{});
  check.template operator()<policy<row_block, coo, aggregator>>(row_block{});
  check.template operator()<policy<row_block, csr, custom::tracing<>>>(row_block{});
  check.template operator()<grid_policy<csc, mpi_rma>>(block_cyclic_2d{.grid = {}, .block_rows = 3, .block_cols = 4});
  check.template operator()<replicated_policy<csr, mpi_rma>>(
      replicated_columns{.grid = process_grid{comm.size(), 1}, .block_cols = 3});
}

}  // namespace grid_operations_tests
