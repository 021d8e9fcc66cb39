// Operations reject misuse instead of computing garbage: operands on communicators whose ranks
// differ from the first operand's, an output that shares memory with an input, and a matrix whose
// structure changed under a plan. Every rank raises the same error; nobody hangs.
#include "test_support.hpp"

#include <mpi.h>

#include <string>

namespace operand_misuse_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

using P = test::csr_policy;

// The world's processes in reverse rank order (the same group, another order: MPI_SIMILAR).
communicator reversed_world() {
  MPI_Comm split = MPI_COMM_NULL;
  const auto& world = test::world();
  TESSERA_MPI(MPI_Comm_split(world.get(), 0, world.size() - 1 - world.rank(), &split));
  auto comm = communicator::duplicate(split);
  MPI_Comm_free(&split);
  return comm;
}

// The whole matrix built by rank 0 on `comm`: the same matrix on any communicator.
dist_matrix<double, P> square_on(const communicator& comm, std::uint64_t seed, global_index n = 16) {
  const auto reference = gather_to_all(generate::uniform_random<double, P>(test::world(), n, n, 3, seed));
  triplets<double> t;
  if (comm.rank() == 0)
    for (global_index i = 0; i < reference.rows; ++i)
      for (auto e = reference.row_ptr[static_cast<std::size_t>(i)]; e < reference.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
        t.push_back(i, reference.col_idx[static_cast<std::size_t>(e)], reference.values[static_cast<std::size_t>(e)]);
  return build_from_triplets<double, P>(comm, n, n, t);
}

}  // namespace

TEST_CASE("spgemm with B on other ranks is rejected; on a duplicate of A's communicator it works") {
  const auto& world = test::world();
  const auto a = square_on(world, 1);
  const auto self = communicator::duplicate(MPI_COMM_SELF);
  const auto reversed = reversed_world();
  const auto expected = gather_to_all(spgemm(a, square_on(world, 2)));
  if (world.size() > 1) {
    const auto b_self = square_on(self, 2);
    test::require_rejected([&] { (void)spgemm(a, b_self); }, error_kind::invalid_argument, "B lives on a communicator");
    const auto b_reversed = square_on(reversed, 2);
    test::require_rejected([&] { (void)spgemm(a, b_reversed); }, error_kind::invalid_argument, "B lives on a communicator");
    test::require_rejected([&] { (void)spgemm_masked(b_reversed, a, a); }, error_kind::invalid_argument,
                     "the mask lives on a communicator");
  } else {
    // One rank: MPI_COMM_SELF and the reversed world hold the same single process.
    test::require_equal(spgemm(a, square_on(self, 2)), expected);
    test::require_equal(spgemm(a, square_on(reversed, 2)), expected);
  }
  const auto other_duplicate = communicator::duplicate(world.get());
  test::require_equal(spgemm(a, square_on(other_duplicate, 2)), expected);
}

TEST_CASE("spmm with X on other ranks is rejected before anything is read") {
  const auto& world = test::world();
  const auto a = square_on(world, 3);
  if (world.size() == 1) return;
  const auto self = communicator::duplicate(MPI_COMM_SELF);
  dist_dense<double, P> x_self(self, a.num_cols(), 2);
  test::require_rejected([&] { (void)spmm(a, x_self); }, error_kind::invalid_argument, "X lives on a communicator");
  const auto reversed = reversed_world();
  dist_dense<double, P> x_reversed(reversed, a.num_cols(), 2);
  test::require_rejected([&] { (void)spmm(a, x_reversed); }, error_kind::invalid_argument, "X lives on a communicator");
  // An explicit plan checks X and Y at apply.
  dist_dense<double, P> x(world, a.num_cols(), 2), y(world, a.mapping(), 2);
  spmm_plan<double, P> plan(a, x.mapping(), 2);
  test::require_rejected([&] { plan.apply(a, x_reversed, y); }, error_kind::invalid_argument, "X lives on a communicator");
  dist_dense<double, P> y_reversed(reversed, a.num_rows(), 2);
  test::require_rejected([&] { plan.apply(a, x, y_reversed); }, error_kind::invalid_argument, "Y lives on a communicator");
}

