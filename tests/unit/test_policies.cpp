// Policies, concepts and the row_block mapping, checked without communication.
#include "test_support.hpp"

// tessera::instantiations' extern declarations follow the unit's includes: a combination is
// declared only where its distribution's and backend's headers were included (each defines
// TESSERA_COMPONENT_<name>); this unit includes tessera/tessera.hpp, so every built-in one is.
#include <tessera/instantiations/declarations.hpp>

namespace policies_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

// A user-written distribution: everything on rank 0. It satisfies the concept
// without touching tessera's code, so it works with build_from_triplets.
// A named namespace, not an unnamed one: nvcc warns (#177-D) about members of
// an internal-linkage type that only concepts look at.
namespace user_policies {
struct all_on_root {
  static constexpr std::string_view name() { return "all_on_root"; }
  struct mapping {
    int ranks = 1;
    global_index rows = 0, cols = 0;
    int num_ranks() const { return ranks; }
    global_index global_rows() const { return rows; }
    global_index global_cols() const { return cols; }
    int owner(global_index, global_index) const { return 0; }
    local_coordinate to_local(global_index i, global_index j) const { return {0, i, j}; }
    global_coordinate to_global(int, global_index i, global_index j) const { return {i, j}; }
    local_extents extents(int r) const { return r == 0 ? local_extents{rows, cols} : local_extents{0, cols}; }
    friend bool operator==(const mapping&, const mapping&) = default;
  };
  mapping make_mapping(int p, global_index m, global_index n) const { return {p, m, n}; }
};
}  // namespace user_policies
using user_policies::all_on_root;

static_assert(distribution_policy<row_block>);
static_assert(rebalancing_distribution<row_block>);
static_assert(row_distribution_mapping<row_block::mapping>);
static_assert(distribution_policy<all_on_root>);
static_assert(!rebalancing_distribution<all_on_root>);
static_assert(storage_policy<csr> && storage_policy<csc> && storage_policy<coo>);
static_assert(!storage_policy<int>);
static_assert(communication_backend<mpi_rma>);
static_assert(communication_backend<aggregator>);
static_assert(communication_backend<progress_rank>);
static_assert(!communication_backend<csr>);
static_assert(starts_exchanges<mpi_rma> && starts_exchanges<aggregator> && starts_exchanges<progress_rank>);
static_assert(std::same_as<rebind_storage_t<test::csr_policy, csc>, test::csc_policy>);
static_assert(std::same_as<rebind_storage_t<test::csc_policy, csr>, test::csr_policy>);
static_assert(std::same_as<rebind_backend_t<test::csr_policy, mpi_rma>, test::csr_policy>);

TEST_CASE("row_block splits rows evenly, the first rows % P ranks one more") {
  const row_block::mapping m(4, 10, 7);
  CHECK(m.row_offsets() == std::vector<global_index>{0, 3, 6, 8, 10});
  CHECK(m.global_rows() == 10);
  CHECK(m.global_cols() == 7);
  CHECK(m.row_owner(0) == 0);
  CHECK(m.row_owner(2) == 0);
  CHECK(m.row_owner(3) == 1);
  CHECK(m.row_owner(9) == 3);
  CHECK(m.to_local(7, 5) == local_coordinate{2, 1, 5});
  CHECK(m.to_global(2, 1, 5) == global_coordinate{7, 5});
  CHECK(m.extents(3) == local_extents{2, 7});
}

TEST_CASE("row_block with more ranks than rows leaves trailing ranks empty") {
  const row_block::mapping m(5, 2, 3);
  CHECK(m.row_offsets() == std::vector<global_index>{0, 1, 2, 2, 2, 2});
  CHECK(m.row_owner(1) == 1);
  CHECK(m.extents(4).rows == 0);
}

