// Tiles as a storage of dist_matrix: to_tiles and to_elements against the serial reference on
// random and structured matrices, irregular tilings with zero-width tiles, every process grid,
// replicated targets, re-tiling, empty matrices and more ranks than tile rows; bsgemm and summa
// on converted operands against spgemm on row_block x csr; the conversion's traffic from the
// counters; bad input raised on every rank; tile norms of tiles larger than one summing slice.
#include "test_support.hpp"

#include <cmath>
#include <random>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tiles_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

template <class Distribution>
using tiled = policy<Distribution, tiles, mpi_rma>;

std::vector<process_grid> grids_of(int ranks) {
  std::vector<process_grid> g;
  for (int p = 1; p <= ranks; ++p)
    if (ranks % p == 0) g.push_back({p, ranks / p});
  return g;
}

// Tile sizes in [0, 5] (zero-width tiles included) covering `extent`; the same on every rank.
tiled_range irregular_tiling(global_index extent, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<global_index> size(0, 5);
  std::vector<global_index> sizes;
  global_index covered = 0;
  while (covered < extent) {
    const global_index s = std::min(size(rng), extent - covered);
    sizes.push_back(s);
    covered += s;
  }
  sizes.push_back(0);
  return tiled_range::from_sizes(sizes);
}

// A rows x cols matrix with about `per_row` entries per row, values between 1 and 2 (no cancellation in
// products, so no entry of A * B is an exact zero), each rank contributing a share of the rows.
dist_matrix<double, test::csr_policy> random_matrix(const communicator& comm, global_index rows, global_index cols,
                                                    int per_row, unsigned seed) {
  triplets<double> t;
  std::mt19937 rng(seed + 977u * static_cast<unsigned>(comm.rank()));
  std::uniform_int_distribution<global_index> col(0, std::max<global_index>(cols - 1, 0));
  std::uniform_real_distribution<double> value(1.0, 2.0);
  for (global_index i = comm.rank(); i < rows; i += comm.size())
    for (int k = 0; k < per_row && cols > 0; ++k) t.push_back(i, col(rng), value(rng));
  return build_from_triplets<double, test::csr_policy>(comm, rows, cols, t);
}

// The tiles that hold an entry of `reference`.
std::set<std::pair<std::int64_t, std::int64_t>> tiles_with_entries(const host_csr<double>& reference,
                                                                   const tiled_range& rows, const tiled_range& cols) {
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  for (global_index i = 0; i < reference.rows; ++i)
    for (auto e = reference.row_ptr[static_cast<std::size_t>(i)]; e < reference.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
      out.emplace(static_cast<std::int64_t>(rows.tile_of(i)),
                  static_cast<std::int64_t>(cols.tile_of(reference.col_idx[static_cast<std::size_t>(e)])));
  return out;
}

template <class Matrix>
void check_round_trip(const Matrix& a, const tiled_range& row_tiling, const tiled_range& col_tiling) {
  const auto& comm = a.comm();
  const auto reference = gather_to_all(a);
  for (const auto grid : grids_of(comm.size())) {
    INFO("grid " << grid.p << " x " << grid.q);
    const block_cyclic_2d::mapping cyclic(grid, row_tiling, col_tiling);
    const auto t = to_tiles<tiled<block_cyclic_2d>>(a, cyclic);
    test::require_equal(t, reference);
    // A tile is stored exactly when it holds an entry.
    std::set<std::pair<std::int64_t, std::int64_t>> stored;
    for (const auto& tile : t.shape().tiles()) stored.emplace(tile.row, tile.col);
    CHECK(stored == tiles_with_entries(reference, row_tiling, col_tiling));
    CHECK(t.global_nnz() >= reference.nnz());
    // Back to every element storage.
    test::require_equal(to_elements<test::csc_policy>(t), reference);
    test::require_equal(to_elements<test::coo_policy>(t), reference);

    // Replicated columns: every rank of a grid column holds all of that column's tiles.
    const replicated_columns::mapping replicated(grid, row_tiling, col_tiling);
    const auto r = to_tiles<tiled<replicated_columns>>(a, replicated);
    test::require_equal(r, reference);
    std::size_t mine = 0;
    for (const auto& tile : r.shape().tiles())
      if (replicated.tile_col_owner(static_cast<std::size_t>(tile.col)) == grid.col_of(comm.rank())) ++mine;
    CHECK(r.local().num_tiles() == mine);
    test::require_equal(to_elements<test::csr_policy>(r), reference);

    // Re-tiling a tile-stored matrix onto other tilings.
    const block_cyclic_2d::mapping coarse(grid, tiled_range::uniform(row_tiling.extent(), 7),
                                          tiled_range::uniform(col_tiling.extent(), 4));
    test::require_equal(to_tiles<tiled<block_cyclic_2d>>(t, coarse), reference);
  }
}


}  // namespace

