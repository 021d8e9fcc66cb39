// Policies, concepts and the row_block mapping, checked without communication.
#include "test_support.hpp"

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
  test::require_equal(a, host_csr<double>::from_triplets(3, 2, t));
}