TEST_CASE("add with B on other ranks is an invalid argument, not an internal error") {
  const auto& world = test::world();
  if (world.size() == 1) return;
  const auto a = square_on(world, 4);
  const auto reversed = reversed_world();
  const auto b = square_on(reversed, 5);
  test::require_rejected([&] { (void)add(a, b); }, error_kind::invalid_argument, "B lives on a communicator");
}

TEST_CASE("spmm(A, X, X): an output aliasing its input is rejected on every rank") {
  const auto& world = test::world();
  const auto a = square_on(world, 6);
  dist_dense<double, P> x(world, a.mapping(), 3);
  x.fill([](global_index i, global_index j) { return static_cast<double>(1 + i + 2 * j); });
  test::require_rejected([&] { spmm(a, x, x); }, error_kind::invalid_argument, "shares memory with the input X");
  // A separate Y is fine, and X is untouched by the rejected call.
  dist_dense<double, P> y(world, a.mapping(), 3);
  spmm(a, x, y);
  const auto xs = x.gather_to_root();
  if (world.rank() == 0)
    for (std::size_t i = 0; i < xs->size() / 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) REQUIRE((*xs)[i * 3 + j] == static_cast<double>(1 + i + 2 * j));
}

TEST_CASE("a plan applied to a matrix with another structure of the same size is rejected") {
  const auto& world = test::world();
  const global_index n = 12;
  const row_block::mapping rows(world.size(), n, n);
  // Two permutation matrices: the same number of entries and of columns on every rank, other columns.
  auto permutation = [&](global_index shift, double value) {
    triplets<double> t;
    for (global_index i = rows.row_begin(world.rank()); i < rows.row_end(world.rank()); ++i)
      t.push_back(i, (i + shift) % n, value);
    return build_from_triplets<double, P>(world, n, n, t);
  };
  const auto a = permutation(0, 1.0);
  const auto shifted = permutation(n / 2, 1.0);
  dist_dense<double, P> x(world, n, 1), y(world, a.mapping(), 1);
  x.fill([](global_index i, global_index) { return static_cast<double>(i); });
  spmm_plan<double, P> plan(a, x.mapping(), 1);
  plan.apply(a, x, y);
  test::require_rejected([&] { plan.apply(shifted, x, y); }, error_kind::invalid_argument, "sparsity structure differs");
  // The same structure in other arrays (built again, other values) and new values on A's own
  // arrays (apply shares the structure) are accepted, with correct results.
  const auto rebuilt = permutation(0, 3.0);
  plan.apply(rebuilt, x, y);
  auto check = [&](double factor) {
    const auto ys = y.gather_to_root();
    if (world.rank() == 0)
      for (std::size_t i = 0; i < ys->size(); ++i) REQUIRE((*ys)[i] == factor * static_cast<double>(i));
  };
  check(3.0);
  const auto doubled = scale(a, 2.0);
  plan.apply(doubled, x, y);
  check(2.0);
}

