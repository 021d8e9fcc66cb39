// Building distributed matrices from triplets held on any rank, against the serial reference.
#include "test_support.hpp"

#include <random>

namespace build_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

/// Every rank's triplets, on every rank (for the serial reference).
template <class T>
triplets<T> all_triplets(const triplets<T>& mine) {
  triplets<T> all;
  all.rows = test::world().allgather_concatenated(mine.rows);
  all.cols = test::world().allgather_concatenated(mine.cols);
  all.values = test::world().allgather_concatenated(mine.values);
  return all;
}

/// Random entries anywhere in the matrix, many of them repeated.
template <class T>
triplets<T> random_triplets(global_index rows, global_index cols, int count, unsigned seed) {
  std::mt19937_64 rng(seed * 7919u + static_cast<unsigned>(test::world().rank()));
  triplets<T> t;
  if (rows == 0 || cols == 0) return t;
  for (int k = 0; k < count; ++k)
    t.push_back(static_cast<global_index>(rng() % static_cast<std::uint64_t>(rows)),
                static_cast<global_index>(rng() % static_cast<std::uint64_t>(cols)),
                static_cast<T>(1 + rng() % 5));
  return t;
}

template <class T, class Policy>
void check_random_build(global_index rows, global_index cols, int count, unsigned seed) {
  const auto mine = random_triplets<T>(rows, cols, count, seed);
  const auto a = build_from_triplets<T, Policy>(test::world(), rows, cols, mine);
  const auto reference = host_csr<T>::from_triplets(rows, cols, all_triplets(mine));
  CHECK(a.num_rows() == rows);
  CHECK(a.num_cols() == cols);
  CHECK(a.global_nnz() == reference.nnz());
  test::require_equal(a, reference);
}

}  // namespace

TEST_CASE_TEMPLATE("random off-rank entries with duplicates build the reference matrix", T, float, double,
                   std::int32_t, std::int64_t) {
  check_random_build<T, test::csr_policy>(23, 19, 60, 1);
  check_random_build<T, test::csc_policy>(23, 19, 60, 2);
  check_random_build<T, test::coo_policy>(23, 19, 60, 3);
}

TEST_CASE("rectangular shapes, both ways") {
  check_random_build<double, test::csr_policy>(3, 41, 30, 4);
  check_random_build<double, test::csr_policy>(41, 3, 30, 5);
  check_random_build<double, test::csc_policy>(1, 50, 10, 6);
}

TEST_CASE("more ranks than rows, and a single row") {
  check_random_build<double, test::csr_policy>(2, 3, 5, 7);
  check_random_build<double, test::csr_policy>(1, 1, 4, 8);
}

TEST_CASE("empty matrices") {
  check_random_build<double, test::csr_policy>(0, 0, 0, 9);
  check_random_build<double, test::csr_policy>(0, 5, 0, 9);
  check_random_build<double, test::csc_policy>(6, 0, 0, 9);
  check_random_build<double, test::coo_policy>(7, 7, 0, 9);  // shape but no entries
}

TEST_CASE("empty rows and columns stay empty; all entries given by one rank") {
  const auto& comm = test::world();
  triplets<double> mine;
  if (comm.rank() == 0)
    for (global_index i = 0; i < 30; i += 3) mine.push_back(i, 29 - i, static_cast<double>(i) + 0.5);
  const auto a = build_from_triplets<double, test::csr_policy>(comm, 30, 30, mine);
  test::require_equal(a, host_csr<double>::from_triplets(30, 30, all_triplets(mine)));
  CHECK(a.global_nnz() == 10);
}

