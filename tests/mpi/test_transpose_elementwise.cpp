// transpose (both algorithms) and the element-wise operations against serial references.
#include "test_support.hpp"

#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace transpose_elementwise_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {


template <class P>
std::vector<dist_matrix<double, P>> inputs(const communicator& comm) {
  std::vector<dist_matrix<double, P>> all;
  all.push_back(generate::uniform_random<double, P>(comm, 37, 23, 4, 5));  // rectangular
  all.push_back(generate::uniform_random<double, P>(comm, 6, 41, 5, 7));   // wide
  all.push_back(generate::rmat<double, P>(comm, 7, 8, 3));                 // power law, empty rows and columns
  all.push_back(generate::laplacian_2d<double, P>(comm, 7));
  all.push_back(generate::uniform_random<double, P>(comm, 3, 2, 2, 1));    // fewer rows than ranks
  all.push_back(generate::uniform_random<double, P>(comm, 0, 5, 0, 1));    // no rows
  all.push_back(generate::uniform_random<double, P>(comm, 9, 9, 0, 1));    // no entries
  return all;
}

// prune's predicate, callable in every execution space: a functor at namespace scope (a kernel's
// template arguments cannot name a type local to a function on CUDA).
struct below_half {
  KOKKOS_INLINE_FUNCTION bool operator()(const double v) const { return v < 0.5; }
};

// Every value doubled: A + A.
host_csr<double> doubled_values(host_csr<double> m) {
  for (auto& v : m.values) v *= 2.0;
  return m;
}

}  // namespace

TEST_CASE_TEMPLATE("transpose by routing and by slots equals the serial transpose", P,
                   policy<row_block, csr, mpi_rma>, policy<row_block, csr, aggregator>,
                   policy<row_block, coo, aggregator>) {
  const auto& comm = test::world();
  for (const auto& a : inputs<P>(comm)) {
    const auto reference = test::transposed(gather_to_all(a));
    for (auto algorithm : {transpose_algorithm::route, transpose_algorithm::slots}) {
      INFO("algorithm " << static_cast<int>(algorithm) << ", A " << a.num_rows() << " x " << a.num_cols());
      const auto at = transpose(a, algorithm);
      CHECK(at.num_rows() == a.num_cols());
      CHECK(at.num_cols() == a.num_rows());
      CHECK(at.global_nnz() == a.global_nnz());
      test::require_equal(at, reference);
      test::require_equal(transpose(at, algorithm), gather_to_all(a));
    }
    // Without an algorithm: the routed transpose, compiled alone.
    const auto routed = transpose(a);
    test::require_equal(routed, reference);
    test::require_equal(transpose(routed), gather_to_all(a));
  }
}

TEST_CASE("transpose by slots on progress ranks" * doctest::skip(!test::progress_ranks_requested())) {
  using P = policy<row_block, csr, progress_rank>;
  for (const auto& a : inputs<P>(test::world())) test::require_equal(transpose(a, transpose_algorithm::slots), test::transposed(gather_to_all(a)));
}

TEST_CASE("transpose by routing moves each off-rank entry once") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, P>(comm, 40, 40, 5, 11);
  comm.stats().reset();
  (void)transpose(a);
  // Sizes by Alltoall (P-1 messages of 8 bytes) plus each off-rank entry once (16 + 8 bytes a record).
  const row_block::mapping columns(comm.size(), 40, 40);
  std::uint64_t leaving = 0;
  const auto t = local_triplets(a);
  for (std::size_t k = 0; k < t.size(); ++k) leaving += columns.row_owner(t.cols[k]) != comm.rank() ? 1 : 0;
  CHECK(comm.stats().of("transpose").bytes == 8 * static_cast<std::uint64_t>(comm.size() - 1) + 24 * leaving);
}

TEST_CASE_TEMPLATE("transpose of a block-diagonal matrix moves no entries", P, policy<row_block, csr, mpi_rma>,
                   policy<row_block, coo, aggregator>) {
  const auto& comm = test::world();
  const global_index n = 8 * comm.size();
  const row_block::mapping blocks(comm.size(), n, n);
  const global_index begin = blocks.row_begin(comm.rank()), end = blocks.row_end(comm.rank());
  triplets<double> mine;  // each row's columns pushed in descending order
  for (global_index i = end - 1; i >= begin; --i)
    for (global_index j = end - 1; j >= begin; --j)
      if ((i + 2 * j) % 3 != 0) mine.push_back(i, j, static_cast<double>(100 * i + j + 1));
  const auto a = build_from_triplets<double, P>(comm, n, n, mine);
  comm.stats().reset();
  const auto at = transpose(a);
  // Only the sizes travel (Alltoall, P-1 messages of 8 bytes).
  CHECK(comm.stats().of("transpose").bytes == 8 * static_cast<std::uint64_t>(comm.size() - 1));
  test::require_equal(at, test::transposed(gather_to_all(a)));
  test::require_equal(transpose(at), gather_to_all(a));
}

