// reorder: P A P^T with each rank's rows renumbered by an ordering of its diagonal block, against
// a serial reference; permute_rows / restore_rows; the orderings themselves.
#include "test_support.hpp"

#include <tessera/matrix/redistribute.hpp>
#include <tessera/ops/reorder.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace reorder_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;
using policy_type = test::csr_policy;

// Every rank's (old global row, new global row) pairs, on every rank: P as a global table.
template <class Policy>
std::vector<global_index> global_permutation(const communicator& comm, const row_permutation<Policy>& p) {
  std::vector<global_index> mine;
  const auto& rows = p.mapping();
  for (std::size_t i = 0; i < p.new_global_rows().size(); ++i) {
    mine.push_back(rows.to_global(comm.rank(), static_cast<global_index>(i), 0).row);
    mine.push_back(p.new_global_row(static_cast<local_index>(i)));
  }
  const auto pairs = comm.allgather_concatenated(mine);
  std::vector<global_index> new_of_old(static_cast<std::size_t>(rows.global_rows()), -1);
  for (std::size_t k = 0; k < pairs.size(); k += 2) new_of_old[static_cast<std::size_t>(pairs[k])] = pairs[k + 1];
  return new_of_old;
}

// The serial reference: P A P^T from the whole of A and the whole of P.
host_csr<double> permuted_reference(const host_csr<double>& a, const std::vector<global_index>& new_of_old) {
  triplets<double> t;
  for (global_index i = 0; i < a.rows; ++i)
    for (auto k = a.row_ptr[static_cast<std::size_t>(i)]; k < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++k)
      t.push_back(new_of_old[static_cast<std::size_t>(i)], new_of_old[static_cast<std::size_t>(a.col_idx[static_cast<std::size_t>(k)])],
                  a.values[static_cast<std::size_t>(k)]);
  return host_csr<double>::from_triplets(a.rows, a.cols, t);
}

// A path graph 0 - 1 - ... - n-1 (a 1-D Laplacian) with its vertices relabelled at random (the
// same labels on every rank): bandwidth about n, and 1 again after reverse Cuthill-McKee.
dist_matrix<double, policy_type> scrambled_path(const communicator& comm, global_index n, unsigned seed) {
  std::vector<global_index> label(static_cast<std::size_t>(n));
  std::iota(label.begin(), label.end(), global_index{0});
  std::shuffle(label.begin(), label.end(), std::mt19937_64(seed));
  triplets<double> t;
  if (comm.rank() == 0)
    for (global_index i = 0; i < n; ++i) {
      const auto li = label[static_cast<std::size_t>(i)];
      t.push_back(li, li, 2.0 + static_cast<double>(i % 5));
      if (i + 1 < n) {
        const auto lj = label[static_cast<std::size_t>(i) + 1];
        t.push_back(li, lj, -1.0 - static_cast<double>(i % 3));
        t.push_back(lj, li, -1.5);
      }
    }
  return build_from_triplets<double, policy_type>(comm, n, n, t);
}