TEST_CASE("row_block mappings share their offsets: copies and same-row shapes cost O(1) to make and compare") {
  const row_block::mapping m(1000, 5000, 7);
  const auto copy = m;
  const auto wider = m.with_shape(5000, 32);  // Y = A * X with 32 columns, C = A * B: A's rows
  CHECK(&copy.row_offsets() == &m.row_offsets());
  CHECK(&wider.row_offsets() == &m.row_offsets());
  CHECK(wider.global_cols() == 32);
  CHECK(same_rows(m, wider));
  CHECK_FALSE(wider == m);  // the column counts differ
  // Independently made equal splits still compare equal, by content.
  CHECK(row_block::mapping(1000, 5000, 7) == m);
  CHECK_FALSE(row_block::mapping(999, 5000, 7) == m);
  CHECK(m.with_shape(4000, 7).row_offsets().back() == 4000);  // other rows: a new even split
}

TEST_CASE("row_block rejects malformed explicit offsets") {
  CHECK_THROWS_AS(row_block::mapping(std::vector<global_index>{0, 5, 3}, 4), error);
  CHECK_THROWS_AS(row_block::mapping(std::vector<global_index>{1, 5}, 4), error);
  CHECK_THROWS_AS(row_block::mapping(2, -1, 4), error);
  try {
    row_block::mapping(std::vector<global_index>{0, 5, 3}, 4);
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::invalid_argument);
    CHECK(std::string(e.what()).find("must not decrease") != std::string::npos);
  }
}

TEST_CASE("a user-defined distribution works with build_from_triplets") {
  using P = policy<all_on_root, csr, mpi_rma>;
  triplets<double> t;
  t.push_back(2, 1, 1.0);
  t.push_back(0, 0, 2.0);
  t.push_back(2, 1, 3.0);
  const auto a = build_from_triplets<double, P>(test::world(), 3, 2, t);
  CHECK(a.global_nnz() == 2);
  // Every rank gave the same triplets: the duplicates of all ranks add up on the root.
  triplets<double> everyone;
  for (int r = 0; r < test::world().size(); ++r)
    for (std::size_t k = 0; k < t.size(); ++k) everyone.push_back(t.rows[k], t.cols[k], t.values[k]);
  test::require_equal(a, host_csr<double>::from_triplets(3, 2, everyone));
}

static_assert(distribution_policy<row_partition> && whole_row_mapping<row_partition::mapping>);
static_assert(!contiguous_row_mapping<row_partition::mapping>);