TEST_CASE("bsgemm and SUMMA refuse a C that shares memory with A, and operands on other ranks") {
  const auto& world = test::world();
  using B = mpi_rma;
  const auto tiling = tiled_range::from_sizes(std::vector<global_index>{3, 2, 4, 1});
  const process_grid grid{1, world.size()};
  auto dense = [](std::size_t, std::size_t) { return true; };
  auto element = [](global_index i, global_index j) { return 1.0 + static_cast<double>(i + 2 * j); };
  const auto a_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(world.size(), tiling, tiling);
  auto a = make_block_sparse<double, policy<block_cyclic_2d, tiles, B>>(world, a_map, dense, element);
  const auto owners = bsgemm_column_owners(a.shape(), pattern_shape(tiling, tiling, dense), grid.q);
  const auto b_map = replicated_columns{.grid = grid}.make_tile_mapping(world.size(), tiling, tiling, owners);
  const auto b = make_block_sparse<double, policy<replicated_columns, tiles, B>>(world, b_map, dense, element);
  bsgemm_plan plan(a, b);
  auto a_as_c = a;  // shares A's tiles
  test::require_rejected([&] { plan.apply(1.0, a, b, 0.0, a_as_c); }, error_kind::invalid_argument,
                   "the output C shares memory with the input A");
  auto c = plan.make_c();
  plan.apply(1.0, a, b, 0.0, c);  // a separate C is fine

  const auto a2 = make_block_sparse<double, policy<block_cyclic_2d, tiles, B>>(world, a_map, dense, element);
  summa_plan summa(a, a2);
  auto a_as_summa_c = a;
  test::require_rejected([&] { summa.apply(1.0, a, a2, 0.0, a_as_summa_c); }, error_kind::invalid_argument,
                   "the output C shares memory with the input A");

  if (world.size() > 1) {
    const auto reversed = reversed_world();
    const auto b_reversed = make_block_sparse<double, policy<replicated_columns, tiles, B>>(reversed, b_map, dense, element);
    test::require_rejected([&] { (void)bsgemm_plan(a, b_reversed); }, error_kind::invalid_argument,
                     "B lives on a communicator");
  }
}

TEST_CASE("a moved-from matrix or dense block stays usable: the same matrix, no null dereference") {
  const auto& comm = test::world();
  for (const global_index n : {7, 16}) {  // fewer rows than ranks at 4 ranks too
    auto a = generate::uniform_random<double, P>(comm, n, n, 3, 5);
    const auto reference = gather_to_all(a);
    // NOLINTBEGIN(bugprone-use-after-move): using a moved-from matrix is the point of this test.
    dist_matrix<double, P> b = std::move(a);
    CHECK(a.num_rows() == n);
    CHECK(a.global_nnz() == b.global_nnz());
    test::require_equal(a, reference);
    test::require_equal(spgemm(a, a), gather_to_all(spgemm(b, b)), 1e-12);
    test::require_equal(add(a, b), gather_to_all(scale(b, 2.0)), 1e-12);
    dist_matrix<double, P> c = generate::uniform_random<double, P>(comm, n, n, 2, 9);
    c = std::move(b);  // move assignment
    test::require_equal(b, reference);
    test::require_equal(c, reference);

    dist_dense<double, P> x(comm, n, 3);
    x.fill([](global_index i, global_index j) { return static_cast<double>(i + 2 * j); });
    dist_dense<double, P> y = std::move(x);
    CHECK(x.num_vectors() == 3);
    const auto from_moved = spmm(a, x);
    const auto from_new = spmm(a, y);
    const auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, from_moved.local());
    const auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, from_new.local());
    REQUIRE(h1.extent(0) == h2.extent(0));
    for (std::size_t i = 0; i < h1.extent(0); ++i)
      for (std::size_t j = 0; j < h1.extent(1); ++j) CHECK(h1(i, j) == h2(i, j));
    // NOLINTEND(bugprone-use-after-move)
  }
}

namespace {

// A copy of a matrix's local block and column map in fresh Views, which a test may then corrupt.
template <class Policy>
auto copied_block(const dist_matrix<double, Policy>& a) {
  using block_type = typename dist_matrix<double, Policy>::local_block_type;
  block_type block = a.local();
  auto deep = [](const auto& view) {
    auto copy = Kokkos::View<typename std::decay_t<decltype(view)>::non_const_value_type*,
                             typename std::decay_t<decltype(view)>::memory_space>(view.label(), view.extent(0));
    Kokkos::deep_copy(copy, view);
    return copy;
  };
  if constexpr (std::same_as<typename Policy::storage_type, csr>) {
    block.row_ptr = deep(a.local().row_ptr);
    block.col_idx = deep(a.local().col_idx);
  } else if constexpr (std::same_as<typename Policy::storage_type, coo>) {
    block.row_idx = deep(a.local().row_idx);
    block.col_idx = deep(a.local().col_idx);
  } else {
    block.col_ptr = deep(a.local().col_ptr);
    block.row_idx = deep(a.local().row_idx);
  }
  return std::pair{block, deep(a.col_map())};
}

template <class View>
void set_on_host(const View& view, std::size_t at, typename View::non_const_value_type value) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  host(at) = value;
  Kokkos::deep_copy(view, host);
}

}  // namespace

