// CSR, CSC and COO blocks: conversions, structure, and use through Kokkos-Kernels.
#include "test_support.hpp"

#include <KokkosSparse_spmv.hpp>

namespace storage_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {
const auto& comm() { return test::world(); }

auto random_csr(global_index rows, global_index cols, int k, std::uint64_t seed) {
  return generate::uniform_random<double, test::csr_policy>(comm(), rows, cols, k, seed);
}
}  // namespace

TEST_CASE("csr -> csc -> coo -> csr gives back the same matrix") {
  for (auto [rows, cols] : {std::pair<global_index, global_index>{31, 17}, {5, 40}, {2, 2}, {0, 3}}) {
    const auto a = random_csr(rows, cols, 4, 21);
    const auto b = convert<csc>(a);
    const auto c = convert<coo>(b);
    const auto d = convert<csr>(c);
    CHECK(b.global_nnz() == a.global_nnz());
    CHECK(compare(b, a).equal);
    CHECK(compare(c, a).equal);
    CHECK(compare(d, a).equal);
    CHECK(compare(convert<csc>(convert<coo>(a)), a).equal);
  }
}

TEST_CASE("a CSC block has ascending rows inside every column, matching the CSR block") {
  const auto a = random_csr(29, 13, 5, 22);
  const auto b = convert<csc>(a);
  auto col_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().col_ptr);
  auto row_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().row_idx);
  auto csc_vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().values);
  auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.local().row_ptr);
  auto col_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.local().col_idx);
  auto csr_vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.local().values);
  REQUIRE(col_ptr.extent(0) == static_cast<std::size_t>(a.local_cols()) + 1);
  for (local_index c = 0; c < b.local_cols(); ++c)
    for (offset_type k = col_ptr(c); k < col_ptr(c + 1); ++k) {
      if (k > col_ptr(c)) CHECK(row_idx(k - 1) < row_idx(k));
      // The same (row, column) holds the same value in the CSR block.
      const local_index r = row_idx(k);
      bool found = false;
      for (offset_type q = row_ptr(r); q < row_ptr(r + 1); ++q)
        if (col_idx(q) == c) {
          found = true;
          CHECK(csr_vals(q) == csc_vals(k));
        }
      CHECK(found);
    }
}

TEST_CASE("the local CSR block multiplies correctly through KokkosSparse::spmv") {
  const auto a = random_csr(40, 25, 3, 23);
  const auto reference = gather_to_all(a);
  auto crs = local_crs(a);
  // x(j) = j + 1 over global columns, gathered in col_map order.
  auto col_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.col_map());
  Kokkos::View<double*> x("x", col_map.extent(0)), y("y", static_cast<std::size_t>(a.local_rows()));
  auto hx = Kokkos::create_mirror_view(x);
  for (std::size_t c = 0; c < col_map.extent(0); ++c) hx(c) = static_cast<double>(col_map(c) + 1);
  Kokkos::deep_copy(x, hx);
  KokkosSparse::spmv("N", 1.0, crs, x, 0.0, y);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  for (local_index i = 0; i < a.local_rows(); ++i) {
    const auto g = static_cast<std::size_t>(a.global_row(i));
    double expected = 0;
    for (auto k = reference.row_ptr[g]; k < reference.row_ptr[g + 1]; ++k)
      expected += reference.values[static_cast<std::size_t>(k)] * static_cast<double>(reference.col_idx[static_cast<std::size_t>(k)] + 1);
    CHECK(hy(static_cast<std::size_t>(i)) == doctest::Approx(expected));
  }
  CHECK(crs.numRows() == a.local_rows());
  CHECK(crs.nnz() == a.local_nnz());
}

TEST_CASE("the column map is sorted and lists exactly the columns used") {
  const auto a = random_csr(50, 1000, 2, 24);
  auto col_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.col_map());
  for (std::size_t c = 1; c < col_map.extent(0); ++c) CHECK(col_map(c - 1) < col_map(c));
  const auto mine = local_triplets(a);
  std::vector<global_index> used(mine.cols);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  REQUIRE(used.size() == col_map.extent(0));
  for (std::size_t c = 0; c < used.size(); ++c) CHECK(used[c] == col_map(c));
}

}  // namespace storage_tests