// csr and csc merge, fold and reduce in the execution space; coo takes the triplet paths.
TEST_CASE_TEMPLATE("scale, apply, prune, add and the reductions", P, policy<row_block, csr, mpi_rma>,
                   policy<row_block, csc, aggregator>, policy<row_block, coo, mpi_rma>) {
  const auto& comm = test::world();
  for (const auto& a : inputs<P>(comm)) {
    const auto ref = gather_to_all(a);
    auto mapped = [&](auto f) {
      host_csr<double> r = ref;
      for (auto& v : r.values) v = f(v);
      return r;
    };
    test::require_equal(scale(a, 2.5), mapped([](double v) { return 2.5 * v; }));
    // A device compiler contracts v * v - 1.0 into one fused multiply-add (one rounding, not two):
    // the one result here that legitimately differs by an ulp between spaces.
    test::require_equal(apply(a, KOKKOS_LAMBDA(const double v) { return v * v - 1.0; }),
                        mapped([](double v) { return v * v - 1.0; }), 1e-15);

    const auto pruned = prune(a, below_half{});
    triplets<double> kept;
    for (global_index i = 0; i < ref.rows; ++i)
      for (offset_type e = ref.row_ptr[static_cast<std::size_t>(i)]; e < ref.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
        if (!(ref.values[static_cast<std::size_t>(e)] < 0.5))
          kept.push_back(i, ref.col_idx[static_cast<std::size_t>(e)], ref.values[static_cast<std::size_t>(e)]);
    test::require_equal(pruned, host_csr<double>::from_triplets(ref.rows, ref.cols, kept));
    CHECK(pruned.mapping().row_offsets() == a.mapping().row_offsets());
    // The column map lists exactly the columns the kept entries of this rank use, ascending.
    {
      std::set<global_index> used;
      for (const auto c : local_triplets(pruned).cols) used.insert(c);
      const auto map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, pruned.col_map());
      CHECK(std::vector<global_index>(map.data(), map.data() + map.extent(0)) ==
            std::vector<global_index>(used.begin(), used.end()));
    }
    // A predicate of the execution space; nothing dropped keeps every entry and column.
    comm.stats().reset();
    const auto all_kept = prune(a, KOKKOS_LAMBDA(const double v) { return v != v; });
    CHECK(comm.stats().total() == traffic{});
    test::require_equal(all_kept, ref);
    CHECK(all_kept.col_map().extent(0) == a.col_map().extent(0));
    const auto none_kept = prune(a, KOKKOS_LAMBDA(const double) { return true; });
    CHECK(none_kept.global_nnz() == 0);
    CHECK(none_kept.col_map().extent(0) == 0);

    if constexpr (std::same_as<typename P::storage_type, csr>) {
      // The fused form: f applied and its zeros dropped in one pass, as SpDNN's activation does.
      const auto fused = apply_drop_zeros(a, KOKKOS_LAMBDA(const double v) { return v < 0.5 ? 0.0 : 2.0 * v; });
      triplets<double> doubled = kept;
      for (auto& v : doubled.values) v *= 2.0;
      test::require_equal(fused, host_csr<double>::from_triplets(ref.rows, ref.cols, doubled));
      CHECK(fused.global_nnz() == pruned.global_nnz());
    }

    // A + 2A (same structure) and A + pruned(A) (a subset): sums where both store an entry.
    test::require_equal(add(a, scale(a, 2.0)), mapped([](double v) { return 3.0 * v; }));
    triplets<double> both;
    for (global_index i = 0; i < ref.rows; ++i)
      for (offset_type e = ref.row_ptr[static_cast<std::size_t>(i)]; e < ref.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
        both.push_back(i, ref.col_idx[static_cast<std::size_t>(e)], ref.values[static_cast<std::size_t>(e)]);
    for (std::size_t k = 0; k < kept.size(); ++k) both.push_back(kept.rows[k], kept.cols[k], kept.values[k]);
    test::require_equal(add(a, pruned), host_csr<double>::from_triplets(ref.rows, ref.cols, both), 1e-14);

    // B with columns A lacks and A with columns B lacks, in both orders; a combine that is not
    // symmetric (combine::any keeps the left operand's value). With csr storage no entry moves.
    const auto other = generate::uniform_random<double, P>(comm, a.num_rows(), a.num_cols(), 3, 17);
    const auto ref_other = gather_to_all(other);
    std::map<std::pair<global_index, global_index>, double> first_wins, summed;
    for (const auto* m : {&ref_other, &ref})
      for (global_index i = 0; i < m->rows; ++i)
        for (auto e = m->row_ptr[static_cast<std::size_t>(i)]; e < m->row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
          const auto at = std::make_pair(i, m->col_idx[static_cast<std::size_t>(e)]);
          const double v = m->values[static_cast<std::size_t>(e)];
          first_wins.try_emplace(at, v);
          summed[at] += v;
        }
    auto as_matrix = [&](const std::map<std::pair<global_index, global_index>, double>& entries) {
      triplets<double> t;
      for (const auto& [at, v] : entries) t.push_back(at.first, at.second, v);
      return host_csr<double>::from_triplets(ref.rows, ref.cols, t);
    };
    comm.stats().reset();
    const auto other_first = add(other, a, combine::any{});
    if constexpr (std::same_as<typename P::storage_type, csr>) CHECK(comm.stats().total() == traffic{});
    test::require_equal(other_first, as_matrix(first_wins));
    CHECK(other_first.global_nnz() == static_cast<offset_type>(first_wins.size()));
    test::require_equal(add(a, other), as_matrix(summed), 1e-14);
    test::require_equal(add(other, other), doubled_values(ref_other));

    // Row sums, row maxima and column maxima against the gathered matrix.
    const auto row_maxima = reduce_rows(a, combine::max{});
    auto host_row_maxima = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, row_maxima.local());
    for (std::size_t i = 0; i < host_row_maxima.extent(0); ++i) {
      const auto g = static_cast<std::size_t>(row_maxima.row_begin()) + i;
      double expected = 0;
      for (offset_type e = ref.row_ptr[g]; e < ref.row_ptr[g + 1]; ++e)
        expected = e == ref.row_ptr[g] ? ref.values[static_cast<std::size_t>(e)]
                                       : std::max(expected, ref.values[static_cast<std::size_t>(e)]);
      CHECK(host_row_maxima(i, 0) == expected);
    }
    const auto sums = reduce_rows(a);
    auto host_sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sums.local());
    for (std::size_t i = 0; i < host_sums.extent(0); ++i) {
      const auto g = static_cast<std::size_t>(sums.row_begin()) + i;
      double expected = 0;
      for (offset_type e = ref.row_ptr[g]; e < ref.row_ptr[g + 1]; ++e) expected += ref.values[static_cast<std::size_t>(e)];
      CHECK(std::abs(host_sums(i, 0) - expected) <= 1e-12 * (1 + std::abs(expected)));
    }
    const auto maxima = reduce_columns(a, combine::max{});
    CHECK(maxima.num_rows() == a.num_cols());
    std::vector<double> expected(static_cast<std::size_t>(ref.cols), 0.0);
    std::vector<bool> seen(static_cast<std::size_t>(ref.cols), false);
    for (std::size_t e = 0; e < ref.values.size(); ++e) {
      const auto c = static_cast<std::size_t>(ref.col_idx[e]);
      expected[c] = seen[c] ? std::max(expected[c], ref.values[e]) : ref.values[e];
      seen[c] = true;
    }
    auto host_max = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, maxima.local());
    for (std::size_t i = 0; i < host_max.extent(0); ++i)
      CHECK(host_max(i, 0) == expected[static_cast<std::size_t>(maxima.row_begin()) + i]);
    // Column sums: each rank's partial sums, added at the owner in rank order.
    const auto column_sums = reduce_columns(a);
    std::vector<double> sums_expected(static_cast<std::size_t>(ref.cols), 0.0);
    for (std::size_t e = 0; e < ref.values.size(); ++e) sums_expected[static_cast<std::size_t>(ref.col_idx[e])] += ref.values[e];
    auto host_column_sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, column_sums.local());
    for (std::size_t i = 0; i < host_column_sums.extent(0); ++i) {
      const double want = sums_expected[static_cast<std::size_t>(column_sums.row_begin()) + i];
      CHECK(std::abs(host_column_sums(i, 0) - want) <= 1e-12 * (1 + std::abs(want)));
    }
  }
}

