// Generators: the same global matrix at every rank count, and the properties each promises.
#include "test_support.hpp"

namespace generators_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {
const auto& comm() { return test::world(); }

/// The communicator of this rank alone: generating on it is the one-rank run.
const communicator& alone() {
  static const communicator self = communicator::duplicate(MPI_COMM_SELF);
  return self;
}

/// The one-rank generation of every rank must equal the distributed one.
template <class Make>
void check_rank_count_independent(Make make) {
  const auto distributed = make(comm());
  const auto serial = gather_to_all(make(alone()));
  const auto result = compare(distributed, serial);
  INFO(result.difference);
  CHECK(result.equal);
}
}  // namespace

TEST_CASE("R-MAT is the same at every rank count") {
  check_rank_count_independent([](const communicator& c) { return generate::rmat<double, test::csr_policy>(c, 8, 8, 42); });
}

TEST_CASE("the Laplacian is the same at every rank count") {
  check_rank_count_independent([](const communicator& c) { return generate::laplacian_2d<double, test::csr_policy>(c, 7); });
}

TEST_CASE("uniform random is the same at every rank count") {
  check_rank_count_independent(
      [](const communicator& c) { return generate::uniform_random<float, test::csc_policy>(c, 37, 23, 4, 5); });
}

TEST_CASE("R-MAT counts every edge once and is skewed") {
  const int scale = 9, edge_factor = 8;
  const auto a = generate::rmat<std::int64_t, test::csr_policy>(comm(), scale, edge_factor, 7);
  const auto g = gather_to_all(a);
  std::int64_t edges = 0;
  for (auto v : g.values) edges += v;
  CHECK(edges == (std::int64_t{1} << scale) * edge_factor);
  CHECK(a.num_rows() == 512);
  // Power law: the heaviest row holds far more than the average 8 entries.
  offset_type heaviest = 0;
  for (global_index i = 0; i < g.rows; ++i)
    heaviest = std::max(heaviest, g.row_ptr[static_cast<std::size_t>(i) + 1] - g.row_ptr[static_cast<std::size_t>(i)]);
  CHECK(heaviest > 4 * edge_factor);
  // A different seed gives a different graph.
  CHECK_FALSE(compare(generate::rmat<std::int64_t, test::csr_policy>(comm(), scale, edge_factor, 8), g).equal);
}

TEST_CASE("the Laplacian has the 5-point structure") {
  const global_index n = 6;
  const auto a = generate::laplacian_2d<double, test::csr_policy>(comm(), n);
  CHECK(a.global_nnz() == 5 * n * n - 4 * n);
  const auto g = gather_to_all(a);
  for (global_index i = 0; i < n * n; ++i) {
    CHECK(g.at(i, i).value_or(0) == 4.0);
    double row_sum = 0;
    for (auto k = g.row_ptr[static_cast<std::size_t>(i)]; k < g.row_ptr[static_cast<std::size_t>(i) + 1]; ++k)
      row_sum += g.values[static_cast<std::size_t>(k)];
    const global_index x = i % n, y = i / n;
    const int boundary_sides = (x == 0) + (x == n - 1) + (y == 0) + (y == n - 1);
    CHECK(row_sum == doctest::Approx(boundary_sides));
  }
  CHECK(generate::laplacian_2d<double, test::csr_policy>(comm(), 0).num_rows() == 0);
}

TEST_CASE("uniform random draws k entries per row, values in (0, 1]") {
  const int k = 5;
  const auto a = generate::uniform_random<double, test::csr_policy>(comm(), 64, 1000, k, 9);
  const auto g = gather_to_all(a);
  for (global_index i = 0; i < g.rows; ++i) {
    const auto count = g.row_ptr[static_cast<std::size_t>(i) + 1] - g.row_ptr[static_cast<std::size_t>(i)];
    CHECK(count >= 1);
    CHECK(count <= k);
  }
  for (double v : g.values) {
    CHECK(v > 0.0);
    CHECK(v <= static_cast<double>(k));
  }
  CHECK(g.nnz() > 64 * (k - 1));  // collisions are rare in 1000 columns
  CHECK_THROWS_AS(((void)generate::uniform_random<double, test::csr_policy>(comm(), 4, 0, 2, 1)), error);
  CHECK_THROWS_AS(((void)generate::rmat<double, test::csr_policy>(comm(), -1)), error);
}

TEST_CASE("rmat's vertex relabelling is a permutation") {
  for (int bits : {1, 2, 5, 10}) {
    std::vector<bool> hit(std::size_t{1} << bits, false);
    for (std::uint64_t x = 0; x < hit.size(); ++x) {
      const auto y = generate::rmat_vertex_label(x, bits, 99);
      REQUIRE(y < hit.size());
      CHECK_FALSE(hit[y]);
      hit[y] = true;
    }
  }
}

}  // namespace generators_tests
