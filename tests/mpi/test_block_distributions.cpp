// block_cyclic_2d and replicated_columns: the mappings on their own, the
// element-sparse dist_matrix built, gathered and redistributed over them, and
// the inspector pieces of bsgemm (mirrored-cyclic columns, worst fit, chunks).
#include "test_support.hpp"

#include <tessera/ops/bsgemm/schedule.hpp>

#include <numeric>

namespace block_distributions_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

static_assert(distribution_policy<block_cyclic_2d>);
static_assert(distribution_policy<replicated_columns>);
static_assert(grid_mapping<block_cyclic_2d::mapping> && tile_grid_mapping<block_cyclic_2d::mapping>);
static_assert(grid_mapping<replicated_columns::mapping> && replicated_column_mapping<replicated_columns::mapping>);
static_assert(!(grid_mapping<row_block::mapping>) && !(tile_grid_mapping<replicated_columns::mapping>));
static_assert(!replicated_column_mapping<block_cyclic_2d::mapping>);

namespace {

template <class Mapping>
void check_round_trip(const Mapping& m) {
  std::vector<global_index> held(static_cast<std::size_t>(m.num_ranks()), 0);
  for (global_index i = 0; i < m.global_rows(); ++i)
    for (global_index j = 0; j < m.global_cols(); ++j) {
      const auto lc = m.to_local(i, j);
      REQUIRE(lc.rank == m.owner(i, j));
      const auto ext = m.extents(lc.rank);
      REQUIRE(lc.row < ext.rows);
      REQUIRE(lc.col < ext.cols);
      REQUIRE(m.to_global(lc.rank, lc.row, lc.col) == global_coordinate{i, j});
    }
}

triplets<double> some_entries(const communicator& comm, global_index m, global_index n) {
  triplets<double> t;
  for (global_index i = comm.rank(); i < m; i += comm.size())
    for (global_index j = 0; j < n; ++j)
      if ((i * 7 + j * 3) % 5 == 0) t.push_back(i, j, 1.0 + static_cast<double>(i) - 0.5 * static_cast<double>(j));
  return t;
}

host_csr<double> serial(global_index m, global_index n) {
  triplets<double> all;
  for (global_index i = 0; i < m; ++i)
    for (global_index j = 0; j < n; ++j)
      if ((i * 7 + j * 3) % 5 == 0) all.push_back(i, j, 1.0 + static_cast<double>(i) - 0.5 * static_cast<double>(j));
  return host_csr<double>::from_triplets(m, n, all);
}

}  // namespace

TEST_CASE("block_cyclic_2d places blocks cyclically and round-trips every index") {
  const process_grid g{2, 3};
  const block_cyclic_2d::mapping m(g, tiled_range::uniform(11, 2), tiled_range::uniform(13, 3));
  CHECK(m.owner(0, 0) == 0);
  CHECK(m.owner(2, 0) == g.rank(1, 0));
  CHECK(m.owner(4, 10) == g.rank(0, 0));  // row block 2 -> grid row 0, column block 3 -> grid column 0
  CHECK(m.owner(5, 7) == g.rank(0, 2));
  CHECK(m.to_local(4, 10) == local_coordinate{0, 2, 4});  // after row tile 0 (2 rows), column tile 0 (3 columns)
  check_round_trip(m);
  global_index rows = 0;
  for (int r = 0; r < g.p; ++r) rows += m.extents(g.rank(r, 0)).rows;
  CHECK(rows == 11);
  // Irregular tiles and an explicit column assignment.
  std::vector<global_index> sizes{3, 0, 5, 1, 4};
  const block_cyclic_2d::mapping irregular(g, tiled_range::from_sizes(sizes), tiled_range::from_sizes(sizes),
                                           {2, 2, 0, 1, 2});
  check_round_trip(irregular);
  CHECK(irregular.tile_owner(2, 3) == g.rank(0, 1));
}

TEST_CASE("replicated_columns keeps whole columns, replicated over grid rows") {
  const process_grid g{2, 2};
  const replicated_columns::mapping m(g, tiled_range::uniform(6, 6), tiled_range::uniform(9, 2));
  CHECK(m.owner(5, 0) == g.rank(0, 0));
  CHECK(m.owner(0, 2) == g.rank(0, 1));
  CHECK(m.replicas(3, 2) == std::vector<int>{g.rank(0, 1), g.rank(1, 1)});
  CHECK(m.holds(g.rank(1, 1), 0, 1));
  CHECK(!m.holds(g.rank(1, 0), 0, 1));
  // Every replica of an element-sparse matrix holds its grid column's whole column block.
  CHECK(m.extents(g.rank(1, 0)).rows == 6);
  CHECK(m.extents(g.rank(1, 0)).cols == m.extents(g.rank(0, 0)).cols);
  for (global_index i = 0; i < 6; ++i)
    for (global_index j = 0; j < 9; ++j) {
      const auto lc = m.to_local(i, j);
      CHECK(m.to_global(lc.rank, lc.row, lc.col) == global_coordinate{i, j});
    }
}