TEST_CASE_TEMPLATE("an adopted block with an index outside the matrix is refused on every rank", Policy,
                   test::csr_policy, test::coo_policy, test::csc_policy) {
  const auto& comm = test::world();
  const int last = comm.size() - 1;
  const global_index n = 4 * comm.size() + 1;
  const auto a = test::tridiagonal<Policy>(comm, n);
  using matrix = dist_matrix<double, Policy>;
  // Untouched copies are adopted, and are the same matrix.
  {
    const auto [block, map] = copied_block(a);
    const matrix same(comm, a.mapping(), block, map);
    test::require_equal(same, gather_to_all(a));
    const matrix known(comm, a.mapping(), block, map, a.global_nnz());
    CHECK(known.global_nnz() == a.global_nnz());
  }
  SUBCASE("the last rank's column map names a column past the matrix") {
    auto [block, map] = copied_block(a);
    if (comm.rank() == last) set_on_host(map, map.extent(0) - 1, n + 5);
    test::require_rejected([&] { matrix bad(comm, a.mapping(), block, map); }, error_kind::invalid_argument,
                           "name columns outside the matrix's");
  }
  SUBCASE("the last rank's column map is not ascending") {
    auto [block, map] = copied_block(a);
    if (comm.rank() == last) set_on_host(map, 1, 0);
    test::require_rejected([&] { matrix bad(comm, a.mapping(), block, map); }, error_kind::invalid_argument,
                           "column map is not strictly ascending");
  }
  SUBCASE("the last rank's entries point past its column map or its rows") {
    auto [block, map] = copied_block(a);
    if (comm.rank() == last) {
      if constexpr (std::same_as<typename Policy::storage_type, csc>)
        set_on_host(block.row_idx, 0, block.num_rows() + 3);
      else
        set_on_host(block.col_idx, 0, static_cast<local_index>(map.extent(0)) + 3);
    }
    test::require_rejected([&] { matrix bad(comm, a.mapping(), block, map); }, error_kind::invalid_argument,
                           "of the local block are outside");
  }
  if constexpr (!std::same_as<typename Policy::storage_type, coo>) {
    SUBCASE("the last rank's offsets decrease") {
      auto [block, map] = copied_block(a);
      if (comm.rank() == last) {
        if constexpr (std::same_as<typename Policy::storage_type, csr>)
          set_on_host(block.row_ptr, 1, 7);
        else
          set_on_host(block.col_ptr, 1, 7);
      }
      test::require_rejected([&] { matrix bad(comm, a.mapping(), block, map); }, error_kind::invalid_argument,
                             "decreases at");
    }
  }
  SUBCASE("a global nonzero count that is not the blocks' sum") {
    const auto [block, map] = copied_block(a);
    test::require_rejected([&] { matrix bad(comm, a.mapping(), block, map, a.global_nnz() + 1); },
                           error_kind::invalid_argument, "global_nnz is");
  }
}