TEST_CASE("add rejects different shapes on every rank") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, P>(comm, 10, 12, 3, 2);
  const auto b = generate::uniform_random<double, P>(comm, 10, 13, 3, 2);
  try {
    (void)add(a, b);
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::dimension_mismatch);
  }
}

TEST_CASE_TEMPLATE("transpose_algorithm::planned: the first call plans, later calls move values only", P,
                   policy<row_block, csr, mpi_rma>, policy<row_block, coo, aggregator>) {
  const auto& comm = test::world();
  for (const auto& a : inputs<P>(comm)) {
    const auto reference = test::transposed(gather_to_all(a));
    test::require_equal(transpose(a, transpose_algorithm::planned), reference);
    CHECK(a.plan_cache().size() == 1);
    // The same structure with new values (scale shares A's structure arrays): the kept plan moves
    // 8 bytes per value that leaves its rank, and no sizes.
    const auto doubled = scale(a, 2.0);
    comm.stats().reset();
    const auto at = transpose(doubled, transpose_algorithm::planned);
    const auto moved = transpose_plan_for(a).values_moved();
    CHECK(comm.stats().of("transpose").bytes == 8 * moved);
    test::require_equal(at, test::transposed(gather_to_all(doubled)));
    CHECK(doubled.plan_cache().size() == 1);  // a matrix with A's structure and other values shares A's plans
    // Another structure: a plan of its own, results still right.
    const auto other = generate::uniform_random<double, P>(comm, a.num_rows(), a.num_cols(), 2, 99);
    test::require_equal(transpose(other, transpose_algorithm::planned), test::transposed(gather_to_all(other)));
  }
}

}  // namespace transpose_elementwise_tests