TEST_CASE("row_partition keeps every row on the rank its owner list names, in ascending order there") {
  const row_partition::mapping m({2, 0, 2, 1, 0, 2}, 4, 5);
  CHECK(m.num_ranks() == 4);
  CHECK(m.global_rows() == 6);
  CHECK(m.extents(0) == local_extents{2, 5});
  CHECK(m.extents(1) == local_extents{1, 5});
  CHECK(m.extents(2) == local_extents{3, 5});
  CHECK(m.extents(3) == local_extents{0, 5});  // a rank with no rows
  for (global_index i = 0; i < 6; ++i) {
    const auto at = m.to_local(i, 4);
    CHECK(at.rank == m.owners()[static_cast<std::size_t>(i)]);
    CHECK(m.to_global(at.rank, at.row, at.col) == global_coordinate{i, 4});
  }
  CHECK(m.local_row(2) == 1);  // rank 2 holds rows 0, 2, 5
  CHECK(m.local_row(5) == 2);
  // Same rows: the owner list is shared; other rows: an even contiguous split.
  CHECK(same_rows(m, m.with_shape(6, 1)));
  CHECK(m.with_shape(8, 1) == row_partition::mapping(4, 8, 1));
  CHECK(row_partition::mapping(4, 8, 1).owners() == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(m == row_partition::mapping({2, 0, 2, 1, 0, 2}, 4, 5));
  CHECK(!(m == row_partition::mapping({2, 0, 2, 1, 0, 1}, 4, 5)));
  test::require_rejected([] { (void)row_partition::mapping({0, 4}, 4, 1); }, error_kind::invalid_argument,
                         "row 1 is given to rank 4, outside the 4 ranks");
  const row_partition wrong_size{std::make_shared<const std::vector<int>>(std::vector<int>{0, 1})};
  test::require_rejected([&] { (void)wrong_size.make_mapping(2, 3, 3); }, error_kind::invalid_argument,
                         "2 owners given for a matrix of 3 rows");
}

TEST_CASE("grid_aligned_rows puts X's rows in the grid column that names them and Y's in the grid row that makes them") {
  for (const process_grid grid : {process_grid{2, 3}, process_grid{3, 2}, process_grid{1, 4}, process_grid{4, 1}})
    for (const global_index block : {1, 2, 5}) {
      CAPTURE(grid.p);
      CAPTURE(grid.q);
      CAPTURE(block);
      const auto a = block_cyclic_2d{.grid = grid, .block_rows = block, .block_cols = block + 1}.make_mapping(grid.size(), 23, 17);
      const auto x = grid_aligned_rows(a, grid_side::columns);
      const auto y = grid_aligned_rows(a, grid_side::rows);
      REQUIRE(x.global_rows() == 17);
      REQUIRE(y.global_rows() == 23);
      std::vector<global_index> x_rows(static_cast<std::size_t>(grid.size())), y_rows(x_rows.size());
      for (global_index j = 0; j < 17; ++j) {
        // Rank (r, c) holds entries of column j only if c is j's grid column: X's owner shares it.
        CHECK(grid.col_of(x.row_owner(j)) == grid.col_of(a.owner(0, j)));
        ++x_rows[static_cast<std::size_t>(x.row_owner(j))];
      }
      for (global_index i = 0; i < 23; ++i) {
        CHECK(grid.row_of(y.row_owner(i)) == grid.row_of(a.owner(i, 0)));
        ++y_rows[static_cast<std::size_t>(y.row_owner(i))];
      }
      // Within a grid column (row) the rows are split evenly: counts differ by one at most.
      for (int line = 0; line < grid.q; ++line)
        for (int r = 0; r + 1 < grid.p; ++r)
          CHECK(std::abs(x_rows[static_cast<std::size_t>(grid.rank(r, line))] -
                         x_rows[static_cast<std::size_t>(grid.rank(r + 1, line))]) <= 1);
      for (int line = 0; line < grid.p; ++line)
        for (int c = 0; c + 1 < grid.q; ++c)
          CHECK(std::abs(y_rows[static_cast<std::size_t>(grid.rank(line, c))] -
                         y_rows[static_cast<std::size_t>(grid.rank(line, c + 1))]) <= 1);
    }
  // Replicated columns: Y follows the grid rows' 1.5-D shares.
  const auto r = replicated_columns{.grid = process_grid{2, 2}, .block_cols = 3}.make_mapping(4, 10, 9);
  const auto y = grid_aligned_rows(r, grid_side::rows);
  for (global_index i = 0; i < 10; ++i) CHECK(r.grid().row_of(y.row_owner(i)) == (i < 5 ? 0 : 1));
}

#define TESSERA_TEST_SPELLED(...) TESSERA_TEST_SPELLED_(__VA_ARGS__)
#define TESSERA_TEST_SPELLED_(...) #__VA_ARGS__

TEST_CASE("the library's extern declarations cover the distributions and backends a unit included") {
  CHECK(std::string_view(TESSERA_TEST_SPELLED(TESSERA_INSTANTIATED_IF(row_block, mpi_rma)(declared))) == "declared");
  CHECK(std::string_view(TESSERA_TEST_SPELLED(TESSERA_INSTANTIATED_IF(block_cyclic_2d, aggregator)(declared))) ==
        "declared");
  CHECK(std::string_view(TESSERA_TEST_SPELLED(TESSERA_INSTANTIATED_IF(row_block, carrier_pigeon)(declared))).empty());
  CHECK(std::string_view(TESSERA_TEST_SPELLED(TESSERA_INSTANTIATED_IF(all_on_root, mpi_rma)(declared))).empty());
}

}  // namespace policies_tests