TEST_CASE("mirrored-cyclic assignment, worst-fit blocks and cyclic chunks") {
  const std::vector<double> w{5, 1, 4, 2, 3, 6};
  // Sorted: 1(1) 2(3) 3(4) 4(2) 5(0) 6(5) -> owners 0 1 2, then 2 1 0.
  CHECK(mirrored_cyclic_assignment(w, 3) == std::vector<int>{1, 0, 2, 1, 2, 0});
  // Few unequal items: mirrored-cyclic splits 19 / 15, moves and swaps reach 17 / 17.
  const std::vector<double> few{10, 9, 8, 3, 2, 2};
  auto owner = mirrored_cyclic_assignment(few, 2);
  auto loads = [&] {
    std::vector<double> l(2, 0.0);
    for (std::size_t i = 0; i < few.size(); ++i) l[static_cast<std::size_t>(owner[i])] += few[i];
    return l;
  };
  CHECK(loads() == std::vector<double>{19, 15});
  rebalance_assignment(few, owner, 2);
  CHECK(loads() == std::vector<double>{17, 17});
  // Balanced already (and a single grid column): nothing moves.
  auto same = mirrored_cyclic_assignment(w, 3);
  rebalance_assignment(w, same, 3);
  CHECK(same == std::vector<int>{1, 0, 2, 1, 2, 0});
  std::vector<int> one(w.size(), 0);
  rebalance_assignment(w, one, 1);
  CHECK(one == std::vector<int>(w.size(), 0));
  const std::vector<std::size_t> items{10, 11, 12, 13}, bytes{6, 5, 4, 3};
  const auto blocks = worst_fit_blocks(items, bytes, 9);
  REQUIRE(blocks.size() == 2);  // 6 opens, 5 does not fit with it, 4 joins 5, 3 joins 6
  CHECK(blocks[0] == std::vector<std::size_t>{10, 13});
  CHECK(blocks[1] == std::vector<std::size_t>{11, 12});
  const std::vector<std::vector<std::size_t>> rows{{0, 1, 2}, {3}, {4, 5}};
  const auto chunks = cyclic_chunks(rows, [](std::size_t) { return std::size_t{8}; }, 24);
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0] == std::vector<std::size_t>{0, 3, 4});  // one tile per row, cyclically
  CHECK(chunks[1] == std::vector<std::size_t>{1, 5, 2});
}

TEST_CASE_TEMPLATE("dist_matrix over block_cyclic_2d is built, gathered and redistributed", B, mpi_rma, aggregator) {
  using P = policy<block_cyclic_2d, csr, B>;
  const auto& comm = test::world();
  const global_index m = 23, n = 17;
  const auto entries = some_entries(comm, m, n);
  const auto reference = serial(m, n);
  for (global_index block : {1, 3, 8}) {
    INFO("block " << block);
    const auto a = build_from_triplets<double, P>(comm, m, n, entries,
                                                  {.distribution = {.grid = std::nullopt, .block_rows = block, .block_cols = block + 1}});
    test::require_equal(a, reference);
    CHECK(a.global_nnz() == static_cast<offset_type>(reference.values.size()));
    // Onto another grid shape and block size.
    const process_grid other{comm.size(), 1};
    const block_cyclic_2d::mapping target(other, tiled_range::uniform(m, 5), tiled_range::uniform(n, 2));
    const auto moved = redistribute(a, target);
    test::require_equal(moved, reference);
    CHECK(moved.mapping() == target);
  }
}

TEST_CASE("dist_matrix over replicated_columns fills every replica and counts each entry once") {
  using P = policy<replicated_columns, csr, mpi_rma>;
  const auto& comm = test::world();
  const process_grid grid{comm.size(), 1};  // p x 1: every rank holds all of it
  const auto a = build_from_triplets<double, P>(comm, 12, 19, some_entries(comm, 12, 19),
                                                {.distribution = {.grid = grid, .block_cols = 4}});
  const auto expected = serial(12, 19);
  test::require_equal(a, expected);
  CHECK(a.global_nnz() == expected.nnz());
  CHECK(a.local_nnz() == expected.nnz());
}

TEST_CASE("a grid that does not match the communicator is an error on every rank") {
  using P = policy<block_cyclic_2d, csr, mpi_rma>;
  const auto& comm = test::world();
  try {
    (void)build_from_triplets<double, P>(comm, 10, 10, some_entries(comm, 10, 10),
                                         {.distribution = {.grid = process_grid{comm.size(), 2}}});
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::dimension_mismatch);
    CHECK(std::string(e.what()).find("grid") != std::string::npos);
  }
}

}  // namespace block_distributions_tests