// In a named namespace: nvcc warns (#177-D) about members of an internal-linkage type that only
// concepts look at.
namespace tiles_test {
// A user's tile distribution: tile rows dealt over the grid rows in reverse (tile row ti on grid
// row p - 1 - ti mod p), tile columns as block_cyclic_2d deals them. It states tile_grid_mapping
// and nothing else tessera ships, so bsgemm and summa must ask it where rows are, not assume ti mod p.
struct reversed_rows {
  static constexpr std::string_view name() noexcept { return "reversed_rows"; }

  class mapping {
   public:
    mapping() = default;
    mapping(process_grid grid, tiled_range rows, tiled_range cols, std::vector<int> column_owner = {})
        : inner_(grid, std::move(rows), std::move(cols), std::move(column_owner)) {}

    [[nodiscard]] int num_ranks() const noexcept { return inner_.num_ranks(); }
    [[nodiscard]] global_index global_rows() const noexcept { return inner_.global_rows(); }
    [[nodiscard]] global_index global_cols() const noexcept { return inner_.global_cols(); }
    [[nodiscard]] const process_grid& grid() const noexcept { return inner_.grid(); }
    [[nodiscard]] const tiled_range& row_tiles() const noexcept { return inner_.row_tiles(); }
    [[nodiscard]] const tiled_range& col_tiles() const noexcept { return inner_.col_tiles(); }
    [[nodiscard]] const std::vector<int>& column_owners() const noexcept { return inner_.column_owners(); }
    [[nodiscard]] int tile_row_owner(std::size_t ti) const noexcept { return grid().p - 1 - inner_.tile_row_owner(ti); }
    [[nodiscard]] int tile_col_owner(std::size_t tj) const noexcept { return inner_.tile_col_owner(tj); }
    [[nodiscard]] int tile_owner(std::size_t ti, std::size_t tj) const noexcept {
      return grid().rank(tile_row_owner(ti), tile_col_owner(tj));
    }
    [[nodiscard]] bool holds(int rank, std::size_t ti, std::size_t tj) const noexcept { return tile_owner(ti, tj) == rank; }
    [[nodiscard]] mapping with_tiles(const tiled_range& rows, const tiled_range& cols,
                                     const std::vector<int>& column_owner) const {
      return mapping(grid(), rows, cols, column_owner);
    }
    // Element coordinates: a tile-stored block addresses global coordinates.
    [[nodiscard]] int owner(global_index i, global_index j) const noexcept {
      return tile_owner(row_tiles().tile_of(i), col_tiles().tile_of(j));
    }
    [[nodiscard]] local_coordinate to_local(global_index i, global_index j) const noexcept { return {owner(i, j), i, j}; }
    [[nodiscard]] global_coordinate to_global(int, global_index li, global_index lj) const noexcept { return {li, lj}; }
    [[nodiscard]] local_extents extents(int) const noexcept { return {global_rows(), global_cols()}; }
    friend bool operator==(const mapping&, const mapping&) = default;

   private:
    block_cyclic_2d::mapping inner_;
  };

  [[nodiscard]] mapping make_mapping(int ranks, global_index rows, global_index cols) const {
    return mapping(process_grid::squarest(ranks), tiled_range::uniform(rows, 4), tiled_range::uniform(cols, 4));
  }
};
static_assert(distribution_policy<reversed_rows> && tile_grid_mapping<reversed_rows::mapping>);
static_assert(!replicated_column_mapping<reversed_rows::mapping> && !whole_row_mapping<reversed_rows::mapping>);
}  // namespace tiles_test
using tiles_test::reversed_rows;

