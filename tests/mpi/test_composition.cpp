// Every whole-row distribution (built-in or the user's) x every storage x every backend runs spmm,
// spgemm, transpose and the element-wise operations, each checked against a serial reference
// (composition_checks.hpp). The user's policies are those of examples/custom_policies: a
// row-cyclic distribution, a sliced-ELLPACK storage and a tracing backend. The grid distributions
// are in test_composition_grids.cpp.
#include "../../examples/custom_policies/row_cyclic.hpp"
#include "../../examples/custom_policies/sliced_ell.hpp"
#include "../../examples/custom_policies/tracing_backend.hpp"
#include "composition_checks.hpp"

#include <algorithm>

namespace composition_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;
using namespace composition;
using custom::row_cyclic;
using custom::sliced_ell;
using custom::tracing;

#define TESSERA_POLICIES_OF(distribution)                                                                   \
  policy<distribution, csr, mpi_rma>, policy<distribution, csc, mpi_rma>, policy<distribution, coo, mpi_rma>, \
      policy<distribution, csr, aggregator>, policy<distribution, csc, aggregator>, policy<distribution, coo, aggregator>

TEST_CASE_TEMPLATE("every operation on every whole-row distribution x storage x backend equals the serial reference",
                   P, TESSERA_POLICIES_OF(row_block), TESSERA_POLICIES_OF(row_cyclic)) {
  check_shapes<P>();
}

TEST_CASE_TEMPLATE("the user's storage and backend compose with the built-ins and with each other", P,
                   policy<row_block, sliced_ell, mpi_rma>, policy<row_block, csr, tracing<>>,
                   policy<row_cyclic, sliced_ell, tracing<aggregator>>, policy<row_block, coo, bytes_only_backend>) {
  check_shapes<P>();
}

TEST_CASE("the tracing backend logs the gets of SpMM's halo") {
  const auto& comm = test::world();
  using P = policy<row_block, csr, tracing<>>;
  const auto a = generate::laplacian_2d<double, P>(comm, 12);
  dist_dense<double, P> x(comm, a.num_cols(), 2);
  x.fill(x_value);
  custom::trace_log().clear();
  comm.stats().reset();
  const auto y = spmm(a, x);
  std::size_t gets = 0;
  for (const auto& e : custom::trace_log()) gets += e.what == "get" ? 1 : 0;
  // What the library counted as sent is what the backend was asked to move.
  CHECK(gets == comm.stats().of("spmm").messages);
  CHECK(gets == (comm.size() == 1 ? 0u : comm.rank() == 0 || comm.rank() == comm.size() - 1 ? 1u : 2u));
}

TEST_CASE("the operations on progress ranks, row_block and row_cyclic" * doctest::skip(!test::progress_ranks_requested())) {
  check_shapes<policy<row_block, csr, progress_rank>>();
  check_shapes<policy<row_cyclic, coo, progress_rank>>();
}

TEST_CASE("row_cyclic SpMM fetches one packed block per owner, not one run per row") {
  // Tridiagonal: rank r's rows need rows of ranks r - 1 and r + 1 only, interleaved with its own.
  const auto& comm = test::world();
  using P = policy<row_cyclic, csr, mpi_rma>;
  const global_index n = 40;
  triplets<double> t;
  for (global_index i = comm.rank(); i < n; i += comm.size())
    for (global_index j = std::max<global_index>(0, i - 1); j <= std::min(n - 1, i + 1); ++j) t.push_back(i, j, 1.0);
  const auto a = build_from_triplets<double, P>(comm, n, n, t);
  dist_dense<double, P> x(comm, n, 2);
  x.fill(x_value);
  auto& plan = spmm_plan_for(a, x);
  const auto neighbours = static_cast<std::size_t>(std::min(comm.size() - 1, 2));
  CHECK(plan.gets_per_apply() == neighbours);
  comm.stats().reset();
  const auto y = spmm(a, x);
  CHECK(comm.stats().of("spmm").messages == neighbours);
  const auto got = y.gather_to_root();
  if (comm.rank() == 0)
    for (global_index i = 0; i < n; ++i) {
      double sum = 0;
      for (global_index j = std::max<global_index>(0, i - 1); j <= std::min(n - 1, i + 1); ++j) sum += x_value(j, 1);
      CHECK((*got)[static_cast<std::size_t>(i * 2 + 1)] == sum);
    }
}

}  // namespace composition_tests
