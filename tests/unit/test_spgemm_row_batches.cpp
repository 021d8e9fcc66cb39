// SpGEMM in batches of A's rows for a kernel with 32-bit offsets (kernels/spgemm_row_batches.hpp:
// what tessera runs on CUDA where a rank's product outgrows int) against a serial product: limits
// that make one batch, several, and one row per batch; empty rows, an empty A, a row too big for
// any batch (refused with a sentence); batches the kernel refuses for want of memory (split in
// halves until they fit, or a row refused with a sentence), on the host space and the default
// execution space (the batches' kernel here is a serial product standing in for cuSPARSE).
#include "test_support.hpp"

#include "tessera/core/error.hpp"
#include "tessera/kernels/spgemm_row_batches.hpp"
#include "tessera/matrix/to_view.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace spgemm_row_batches_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

namespace {
using namespace tessera;

struct host_csr {
  int rows = 0, cols = 0;
  std::vector<offset_type> ptr{0};
  std::vector<int> col;
  std::vector<double> val;
};

// rows x cols with row lengths drawn from `lengths` (cycled), random distinct columns.
host_csr random_csr(int rows, int cols, const std::vector<int>& lengths, std::mt19937& gen) {
  host_csr m;
  m.rows = rows;
  m.cols = cols;
  std::uniform_int_distribution<int> column(0, cols - 1);
  std::uniform_real_distribution<double> value(-1, 1);
  for (int r = 0; r < rows; ++r) {
    std::map<int, double> row;
    const int length = std::min(cols, lengths[static_cast<std::size_t>(r) % lengths.size()]);
    while (static_cast<int>(row.size()) < length) row[column(gen)] = value(gen);
    for (const auto& [c, v] : row) {
      m.col.push_back(c);
      m.val.push_back(v);
    }
    m.ptr.push_back(static_cast<offset_type>(m.col.size()));
  }
  return m;
}

// Row-by-row product with sorted columns (what the batches' kernel must return, like cuSPARSE).
std::vector<std::map<int, double>> serial_product(int rows, const offset_type* a_ptr, const int* a_col, const double* a_val,
                                                  const host_csr& b) {
  std::vector<std::map<int, double>> c(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r)
    for (auto e = a_ptr[r]; e < a_ptr[r + 1]; ++e) {
      const int k = a_col[e];
      for (auto f = b.ptr[static_cast<std::size_t>(k)]; f < b.ptr[static_cast<std::size_t>(k) + 1]; ++f)
        c[static_cast<std::size_t>(r)][b.col[static_cast<std::size_t>(f)]] += a_val[e] * b.val[static_cast<std::size_t>(f)];
    }
  return c;
}

// `room`: the most products a batch may form before the stand-in kernel refuses it as cuSPARSE
// does when the device's memory runs out (kernels::batch_too_large).
template <class Exec>
void batches_match_serial_product(const host_csr& a, const host_csr& b, offset_type limit, std::size_t min_batches,
                                  offset_type room = std::numeric_limits<offset_type>::max()) {
  using mem = typename Exec::memory_space;
  const auto a_ptr = to_view<offset_type, mem>(a.ptr, "a_ptr");
  const auto a_col = to_view<local_index, mem>(a.col, "a_col");
  const auto a_val = to_view<double, mem>(a.val, "a_val");
  std::vector<int> b_ptr32(b.ptr.begin(), b.ptr.end());
  const kernels::csr32<double, mem> b32{b.rows, b.cols, to_view<int, mem>(b_ptr32, "b_ptr"), to_view<int, mem>(b.col, "b_col"),
                                        to_view<double, mem>(b.val, "b_val")};
  std::size_t batches = 0, refused = 0;
  const auto c = kernels::multiply_in_row_batches(
      Exec{}, Kokkos::View<const offset_type*, mem>(a_ptr), Kokkos::View<const local_index*, mem>(a_col),
      Kokkos::View<const double*, mem>(a_val), b32, limit, [&](const kernels::csr32<double, mem>& rows) {
        REQUIRE(rows.values.extent(0) <= static_cast<std::size_t>(limit));
        const auto ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, rows.row_ptr);
        const auto col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, rows.col_idx);
        const auto val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, rows.values);
        offset_type products = 0;
        for (std::size_t e = 0; e < col.extent(0); ++e)
          products += b.ptr[static_cast<std::size_t>(col(e)) + 1] - b.ptr[static_cast<std::size_t>(col(e))];
        if (products > room) {
          ++refused;
          throw kernels::batch_too_large("the stand-in kernel has room for " + std::to_string(room) + " products");
        }
        ++batches;
        std::vector<offset_type> ptr64(ptr.data(), ptr.data() + ptr.extent(0));
        const auto product = serial_product(rows.rows, ptr64.data(), col.data(), val.data(), b);
        std::vector<int> out_ptr{0}, out_col;
        std::vector<double> out_val;
        for (const auto& row : product) {
          for (const auto& [j, v] : row) {
            out_col.push_back(j);
            out_val.push_back(v);
          }
          out_ptr.push_back(static_cast<int>(out_col.size()));
        }
        REQUIRE(out_col.size() <= static_cast<std::size_t>(limit));  // the batch's bound held
        return kernels::csr32_product<double, mem>{to_view<int, mem>(out_ptr, "c_ptr"), to_view<int, mem>(out_col, "c_col"),
                                                   to_view<double, mem>(out_val, "c_val")};
      });
  CHECK(batches >= min_batches);
  CHECK(c.batches == batches);  // what spgemm_options::batches reports
  if (room == std::numeric_limits<offset_type>::max()) CHECK(refused == 0);
  const auto expected = serial_product(a.rows, a.ptr.data(), a.col.data(), a.val.data(), b);
  const auto ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.row_ptr);
  const auto col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.col_idx);
  const auto val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.values);
  REQUIRE(ptr.extent(0) == static_cast<std::size_t>(a.rows) + 1);
  CHECK(ptr(0) == 0);
  for (int r = 0; r < a.rows; ++r) {
    const auto& row = expected[static_cast<std::size_t>(r)];
    REQUIRE(ptr(r + 1) - ptr(r) == static_cast<offset_type>(row.size()));
    auto e = ptr(r);
    for (const auto& [j, v] : row) {  // same columns in the same order, same values (same sums)
      CHECK(col(e) == j);
      CHECK(val(e) == v);
      ++e;
    }
  }
  CHECK(static_cast<std::size_t>(ptr(a.rows)) == col.extent(0));
}