TEST_CASE("to_tiles and to_elements keep every entry: random, structured, empty, more ranks than rows") {
  const auto& comm = test::world();
  SUBCASE("random rectangular, irregular tilings with zero-width tiles") {
    const auto a = random_matrix(comm, 23, 17, 3, 5);
    check_round_trip(a, irregular_tiling(23, 1), irregular_tiling(17, 2));
  }
  SUBCASE("tridiagonal, uniform tiles") {
    const auto a = test::tridiagonal<test::csr_policy>(comm, 19);
    check_round_trip(a, tiled_range::uniform(19, 4), tiled_range::uniform(19, 3));
  }
  SUBCASE("csc input and a user-visible empty matrix") {
    check_round_trip(convert<csc>(random_matrix(comm, 11, 9, 2, 8)), irregular_tiling(11, 3), irregular_tiling(9, 4));
    check_round_trip(random_matrix(comm, 6, 5, 0, 9), tiled_range::uniform(6, 2), tiled_range::uniform(5, 2));
  }
  SUBCASE("more ranks than tile rows: a 2 x 30 matrix in one tile row") {
    check_round_trip(random_matrix(comm, 2, 30, 4, 10), tiled_range::uniform(2, 2), irregular_tiling(30, 5));
  }
}

TEST_CASE("bsgemm and summa on converted operands equal spgemm on row_block x csr") {
  const auto& comm = test::world();
  const auto a = random_matrix(comm, 20, 24, 4, 21);
  const auto b = random_matrix(comm, 24, 18, 3, 22);
  const auto product = gather_to_all(spgemm(a, b));
  const auto m = irregular_tiling(20, 31), k = irregular_tiling(24, 32), n = irregular_tiling(18, 33);
  for (const auto grid : grids_of(comm.size())) {
    INFO("grid " << grid.p << " x " << grid.q);
    const auto ta = to_tiles<tiled<block_cyclic_2d>>(a, block_cyclic_2d::mapping(grid, m, k));
    const auto tb = to_tiles<tiled<replicated_columns>>(b, replicated_columns::mapping(grid, k, n));
    const auto c = bsgemm(1.0, ta, tb);
    test::require_equal(c, product, 1e-12);
    test::require_equal(to_elements<test::csr_policy>(c), product, 1e-12);

    const auto tb_cyclic = to_tiles<tiled<block_cyclic_2d>>(b, block_cyclic_2d::mapping(grid, k, n));
    test::require_equal(summa(1.0, ta, tb_cyclic), product, 1e-12);
  }
}

TEST_CASE("to_tiles traffic: one size exchange, then each entry once to each holder of its tile") {
  const auto& comm = test::world();
  const int p = comm.size();
  const auto a = random_matrix(comm, 17, 13, 3, 41);
  const auto rows = irregular_tiling(17, 42), cols = irregular_tiling(13, 43);
  const auto grid = process_grid::squarest(p);
  const replicated_columns::mapping replicated(grid, rows, cols);
  // What this rank must send: each local entry to every holder of its tile other than itself.
  const auto mine = local_triplets(a);
  std::uint64_t records = 0;
  std::set<int> peers;
  for (std::size_t e = 0; e < mine.values.size(); ++e)
    for (int r = 0; r < p; ++r)
      if (r != comm.rank() && replicated.holds(r, rows.tile_of(mine.rows[e]), cols.tile_of(mine.cols[e]))) {
        ++records;
        peers.insert(r);
      }
  comm.stats().reset();
  (void)to_tiles<tiled<replicated_columns>>(a, replicated);
  const auto others = static_cast<std::uint64_t>(p - 1);
  const std::uint64_t record = 2 * sizeof(global_index) + sizeof(double);
  CHECK(comm.stats().of("to_tiles") == traffic{others + peers.size(), 8 * others + record * records});
}

