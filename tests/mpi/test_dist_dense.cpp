// dist_dense: a row-distributed block of k vectors.
#include "test_support.hpp"

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