TEST_CASE("reverse Cuthill-McKee gives a scrambled path bandwidth 1; by_degree puts hubs first") {
  // The kernels alone, on one rank's graph.
  const std::vector<local_index> from{4, 0, 2, 3, 5}, to{0, 2, 3, 1, 1};  // path 4-0-2-3-1-5, plus nothing
  const auto g = kernels::symmetric_graph_of(7, from, to);                // vertex 6 is isolated
  CHECK(g.degree(4) == 1);
  CHECK(g.degree(0) == 2);
  CHECK(g.degree(6) == 0);
  const auto order = kernels::reverse_cuthill_mckee(g);
  REQUIRE(order.size() == 7);
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (local_index v = 0; v < 7; ++v) CHECK(sorted[static_cast<std::size_t>(v)] == v);
  const auto position = kernels::positions_of(order);
  for (std::size_t e = 0; e < from.size(); ++e)
    CHECK(std::abs(position[static_cast<std::size_t>(from[e])] - position[static_cast<std::size_t>(to[e])]) == 1);
  CHECK(position[6] == 6);  // a component of its own, reversed to the end
  // A star with its centre at 3 and a tail: the centre first, then the degree-2 vertex.
  const std::vector<local_index> s_from{3, 3, 3, 3, 0}, s_to{0, 1, 2, 4, 5};
  const auto star = kernels::symmetric_graph_of(6, s_from, s_to);
  const auto hubs = kernels::by_decreasing_degree(star);
  CHECK(hubs[0] == 3);
  CHECK(hubs[1] == 0);
  for (std::size_t k = 1; k < hubs.size(); ++k)
    CHECK(star.degree(static_cast<std::size_t>(hubs[k - 1])) >= star.degree(static_cast<std::size_t>(hubs[k])));
  // Repeated and self edges count once and not at all.
  const std::vector<local_index> r_from{0, 1, 0, 2}, r_to{1, 0, 1, 2};
  const auto repeated = kernels::symmetric_graph_of(3, r_from, r_to);
  CHECK(repeated.degree(0) == 1);
  CHECK(repeated.degree(1) == 1);
  CHECK(repeated.degree(2) == 0);
}