TEST_CASE("to_tiles refuses tilings of another shape and grids of another size, on every rank") {
  const auto& comm = test::world();
  const auto a = random_matrix(comm, 12, 10, 2, 51);
  const auto grid = process_grid::squarest(comm.size());
  test::require_rejected(
      [&] { (void)to_tiles<tiled<block_cyclic_2d>>(a, block_cyclic_2d::mapping(grid, tiled_range::uniform(13, 4), tiled_range::uniform(10, 4))); },
      error_kind::dimension_mismatch, "the tilings cover 13 x 10 but the matrix is 12 x 10");
  const process_grid too_big{comm.size() + 1, 1};
  test::require_rejected(
      [&] { (void)to_tiles<tiled<block_cyclic_2d>>(a, block_cyclic_2d::mapping(too_big, tiled_range::uniform(12, 4), tiled_range::uniform(10, 4))); },
      error_kind::dimension_mismatch, "grid needs");
}

TEST_CASE("a user's tile distribution runs bsgemm and summa: rows found by asking the mapping") {
  const auto& comm = test::world();
  const auto a = random_matrix(comm, 19, 15, 4, 61);
  const auto b = random_matrix(comm, 15, 14, 3, 62);
  const auto product = gather_to_all(spgemm(a, b));
  const auto m = irregular_tiling(19, 63), k = irregular_tiling(15, 64), n = irregular_tiling(14, 65);
  for (const auto grid : grids_of(comm.size())) {
    INFO("grid " << grid.p << " x " << grid.q);
    const reversed_rows::mapping a_map(grid, m, k);
    const auto ta = to_tiles<tiled<reversed_rows>>(a, a_map);
    test::require_equal(ta, gather_to_all(a));
    // Rows really are where the user put them.
    for (std::size_t t = 0; t < ta.local().num_tiles(); ++t)
      CHECK(a_map.tile_row_owner(static_cast<std::size_t>(ta.shape().tiles()[ta.local().index[t]].row)) ==
            grid.row_of(comm.rank()));
    const auto tb = to_tiles<tiled<replicated_columns>>(b, replicated_columns::mapping(grid, k, n));
    const auto c = bsgemm(1.0, ta, tb);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(c)>, dist_matrix<double, tiled<reversed_rows>>>);
    test::require_equal(c, product, 1e-12);
    const auto tb_user = to_tiles<tiled<reversed_rows>>(b, reversed_rows::mapping(grid, k, n));
    test::require_equal(summa(1.0, ta, tb_user), product, 1e-12);
  }
}

TEST_CASE("tile norms of tiles larger than one summing slice (16,384 values) equal the serial sum") {
  const auto& comm = test::world();
  // Tiles of 19,500 and 21,000 values (two slices each where the device algorithms measure norms in
  // place), a small one and an empty one, on every grid.
  const std::vector<global_index> row_sizes{130, 140, 0, 7}, col_sizes{150, 3};
  const auto rows = tiled_range::from_sizes(row_sizes), cols = tiled_range::from_sizes(col_sizes);
  const auto value = [](global_index i, global_index j) { return 1.0 + static_cast<double>((i * 31 + j * 17) % 7) * 0.25; };
  for (const auto grid : grids_of(comm.size())) {
    INFO("grid " << grid.p << " x " << grid.q);
    const auto a = make_block_sparse<double, tiled<block_cyclic_2d>>(
        comm, block_cyclic_2d::mapping(grid, rows, cols), [](std::size_t, std::size_t) { return true; },
        [&](global_index i, global_index j) { return value(i, j); });
    REQUIRE(a.shape().num_nonzero_tiles() == rows.num_tiles() * cols.num_tiles());
    for (const auto& t : a.shape().tiles()) {
      const auto ti = static_cast<std::size_t>(t.row), tj = static_cast<std::size_t>(t.col);
      double sum = 0;
      for (global_index i = rows.begin(ti); i < rows.end(ti); ++i)
        for (global_index j = cols.begin(tj); j < cols.end(tj); ++j) sum += value(i, j) * value(i, j);
      INFO("tile (" << ti << ", " << tj << ")");
      CHECK(t.norm == doctest::Approx(std::sqrt(sum)).epsilon(1e-12));
    }
  }
}

}  // namespace tiles_tests
