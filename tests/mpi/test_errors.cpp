// Error agreement: a failure on any rank is raised on every rank, and nobody hangs.
#include "test_support.hpp"

#include <stdexcept>

namespace errors_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

TEST_CASE("a failure on the last rank is raised on every rank with its message") {
  const auto& comm = test::world();
  const int last = comm.size() - 1;
  try {
    comm.collectively([&] {
      if (comm.rank() == last) TESSERA_THROW(invalid_argument, "rank {} disliked its input", comm.rank());
    });
    FAIL("no exception");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::invalid_argument);
    CHECK(e.origin_rank() == last);
    CHECK(e.message() == fmt::format("rank {} disliked its input", last));
    CHECK(std::string(e.what()).find(fmt::format("(rank {})", last)) != std::string::npos);
  }
}

TEST_CASE("the lowest failing rank's message wins when several ranks fail") {
  const auto& comm = test::world();
  try {
    comm.collectively([&] { throw std::runtime_error(fmt::format("failure {}", comm.rank())); });
    FAIL("no exception");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::external);
    CHECK(e.origin_rank() == 0);
    CHECK(e.message() == "failure 0");
  }
}

TEST_CASE("collectively returns the local result when nobody fails") {
  const auto& comm = test::world();
  const int twice = comm.collectively([&] { return 2 * comm.rank(); });
  CHECK(twice == 2 * comm.rank());
}

TEST_CASE("an out-of-range entry on one rank fails the build on every rank") {
  const auto& comm = test::world();
  triplets<double> t;
  t.push_back(0, 0, 1.0);
  if (comm.rank() == comm.size() - 1) t.push_back(3, 9, 1.0);  // only 4 columns
  try {
    (void)build_from_triplets<double, test::csr_policy>(comm, 5, 4, t);
    FAIL("no exception");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::index_out_of_range);
    CHECK(e.origin_rank() == comm.size() - 1);
    CHECK(e.message().find("column 9") != std::string::npos);
  }
  // The communicator is still usable afterwards: nothing is left in flight.
  CHECK(comm.sum(1) == comm.size());
}

TEST_CASE("arrays of different lengths and negative shapes are rejected everywhere") {
  const auto& comm = test::world();
  std::vector<global_index> rows{0, 1}, cols{0};
  std::vector<double> vals{1.0, 2.0};
  CHECK_THROWS_AS(((void)build_from_triplets<double, test::csr_policy>(comm, 2, 2, rows, cols, vals)), error);
  CHECK_THROWS_AS(((void)build_from_triplets<double, test::csr_policy>(comm, -1, 2, triplets<double>{})), error);
}

TEST_CASE("MPI errors become tessera::error") {
  const auto& comm = test::world();
  int value = 0;
  try {
    TESSERA_MPI(MPI_Bcast(&value, 1, MPI_INT, comm.size() + 5, comm.get()));
    FAIL("no exception");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::mpi_error);
    CHECK(e.message().find("MPI_Bcast") != std::string::npos);
  }
}

TEST_CASE("an inner environment leaves MPI and Kokkos to the one that started them") {
  {
    environment inner;
    CHECK_FALSE(inner.owns_mpi());
    CHECK_FALSE(inner.owns_kokkos());
    CHECK(inner.world().size() == test::world().size());
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  CHECK(finalized == 0);
  CHECK(Kokkos::is_initialized());
}

TEST_CASE("traffic counters are per scope, resettable and printable") {
  const auto& comm = test::world();
  comm.stats().reset();
  {
    const stats_scope scope(comm, "probe");
    comm.stats().record(2, 100);
  }
  comm.stats().record(1, 10);
  CHECK(comm.stats().of("probe") == traffic{2, 100});
  CHECK(comm.stats().of("other") == traffic{1, 10});
  CHECK(comm.stats().total() == traffic{3, 110});
  CHECK(fmt::format("{}", comm.stats()) == "other: 1 messages, 10 bytes; probe: 2 messages, 100 bytes");
  const auto summary = reduce_traffic(comm, "probe");
  CHECK(summary.total.bytes == 100u * static_cast<unsigned>(comm.size()));
  CHECK(summary.max_per_rank.messages == 2u);
  comm.stats().reset();
  CHECK(comm.stats().total() == traffic{});
}

TEST_CASE("adopting a local block that does not fit the mapping fails on every rank") {
  const auto& comm = test::world();
  using block = csr_block<double, Kokkos::DefaultExecutionSpace::memory_space>;
  const row_block::mapping m(comm.size(), 3 * static_cast<global_index>(comm.size()), 4);
  // Every rank should own 3 rows; the last rank claims 5.
  const local_index rows = comm.rank() == comm.size() - 1 ? 5 : 3;
  block b{rows, 0, Kokkos::View<offset_type*, block::memory_space>("row_ptr", static_cast<std::size_t>(rows) + 1),
          Kokkos::View<local_index*, block::memory_space>("col_idx", 0), Kokkos::View<double*, block::memory_space>("values", 0)};
  Kokkos::View<global_index*, block::memory_space> col_map("col_map", 0);
  try {
    dist_matrix<double, test::csr_policy> a(comm, m, b, col_map);
    FAIL("no exception");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::dimension_mismatch);
    CHECK(e.origin_rank() == comm.size() - 1);
    CHECK(e.message().find("5 rows") != std::string::npos);
  }
}

}  // namespace errors_tests