// A's largest row, in products with B and in entries, and the products of all rows.
struct row_sizes {
  offset_type most_products = 0, most_entries = 0, total_products = 0;
};
row_sizes sizes_of_rows(const host_csr& a, const host_csr& b) {
  row_sizes sizes;
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r) {
    offset_type products = 0;
    for (auto e = a.ptr[r]; e < a.ptr[r + 1]; ++e) {
      const auto k = static_cast<std::size_t>(a.col[static_cast<std::size_t>(e)]);
      products += b.ptr[k + 1] - b.ptr[k];
    }
    sizes.most_products = std::max(sizes.most_products, products);
    sizes.most_entries = std::max(sizes.most_entries, a.ptr[r + 1] - a.ptr[r]);
    sizes.total_products += products;
  }
  return sizes;
}

}  // namespace

TEST_CASE("SpGEMM in row batches matches a serial product: one batch, several, one row each") {
  std::mt19937 gen(7);
  const auto a = random_csr(60, 40, {0, 1, 3, 0, 7, 12, 2, 0, 25}, gen);
  const auto b = random_csr(40, 50, {2, 0, 5, 1, 9, 3}, gen);
  // The largest row (entries of A or products): a limit below it is refused (the last case).
  const auto sizes = sizes_of_rows(a, b);
  const offset_type biggest = std::max(sizes.most_products, sizes.most_entries), total = sizes.total_products;
  REQUIRE(total > 4 * biggest);
  batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(a, b, 1 << 30, 1);
  batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(a, b, 2 * biggest, 2);
  batches_match_serial_product<Kokkos::DefaultExecutionSpace>(a, b, 2 * biggest, 2);
  // The smallest limit that fits every row: batches of one or a few rows.
  batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(a, b, biggest, static_cast<std::size_t>(total / biggest));
}

TEST_CASE("SpGEMM in row batches: an A without rows or entries, and a row too big for any batch") {
  std::mt19937 gen(11);
  const auto b = random_csr(10, 10, {3}, gen);
  batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(random_csr(0, 10, {1}, gen), b, 100, 0);
  batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(random_csr(5, 10, {0}, gen), b, 100, 1);
  const auto a = random_csr(4, 10, {1, 8}, gen);  // row 1 forms 24 products
  try {
    batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(a, b, 20, 1);
    FAIL("a row of 24 products passed a limit of 20");
  } catch (const tessera::error& e) {
    CHECK(e.kind() == error_kind::unsupported);
    CHECK(std::string(e.what()).find("row 1 of A") != std::string::npos);
  }
}

TEST_CASE("SpGEMM in row batches: batches the kernel has no room for are split in halves until they fit") {
  std::mt19937 gen(13);
  const auto a = random_csr(50, 30, {4, 0, 2, 9, 1, 6}, gen);
  const auto b = random_csr(30, 40, {3, 1, 7, 0, 5}, gen);
  const auto sizes = sizes_of_rows(a, b);
  const offset_type biggest = sizes.most_products, total = sizes.total_products;
  REQUIRE(total > 8 * biggest);
  // One planned batch, refused down to pieces of at most a quarter, a tenth, the largest row.
  batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(a, b, 1 << 30, 4, total / 4);
  batches_match_serial_product<Kokkos::DefaultExecutionSpace>(a, b, 1 << 30, 10, total / 10);
  batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(a, b, 3 * biggest, 2, biggest);
  // A row the kernel has no room for alone: refused with a sentence that names it.
  try {
    batches_match_serial_product<Kokkos::DefaultHostExecutionSpace>(a, b, 1 << 30, 1, biggest - 1);
    FAIL("a row of " << biggest << " products passed a kernel with room for " << biggest - 1);
  } catch (const tessera::error& e) {
    CHECK(e.kind() == error_kind::unsupported);
    CHECK(std::string(e.what()).find("needs more device memory") != std::string::npos);
    CHECK(std::string(e.what()).find("room for") != std::string::npos);  // the kernel's own reason
  }
}

}  // namespace spgemm_row_batches_tests