TEST_CASE("reorder is P A P^T with P within each rank, for every ordering, on random and structured inputs") {
  const auto& comm = test::world();
  struct input {
    const char* name;
    dist_matrix<double, policy_type> a;
  };
  std::vector<input> inputs;
  inputs.push_back({"uniform random 37", generate::uniform_random<double, policy_type>(comm, 37, 37, 5, 3)});
  inputs.push_back({"R-MAT 7", generate::rmat<double, policy_type>(comm, 7, 8, 5)});
  inputs.push_back({"Laplacian 6x6", generate::laplacian_2d<double, policy_type>(comm, 6)});
  inputs.push_back({"scrambled path 50", scrambled_path(comm, 50, 11)});
  {
    // Empty rows (every third) and a row split balanced by nonzeros.
    triplets<double> t;
    if (comm.rank() == comm.size() - 1)
      for (global_index i = 0; i < 20; ++i)
        if (i % 3 != 0)
          for (global_index j : {i, (i * 7) % 20, (i + 5) % 20}) t.push_back(i, j, 1.0 + static_cast<double>(i + j));
    inputs.push_back({"empty rows, duplicates", build_from_triplets<double, policy_type>(
                                                    comm, 20, 20, t, {.distribution = row_block{row_block::balance::nonzeros}})});
  }
  inputs.push_back({"fewer rows than ranks", generate::uniform_random<double, policy_type>(comm, 2, 2, 2, 9)});
  inputs.push_back({"empty", generate::uniform_random<double, policy_type>(comm, 0, 0, 2, 9)});
  // Within ranks; over the whole matrix, rows split as A's; and split anew by nonzeros.
  enum class variant { within_ranks, whole_matrix, whole_matrix_by_nonzeros };
  for (const auto& [name, a] : inputs)
  for (const auto how : {variant::within_ranks, variant::whole_matrix, variant::whole_matrix_by_nonzeros}) {
    const auto scope = how == variant::within_ranks ? reorder_scope::within_ranks : reorder_scope::whole_matrix;
    for (const auto ordering : {row_ordering::natural, row_ordering::reverse_cuthill_mckee, row_ordering::by_degree}) {
      CAPTURE(name);
      CAPTURE(to_string(ordering));
      CAPTURE(static_cast<int>(how));
      const auto [ap, p] = how == variant::whole_matrix_by_nonzeros
                               ? reorder(a, ordering, scope, row_block{row_block::balance::nonzeros})
                               : reorder(a, ordering, scope);
      CHECK(p.mapping() == a.mapping());
      CHECK(ap.mapping() == p.new_mapping());
      if (how != variant::whole_matrix_by_nonzeros) {
        CHECK(ap.mapping() == a.mapping());  // the same row split
      } else {
        // Every rank's entries within one row of an equal share (the split's rule: a boundary
        // after the first row that reaches k / P of them).
        const auto local = static_cast<global_index>(ap.local().nnz());
        const global_index total = comm.sum(local);
        global_index longest = 0;
        for (const auto c : local_row_counts(ap)) longest = std::max<global_index>(longest, c);
        longest = comm.max(longest);
        CHECK(local <= (total + comm.size() - 1) / comm.size() + longest);
        CHECK(ap.mapping().global_rows() == a.num_rows());
      }
      CHECK(ap.global_nnz() == a.global_nnz());
      CHECK(p.within_ranks() == (scope == reorder_scope::within_ranks));
      const auto new_of_old = global_permutation(comm, p);
      // A permutation of the rows; within ranks, one that keeps each row on its rank.
      std::vector<char> seen(new_of_old.size(), 0);
      for (std::size_t i = 0; i < new_of_old.size(); ++i) {
        REQUIRE(new_of_old[i] >= 0);
        CHECK_FALSE(seen[static_cast<std::size_t>(new_of_old[i])]);
        seen[static_cast<std::size_t>(new_of_old[i])] = 1;
        if (p.within_ranks())
          CHECK(a.mapping().row_owner(new_of_old[i]) == a.mapping().row_owner(static_cast<global_index>(i)));
      }
      if (ordering == row_ordering::natural)
        for (std::size_t i = 0; i < new_of_old.size(); ++i) CHECK(new_of_old[i] == static_cast<global_index>(i));
      const auto whole = gather_to_all(a);
      const auto check = compare(ap, permuted_reference(whole, new_of_old));
      CHECK_MESSAGE(check.equal, check.difference);
      // Y = A X through the new numbering: restore_rows(Ap (P X), P) = A X.
      for (global_index k : {1, 5}) {
        dist_dense<double, policy_type> x(comm, a.mapping(), k);
        x.fill([](global_index i, global_index j) { return 1.0 + static_cast<double>((3 * i + 7 * j) % 13); });
        const auto y = spmm(a, x);
        const auto px = permute_rows(x, p);
        CHECK(same_rows(px.mapping(), p.new_mapping()));
        const auto back = restore_rows(px, p);
        const auto all_x = x.gather_to_root(), all_back = back.gather_to_root();
        if (comm.rank() == 0) CHECK(*all_x == *all_back);
        const auto y_restored = restore_rows(spmm(ap, px), p);
        const auto expected = y.gather_to_root(), got = y_restored.gather_to_root();
        if (comm.rank() == 0) {
          REQUIRE(expected->size() == got->size());
          for (std::size_t e = 0; e < got->size(); ++e)
            CHECK((*got)[e] == doctest::Approx((*expected)[e]).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("reorder composes with other storages and backends") {
  const auto& comm = test::world();
  using csc_aggregated = policy<row_block, csc, aggregator>;
  const auto a = generate::rmat<double, csc_aggregated>(comm, 6, 6, 3);
  const auto [ap, p] = reorder(a, row_ordering::by_degree);
  const auto check = compare(ap, permuted_reference(gather_to_all(a), global_permutation(comm, p)));
  CHECK_MESSAGE(check.equal, check.difference);
}

TEST_CASE("reverse Cuthill-McKee brings each rank's block of a scrambled path back to a band") {
  const auto& comm = test::world();
  const auto a = scrambled_path(comm, 200, 5);
  const auto [ap, p] = reorder(a, row_ordering::reverse_cuthill_mckee);
  const auto local = local_triplets(ap);
  std::size_t within_rank = 0;
  for (std::size_t e = 0; e < local.size(); ++e) {
    if (ap.mapping().row_owner(local.cols[e]) != comm.rank()) continue;
    ++within_rank;
    CHECK(std::abs(local.rows[e] - local.cols[e]) <= 1);
  }
  CHECK(comm.sum(static_cast<global_index>(within_rank)) > 0);
  // A path numbered along itself already has bandwidth 1: reverse Cuthill-McKee keeps its order.
  triplets<double> t;
  if (comm.rank() == 0)
    for (global_index i = 0; i < 40; ++i) {
      t.push_back(i, i, 2.0);
      if (i + 1 < 40) t.push_back(i, i + 1, -1.0);
    }
  const auto banded = build_from_triplets<double, policy_type>(comm, 40, 40, t);
  const auto kept = reorder(banded, row_ordering::reverse_cuthill_mckee);
  for (std::size_t i = 0; i < kept.permutation.new_of_old().size(); ++i)
    CHECK(kept.permutation.new_of_old()[i] == static_cast<local_index>(i));
  const std::vector<local_index> identity{0, 1, 2}, reversed{2, 1, 0};
  const auto path = kernels::symmetric_graph_of(3, std::vector<local_index>{0, 1}, std::vector<local_index>{1, 2});
  CHECK(kernels::bandwidth_under(path, identity) == 1);
  CHECK(kernels::bandwidth_under(path, std::vector<local_index>{0, 2, 1}) == 2);
  CHECK(kernels::bandwidth_under(path, reversed) == 1);
  // The same matrix unordered had far wider rows (the check can fail: it is not a tautology).
  if (comm.size() == 1) {
    const auto before = local_triplets(a);
    global_index widest = 0;
    for (std::size_t e = 0; e < before.size(); ++e) widest = std::max(widest, std::abs(before.rows[e] - before.cols[e]));
    CHECK(widest > 10);
  }
}

TEST_CASE("over the whole matrix, reverse Cuthill-McKee gives a scrambled path a band and a thin halo") {
  const auto& comm = test::world();
  const auto a = scrambled_path(comm, 200, 5);
  const auto [ap, p] = reorder(a, row_ordering::reverse_cuthill_mckee, reorder_scope::whole_matrix);
  const auto local = local_triplets(ap);
  for (std::size_t e = 0; e < local.size(); ++e) CHECK(std::abs(local.rows[e] - local.cols[e]) <= 1);
  // SpMM's halo: at most a row from each neighbouring rank, against most of them before.
  dist_dense<double, policy_type> x(comm, ap.mapping(), 4);
  const auto halo = comm.max(static_cast<global_index>(spmm_plan_for(ap, x).halo_rows()));
  CHECK(halo <= 2);
  if (comm.size() > 1) CHECK(comm.max(static_cast<global_index>(spmm_plan_for(a, x).halo_rows())) > 20);
  // X through the new numbering and back, across ranks.
  x.fill([](global_index i, global_index j) { return static_cast<double>(10 * i + j); });
  const auto moved = permute_rows(x, p);
  const auto local_moved = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, moved.local());
  for (std::size_t i = 0; i < local_moved.extent(0); ++i) {
    const global_index new_row = moved.global_row(static_cast<global_index>(i));
    const global_index old_row = p.old_global_rows()[i];
    CHECK(ap.mapping().row_owner(new_row) == comm.rank());
    for (std::size_t j = 0; j < 4; ++j) CHECK(local_moved(i, j) == static_cast<double>(10 * old_row + static_cast<global_index>(j)));
  }
  const auto back = restore_rows(moved, p);
  const auto all_x = x.gather_to_root(), all_back = back.gather_to_root();
  if (comm.rank() == 0) CHECK(*all_x == *all_back);
}

TEST_CASE("reorder refuses non-square matrices and bad permutations on every rank") {
  const auto& comm = test::world();
  const auto rectangular = generate::uniform_random<double, policy_type>(comm, 6, 9, 2, 1);
  CHECK_THROWS_WITH_AS((void)reorder(rectangular, row_ordering::by_degree),
                       doctest::Contains("reorder: A is 6 x 9; renumbering rows and columns alike needs a square matrix"),
                       error);
  const auto a = generate::uniform_random<double, policy_type>(comm, 10, 10, 3, 2);
  const auto n = static_cast<std::size_t>(a.local_rows());
  // Only the last rank gives a repeated number: every rank throws.
  std::vector<local_index> numbers(n);
  std::iota(numbers.begin(), numbers.end(), local_index{0});
  if (comm.rank() == comm.size() - 1 && n >= 2) numbers[1] = 0;
  const bool last_has_two = comm.max(comm.rank() == comm.size() - 1 && n >= 2 ? 1 : 0) == 1;
  if (last_has_two)
    CHECK_THROWS_WITH_AS((row_permutation<policy_type>(comm, a.mapping(), numbers)),
                         doctest::Contains("gives two of its rows the number 0"), error);
  std::vector<local_index> too_few(n > 0 ? n - 1 : 0);
  std::iota(too_few.begin(), too_few.end(), local_index{0});
  const bool someone_has_rows = comm.max(n > 0 ? 1 : 0) == 1;
  if (someone_has_rows)
    CHECK_THROWS_WITH_AS((row_permutation<policy_type>(comm, a.mapping(), n > 0 ? too_few : std::vector<local_index>{})),
                         doctest::Contains("new numbers were given"), error);
  // Across ranks: every rank numbers its rows from 0, so global row 0 is given more than once.
  std::vector<global_index> clash(n);
  std::iota(clash.begin(), clash.end(), global_index{0});
  if (comm.size() > 1)
    CHECK_THROWS_WITH_AS((void)row_permutation<policy_type>::of_global_rows(comm, a.mapping(), clash),
                         doctest::Contains("is given to two rows"), error);
  std::vector<global_index> outside(n, 10);
  if (someone_has_rows)
    CHECK_THROWS_WITH_AS((void)row_permutation<policy_type>::of_global_rows(comm, a.mapping(), outside),
                         doctest::Contains("outside [0, 10)"), error);
  // A block split otherwise than the permutation's rows.
  const auto [ap, p] = reorder(a, row_ordering::natural);
  dist_dense<double, policy_type> other(comm, 11, 2);
  CHECK_THROWS_WITH_AS((void)permute_rows(other, p), doctest::Contains("permute_rows: the block's 11 rows"), error);
  // A split for the renumbered rows asked within ranks, and one of another size.
  CHECK_THROWS_WITH_AS((void)reorder(a, row_ordering::by_degree, reorder_scope::within_ranks,
                                     row_block{row_block::balance::nonzeros}),
                       doctest::Contains("needs reorder_scope::whole_matrix"), error);
  std::vector<global_index> same(n);
  for (std::size_t i = 0; i < n; ++i) same[i] = a.mapping().to_global(comm.rank(), static_cast<global_index>(i), 0).row;
  CHECK_THROWS_WITH_AS((void)row_permutation<policy_type>::of_global_rows(comm, a.mapping(), same,
                                                                          row_block{}.make_mapping(comm.size(), 12, 12)),
                       doctest::Contains("the split after is of 12 rows"), error);
  // Y in the new numbering must be split as the rows are after: with a split of its own, A's split
  // is refused where it differs.
  const auto [bp, q] = reorder(generate::rmat<double, policy_type>(comm, 6, 8, 3), row_ordering::by_degree,
                               reorder_scope::whole_matrix, row_block{row_block::balance::nonzeros});
  if (comm.size() > 1 && !(q.new_mapping() == q.mapping())) {
    dist_dense<double, policy_type> y_old_split(comm, q.mapping(), 2);
    CHECK_THROWS_WITH_AS((void)restore_rows(y_old_split, q), doctest::Contains("restore_rows: the block's 64 rows are not split like the permutation's 64 rows after"), error);
  }
}

}  // namespace reorder_tests