// Entries given row by row with ascending columns take assembly's direct path (no grouping);
// a repeat or a column out of order anywhere sends them through the general one. Both must give
// the reference, for every storage.
TEST_CASE_TEMPLATE("entries in row order, with and without a repeat or an out-of-order column", P, test::csr_policy,
                   test::csc_policy, test::coo_policy) {
  const auto& comm = test::world();
  const global_index n = 17;
  const global_index begin = n * comm.rank() / comm.size(), end = n * (comm.rank() + 1) / comm.size();
  auto in_order = [&] {  // this rank's rows, each row's columns ascending, some rows empty
    triplets<double> t;
    for (global_index i = begin; i < end; ++i)
      for (global_index j = i % 3; j < n; j += 2 + i % 4) t.push_back(i, j, static_cast<double>(10 * i + j) + 0.25);
    return t;
  };
  const auto sorted = in_order();
  test::require_equal(build_from_triplets<double, P>(comm, n, n, sorted),
                      host_csr<double>::from_triplets(n, n, all_triplets(sorted)));
  auto repeated = in_order();
  if (repeated.size() > 1) repeated.push_back(repeated.rows.back(), repeated.cols.back(), 1.0);  // summed
  test::require_equal(build_from_triplets<double, P>(comm, n, n, repeated),
                      host_csr<double>::from_triplets(n, n, all_triplets(repeated)));
  auto swapped = in_order();
  for (std::size_t k = 1; k < swapped.size(); ++k)
    if (swapped.rows[k] == swapped.rows[k - 1]) {  // two columns of one row exchanged
      std::swap(swapped.cols[k], swapped.cols[k - 1]);
      std::swap(swapped.values[k], swapped.values[k - 1]);
      break;
    }
  test::require_equal(build_from_triplets<double, P>(comm, n, n, swapped),
                      host_csr<double>::from_triplets(n, n, all_triplets(swapped)));
}

namespace {
// At namespace scope, not inside the test: CUDA cannot launch a kernel whose template arguments
// name a type local to a function, and the combine is one of assembly's kernel's.
struct keep_max {
  KOKKOS_INLINE_FUNCTION double operator()(double a, double b) const { return a < b ? b : a; }
};
}  // namespace

TEST_CASE("a user-given combine replaces the sum") {
  const auto mine = random_triplets<double>(9, 9, 80, 10);
  const auto a = build_from_triplets<double, test::csr_policy, keep_max>(test::world(), 9, 9, mine,
                                                                         build_options<test::csr_policy, keep_max>{});
  const auto reference = host_csr<double>::from_triplets(9, 9, all_triplets(mine),
                                                         [](double x, double y) { return std::max(x, y); });
  test::require_equal(a, reference);
}

TEST_CASE("duplicates fold in rank order, each rank's in its own order, its own entries included") {
  // combine::any keeps the first: the order assembly sees must be rank 0's entries, then rank 1's,
  // ..., wherever the entries were held; each rank's own entries skip the buckets (route.hpp).
  // Spread entries (most go elsewhere) and entries mostly in the rank's own rows (most stay: the
  // path that skips the buckets), both with duplicates within and across ranks.
  const auto& comm = test::world();
  const global_index rows = 4 * comm.size(), cols = 3;
  const row_block::mapping split(comm.size(), rows, cols);
  for (unsigned seed : {21u, 22u, 23u})
    for (bool mostly_own : {false, true}) {
      auto mine = random_triplets<double>(rows, cols, 60, seed);
      for (std::size_t k = 0; k < mine.size(); ++k) {
        if (mostly_own && k % 8 != 0)
          mine.rows[k] = split.row_begin(comm.rank()) + mine.rows[k] % (split.row_end(comm.rank()) - split.row_begin(comm.rank()));
        mine.values[k] = 1000.0 * comm.rank() + static_cast<double>(k);
      }
      const auto a = build_from_triplets<double, test::csr_policy, combine::any>(
          comm, rows, cols, mine, build_options<test::csr_policy, combine::any>{});
      const auto reference =
          host_csr<double>::from_triplets(rows, cols, all_triplets(mine), [](double x, double) { return x; });
      test::require_equal(a, reference);
    }
}

TEST_CASE("rows balanced by nonzeros combine duplicates sent from every rank once") {
  const auto& comm = test::world();
  // Row i holds i + 1 entries (unbalanced under an even split), and every rank also sends
  // (i, 0) for every row: duplicates from P ranks that the rebalanced build must sum once.
  triplets<double> mine;
  const global_index n = 30;
  for (global_index i = comm.rank(); i < n; i += comm.size())
    for (global_index j = 1; j <= i; ++j) mine.push_back(i, j, 0.5 * static_cast<double>(j));
  for (global_index i = 0; i < n; ++i) mine.push_back(i, 0, 1.0 + static_cast<double>(comm.rank()));
  const auto a = build_from_triplets<double, test::csr_policy>(
      comm, n, n, mine, {.distribution = row_block{row_block::balance::nonzeros}});
  test::require_equal(a, host_csr<double>::from_triplets(n, n, all_triplets(mine)));
  CHECK(a.global_nnz() == n * (n + 1) / 2);
}

