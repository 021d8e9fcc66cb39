// Operations reject misuse instead of computing garbage: operands on communicators whose ranks
// differ from the first operand's, an output that shares memory with an input, and a matrix whose
// structure changed under a plan. Every rank raises the same error; nobody hangs.
#include "test_support.hpp"

#include <mpi.h>

#include <string>

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
