#pragma once
// Shared helpers of tessera's MPI tests.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "test_environment.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <string>

namespace tessera::test {

/// The world communicator of the running test program: only the compute ranks when the
/// environment split off progress ranks.
inline const communicator& world() { return running_environment()->world(); }

/// Whether progress ranks serve this test program (the .progress runs).
inline bool progress_ranks_running() { return running_environment()->has_progress_ranks(); }

/// True in the .progress runs (TESSERA_PROGRESS_RANKS set, as from_environment_variables reads it).
/// Progress-rank test cases are skipped, visibly, elsewhere:
/// `TEST_CASE("..." * doctest::skip(!progress_ranks_requested()))`.
inline bool progress_ranks_requested() {
  const char* value = std::getenv("TESSERA_PROGRESS_RANKS");
  return value != nullptr && std::string(value) == "1";
}

/// True where the environment turns Open MPI's shared-memory one-sided component off
/// (OMPI_MCA_osc set without "sm", as GPU machines without single-copy shared memory need):
/// MPI_Win_allocate_shared then fails, so node-shared test cases are skipped, visibly:
/// `TEST_CASE("..." * doctest::skip(shared_windows_disabled()))`.
inline bool shared_windows_disabled() {
  const char* osc = std::getenv("OMPI_MCA_osc");
  return osc != nullptr && std::string(osc).find("sm") == std::string::npos;
}

using csr_policy = policy<row_block, csr, mpi_rma>;
using csc_policy = policy<row_block, csc, mpi_rma>;
using coo_policy = policy<row_block, coo, mpi_rma>;

/// A path in a per-test scratch folder that every rank agrees on (rank 0's pid).
inline std::string scratch_path(const std::string& name) {
  std::vector<long> pid{static_cast<long>(::getpid())};
  world().broadcast(pid, 0);
  const auto dir = std::filesystem::temp_directory_path() / ("tessera-test-" + std::to_string(pid[0]));
  if (world().rank() == 0) std::filesystem::create_directories(dir);
  world().barrier();
  return (dir / name).string();
}

/// The n x n tridiagonal matrix with A(i, j) = 1 + i + j, each rank building its own rows.
/// Under row_block, rank r's columns reach exactly rows row_begin-1 and row_end of others.
template <class Policy>
dist_matrix<double, Policy> tridiagonal(const communicator& comm, global_index n) {
  triplets<double> t;
  const row_block::mapping m(comm.size(), n, n);
  for (global_index i = m.row_begin(comm.rank()); i < m.row_end(comm.rank()); ++i)
    for (global_index j = std::max<global_index>(0, i - 1); j <= std::min(n - 1, i + 1); ++j)
      t.push_back(i, j, 1.0 + static_cast<double>(i + j));
  return build_from_triplets<double, Policy>(comm, n, n, t);
}

/// A random matrix as triplets, the same on every rank: small positive integers (every sum exact,
/// no product cancels, so results compare with ==), empty rows (every i % 5 == 3) and duplicates
/// now and then (summed on assembly).
struct random_entries {
  global_index rows = 0, cols = 0;
  triplets<double> all;
};

inline random_entries make_entries(global_index rows, global_index cols, double density, std::uint64_t seed) {
  random_entries e{rows, cols, {}};
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (global_index i = 0; i < rows; ++i) {
    if (i % 5 == 3) continue;  // empty rows
    for (global_index j = 0; j < cols; ++j)
      if (static_cast<double>(next() % 1000) < density * 1000) {
        const auto v = static_cast<double>(1 + next() % 4);
        e.all.push_back(i, j, v);
        if (next() % 7 == 0) e.all.push_back(i, j, 1.0);  // a duplicate, summed
      }
  }
  return e;
}

/// This rank's share of triplets every rank holds (dealt round-robin: any rank may pass any entry).
inline triplets<double> share(const triplets<double>& all, const communicator& comm) {
  triplets<double> mine;
  for (std::size_t k = static_cast<std::size_t>(comm.rank()); k < all.size(); k += static_cast<std::size_t>(comm.size()))
    mine.push_back(all.rows[k], all.cols[k], all.values[k]);
  return mine;
}

/// Check a distributed matrix against a serial reference; the message names the first difference.
template <class T, class Policy>
void require_equal(const dist_matrix<T, Policy>& a, const host_csr<T>& reference, double tolerance = 0.0) {
  const auto result = compare(a, reference, tolerance);
  INFO("first difference: " << result.difference);
  REQUIRE(result.equal);
}

/// The serial reference transpose.
inline host_csr<double> transposed(const host_csr<double>& a) {
  triplets<double> t;
  for (global_index i = 0; i < a.rows; ++i)
    for (offset_type e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
      t.push_back(a.col_idx[static_cast<std::size_t>(e)], i, a.values[static_cast<std::size_t>(e)]);
  return host_csr<double>::from_triplets(a.cols, a.rows, t);
}

/// Run `operation`, which must raise a tessera::error of `kind` whose message contains `fragment`
/// on this rank (every rank calls it: the error must be raised everywhere, with nothing left in flight).
template <class Operation>
void require_rejected(Operation&& operation, error_kind kind, const std::string& fragment) {
  const auto& comm = world();
  try {
    operation();
    FAIL("no exception on rank " << comm.rank());
  } catch (const error& e) {
    INFO(e.what());
    CHECK(e.kind() == kind);
    CHECK(e.message().find(fragment) != std::string::npos);
  }
  CHECK(comm.sum(1) == comm.size());  // nothing left in flight
}

}  // namespace tessera::test