TEST_CASE("rows balanced by nonzeros give every rank about nnz / P entries") {
  const auto& comm = test::world();
  // Row i holds i + 1 entries: an even row split is badly unbalanced.
  triplets<double> mine;
  const global_index n = 40;
  for (global_index i = comm.rank(); i < n; i += comm.size())
    for (global_index j = 0; j <= i; ++j) mine.push_back(i, j, 1.0);
  const auto a = build_from_triplets<double, test::csr_policy>(
      comm, n, n, mine, {.distribution = row_block{row_block::balance::nonzeros}});
  test::require_equal(a, host_csr<double>::from_triplets(n, n, all_triplets(mine)));
  const offset_type total = n * (n + 1) / 2;
  const offset_type heaviest = comm.max(a.local_nnz());
  // Whole rows move, so a rank may exceed the ideal share by at most one row (n entries).
  CHECK(heaviest <= total / comm.size() + n);
  if (comm.size() > 1) {
    const auto even = build_from_triplets<double, test::csr_policy>(comm, n, n, mine);
    CHECK(heaviest < comm.max(even.local_nnz()));
  }
}

TEST_CASE("redistribute moves a matrix onto another row split and back") {
  const auto& comm = test::world();
  const auto a = build_from_triplets<double, test::csr_policy>(comm, 17, 11, random_triplets<double>(17, 11, 25, 11));
  std::vector<global_index> offsets(static_cast<std::size_t>(comm.size()) + 1, 17);
  offsets[0] = 0;  // everything on the last rank
  for (int r = 1; r < comm.size(); ++r) offsets[static_cast<std::size_t>(r)] = 0;
  const row_block::mapping on_last(offsets, 11);
  const auto moved = redistribute(a, on_last);
  CHECK(moved.local_nnz() == (comm.rank() == comm.size() - 1 ? a.global_nnz() : 0));
  CHECK(compare(moved, a).equal);
  const auto back = redistribute(moved, a.mapping());
  CHECK(back.local_nnz() == a.local_nnz());
  CHECK(compare(back, a).equal);
  CHECK_THROWS_AS(((void)redistribute(a, row_block::mapping(comm.size(), 17, 12))), error);
}

TEST_CASE("traffic: entries already on their owner send no payload") {
  const auto& comm = test::world();
  const int p = comm.size();
  const row_block::mapping m(p, 4 * static_cast<global_index>(p), 4 * static_cast<global_index>(p));
  triplets<double> mine;
  for (global_index i = m.row_begin(comm.rank()); i < m.row_end(comm.rank()); ++i) mine.push_back(i, i, 1.0);
  comm.stats().reset();
  (void)build_from_triplets<double, test::csr_policy>(comm, m.global_rows(), m.global_cols(), mine);
  // Only the size exchange: P-1 messages of 8 bytes.
  CHECK(comm.stats().of("build") == traffic{static_cast<std::uint64_t>(p - 1), 8u * static_cast<std::uint64_t>(p - 1)});
}

TEST_CASE("traffic: one entry to every other rank is one message each") {
  const auto& comm = test::world();
  const int p = comm.size();
  const row_block::mapping m(p, static_cast<global_index>(p), 1);
  triplets<double> mine;
  for (int r = 0; r < p; ++r)
    if (r != comm.rank()) mine.push_back(m.row_begin(r), 0, 1.0);
  comm.stats().reset();
  const auto a = build_from_triplets<double, test::csr_policy>(comm, p, 1, mine);
  const auto others = static_cast<std::uint64_t>(p - 1);
  const std::uint64_t record = 2 * sizeof(global_index) + sizeof(double);
  CHECK(comm.stats().of("build") == traffic{2 * others, 8 * others + record * others});
  CHECK(a.local_nnz() == (p > 1 ? 1 : 0));
  const auto summary = reduce_traffic(comm, "build");
  CHECK(summary.total.messages == 2 * others * static_cast<std::uint64_t>(p));
}

}  // namespace build_tests
