// Every grid distribution x every storage x every backend runs spgemm (SUMMA and every layer
// count), transpose, spmm and the element-wise operations against the serial reference
// (composition_checks.hpp). Compiled once per distribution (TESSERA_GRID_DISTRIBUTION): apart, so
// the two halves build in parallel, or both in one unit (test_composition_grid_distributions.cpp),
// each in a namespace and a doctest suite named after its distribution.
#include "composition_checks.hpp"

#ifndef TESSERA_GRID_DISTRIBUTION
#error "compile with -DTESSERA_GRID_DISTRIBUTION=block_cyclic_2d or replicated_columns"
#endif
#define TESSERA_GRID_TESTS_JOIN(a, b) TESSERA_GRID_TESTS_JOIN_(a, b)
#define TESSERA_GRID_TESTS_JOIN_(a, b) a##b
#define TESSERA_GRID_TESTS_NAME(x) TESSERA_GRID_TESTS_NAME_(x)
#define TESSERA_GRID_TESTS_NAME_(x) #x

namespace TESSERA_GRID_TESTS_JOIN(composition_grids_tests_, TESSERA_GRID_DISTRIBUTION) {

using namespace tessera;
using namespace composition;

using grid_distribution = TESSERA_GRID_DISTRIBUTION;

TEST_SUITE_BEGIN(TESSERA_GRID_TESTS_NAME(TESSERA_GRID_DISTRIBUTION));

#define TESSERA_POLICIES_OF(distribution)                                                                   \
  policy<distribution, csr, mpi_rma>, policy<distribution, csc, mpi_rma>, policy<distribution, coo, mpi_rma>, \
      policy<distribution, csr, aggregator>, policy<distribution, csc, aggregator>, policy<distribution, coo, aggregator>

TEST_CASE_TEMPLATE("every operation on this grid distribution x storage x backend equals the serial reference", P,
                   TESSERA_POLICIES_OF(grid_distribution)) {
  check_grid_shapes<P>();
}

TEST_CASE("the grid operations on a user's backend with only the concept's exchange of bytes") {
  check_grid_shapes<policy<grid_distribution, csr, bytes_only_backend>>();
}

TEST_CASE("the grid operations on progress ranks" * doctest::skip(!test::progress_ranks_requested())) {
  using storage = std::conditional_t<std::is_same_v<grid_distribution, block_cyclic_2d>, csc, csr>;
  check_grid_shapes<policy<grid_distribution, storage, progress_rank>>();
}

TEST_CASE("A * transpose(A) on a 1 x P grid: B comes on the P x 1 grid and is moved to A's") {
  using P = policy<grid_distribution, csr, mpi_rma>;
  using Rows = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto rows = generate::uniform_random<double, Rows>(comm, 13, 9, 3, 17);  // rectangular: A^T is 9 x 13
  const auto a = redistribute<P>(rows, grid_distribution{.grid = process_grid{1, comm.size()}});
  const auto at = transpose(a);
  if constexpr (std::is_same_v<grid_distribution, block_cyclic_2d>) CHECK(at.mapping().grid() == process_grid{comm.size(), 1});
  const auto expected = gather_to_all(spgemm(rows, transpose(rows)));
  test::require_equal(spgemm(a, at), expected, 1e-12);
  test::require_equal(spgemm(a, a, spgemm_options{.transpose_b = true}), expected, 1e-12);
}

TEST_SUITE_END();

}  // namespace composition_grids_tests_<distribution>
