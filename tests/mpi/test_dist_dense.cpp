// dist_dense: a row-distributed block of k vectors.
#include "test_support.hpp"

namespace dist_dense_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

TEST_CASE("a dense block is split by rows, filled and gathered in row-major order") {
  const auto& comm = test::world();
  for (global_index rows : {0, 1, 3, 10}) {
    dist_dense<double, test::csr_policy> x(comm, rows, 3);
    CHECK(x.num_rows() == rows);
    CHECK(x.num_vectors() == 3);
    CHECK(comm.sum(static_cast<global_index>(x.local_rows())) == rows);
    x.fill([](global_index i, global_index j) { return static_cast<double>(10 * i + j); });
    const auto all = x.gather_to_root();
    if (comm.rank() == 0) {
      REQUIRE(all.has_value());
      REQUIRE(all->size() == static_cast<std::size_t>(rows * 3));
      for (global_index i = 0; i < rows; ++i)
        for (global_index j = 0; j < 3; ++j) CHECK((*all)[static_cast<std::size_t>(3 * i + j)] == 10.0 * i + j);
    } else {
      CHECK_FALSE(all.has_value());
    }
  }
}

TEST_CASE("a dense block can follow a matrix's row split") {
  const auto& comm = test::world();
  triplets<double> t;
  if (comm.rank() == 0)
    for (global_index i = 0; i < 12; ++i) t.push_back(i, 0, 1.0 + static_cast<double>(i * i));
  const auto a = build_from_triplets<double, test::csr_policy>(comm, 12, 12, t,
                                                               {.distribution = row_block{row_block::balance::nonzeros}});
  dist_dense<float, test::csr_policy> y(comm, a.mapping(), 4);
  CHECK(y.local_rows() == a.local_rows());
  CHECK(y.row_begin() == a.mapping().row_begin(comm.rank()));
  y.fill(2.5f);
  const auto all = y.gather_to_root();
  if (comm.rank() == 0)
    for (float v : *all) CHECK(v == 2.5f);
  CHECK_THROWS_AS((dist_dense<double, test::csr_policy>(comm, -2, 1)), error);
}

TEST_CASE("a dense block over memory the caller keeps: no copy, any width up to the workspace's") {
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, test::csr_policy>(comm, 23, 23, 4, 7);
  using dense = dist_dense<double, test::csr_policy>;
  using view = dense::view_type;
  const dense workspace_x(comm, a.mapping(), 40), workspace_y(comm, a.mapping(), 40);
  const auto rows = static_cast<std::size_t>(a.local_rows());
  for (global_index k : {40, 13, 1, 0}) {
    CAPTURE(k);
    // The first k columns' worth of each workspace, as a rows x k block of its own.
    dense x(comm, a.mapping(), view(workspace_x.local().data(), rows, static_cast<std::size_t>(k)));
    dense y(comm, a.mapping(), view(workspace_y.local().data(), rows, static_cast<std::size_t>(k)));
    CHECK(x.num_vectors() == k);
    CHECK(x.local().data() == workspace_x.local().data());  // the caller's memory, not a copy
    auto fill = [](global_index i, global_index j) { return 1.0 + static_cast<double>((3 * i + 5 * j) % 11); };
    x.fill(fill);
    spmm(a, x, y);
    dense x_owned(comm, a.mapping(), k);
    x_owned.fill(fill);
    const auto want = spmm(a, x_owned).gather_to_root();
    const auto got = y.gather_to_root();
    if (comm.rank() == 0) {
      REQUIRE(got->size() == want->size());
      for (std::size_t i = 0; i < got->size(); ++i) CHECK((*got)[i] == doctest::Approx((*want)[i]));
    }
  }
}

TEST_CASE("a dense block over the caller's memory: a wrong row count or width is an error on every rank") {
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, test::csr_policy>(comm, 9, 9, 2, 3);
  using dense = dist_dense<double, test::csr_policy>;
  const auto rows = static_cast<std::size_t>(a.local_rows());
  // One row too many on the last rank only: every rank throws, naming the rows.
  dense::view_type wrong_rows("wrong", comm.rank() == comm.size() - 1 ? rows + 1 : rows, 2);
  CHECK_THROWS_WITH_AS((dense(comm, a.mapping(), wrong_rows)), doctest::Contains("rows"), error);
  // Another width on rank 0 only (with more than one rank): every rank throws.
  dense::view_type other_width("width", rows, comm.size() > 1 && comm.rank() == 0 ? 3 : 2);
  if (comm.size() > 1)
    CHECK_THROWS_AS((dense(comm, a.mapping(), other_width)), error);
  else
    CHECK(dense(comm, a.mapping(), other_width).num_vectors() == 2);
}

}  // namespace dist_dense_tests