TEST_CASE("operands whose shape or split differs on one rank are refused on every rank, never a hang") {
  const auto& comm = test::world();
  const int last = comm.size() - 1;
  const global_index n = 3 * comm.size() + 2;
  const auto a = test::tridiagonal<P>(comm, n);
  // A kept SpMM plan of width 3; then an X that is 2 wide on the last rank only.
  dist_dense<double, P> x3(comm, n, 3);
  x3.fill([](global_index i, global_index j) { return static_cast<double>(i + j); });
  (void)spmm(a, x3);
  if (comm.size() > 1)
    test::require_rejected([&] { dist_dense<double, P> x(comm, n, comm.rank() == last ? 2 : 3); },
                           error_kind::dimension_mismatch, "the ranks hold different distributions");
  dist_dense<double, P> x2(comm, n, 2);  // another width on every rank: a plan of its own
  CHECK(spmm(a, x2).num_vectors() == 2);
  // redistribute: the same global size, another split on the last rank.
  std::vector<global_index> offsets(static_cast<std::size_t>(comm.size()) + 1);
  for (int r = 0; r <= comm.size(); ++r) offsets[static_cast<std::size_t>(r)] = std::min<global_index>(n, 3 * r);
  offsets.back() = n;
  auto moved = offsets;
  if (comm.size() > 1 && comm.rank() == last) moved[static_cast<std::size_t>(last)] -= 1;
  const row_block::mapping target(moved, n);
  if (comm.size() > 1) {
    test::require_rejected([&] { (void)redistribute(a, target); }, error_kind::dimension_mismatch,
                           "the ranks hold different distributions");
  } else {
    test::require_equal(redistribute(a, target), gather_to_all(a));
  }
  // The same split everywhere is accepted, and moves the matrix unchanged.
  test::require_equal(redistribute(a, row_block::mapping(offsets, n)), gather_to_all(a));
}

TEST_CASE("kept plans: one agreed decision, the least recently used evicted first") {
  const auto& comm = test::world();
  struct counted_plan {
    int id;
  };
  typed_cache cache;
  int made = 0;
  auto make = [&] { return std::make_shared<counted_plan>(counted_plan{made++}); };
  auto& first = kept_plan<counted_plan>(comm, cache, [](const counted_plan&) { return true; }, make);
  CHECK(first.id == 0);
  // The kept plan fits on every rank but the last: every rank makes a new one, none applies the old.
  const bool last = comm.rank() == comm.size() - 1;
  auto& second = kept_plan<counted_plan>(comm, cache, [&](const counted_plan&) { return !last; }, make);
  CHECK(second.id == 1);
  CHECK(cache.entries<std::shared_ptr<counted_plan>>().size() == 2);
  // Fill to the limit, use plan 0 again (most recent now), add one more: plan 1 goes, not plan 0.
  for (std::size_t k = 2; k < plans_kept_per_kind; ++k)
    (void)kept_plan<counted_plan>(comm, cache, [](const counted_plan&) { return false; }, make);
  CHECK(kept_plan<counted_plan>(comm, cache, [](const counted_plan& p) { return p.id == 0; }, make).id == 0);
  (void)kept_plan<counted_plan>(comm, cache, [](const counted_plan&) { return false; }, make);
  const auto& kept = cache.entries<std::shared_ptr<counted_plan>>();
  REQUIRE(kept.size() == plans_kept_per_kind);
  CHECK(std::none_of(kept.begin(), kept.end(), [](const auto& p) { return p->id == 1; }));
  CHECK(std::any_of(kept.begin(), kept.end(), [](const auto& p) { return p->id == 0; }));

  // Numeric answers: a choice agreed in the same allreduce (spmm reading X in place).
  const auto plan_zero = [](const counted_plan& p) { return p.id == 0; };
  auto same = find_or_make_plan<counted_plan>(
      comm, cache, [&](const counted_plan& p) -> std::int64_t { return plan_zero(p) ? 7 : 0; }, make);
  CHECK(same.kept);
  CHECK(same.plan.id == 0);
  CHECK(same.agreed == 7);
  // Fits everywhere, with another choice on the last rank: fits, nothing else agreed (1).
  auto differ = find_or_make_plan<counted_plan>(
      comm, cache, [&](const counted_plan& p) -> std::int64_t { return plan_zero(p) ? (last ? 5 : 7) : 0; }, make);
  CHECK(differ.kept);
  CHECK(differ.agreed == (comm.size() > 1 ? 1 : 5));  // one rank: its own answer
  // A negative answer counts as "does not fit": a new plan, agreed 0.
  const int before = made;
  auto refused = find_or_make_plan<counted_plan>(
      comm, cache, [&](const counted_plan& p) -> std::int64_t { return plan_zero(p) && !last ? 3 : -4; }, make);
  CHECK_FALSE(refused.kept);
  CHECK(refused.agreed == 0);
  CHECK(made == before + 1);
}

}  // namespace operand_misuse_tests
