// The node-local tile kernels (kernels/tile_gemm.hpp, kernels/packed_tile_gemm.hpp) against a
// triple loop: every edge of the register block (m, n, k not multiples of the block, 1, 0),
// accumulate and overwrite, float and double. Built twice: with the project's flags (the
// portable scalar kernel unless the flags enable SIMD) and with -march=native (the SIMD kernel).
#include "test_support.hpp"

#include "tessera/kernels/packed_tile_gemm.hpp"
#include "tessera/kernels/tile_gemm.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tile_kernels_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

namespace {
using namespace tessera;
using host = Kokkos::DefaultHostExecutionSpace;

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(u(gen));
  return v;
}

// C (m x n) = beta_c * C + alpha * A (m x k) * B (k x n), all column-major.
template <class T>
std::vector<T> reference(int m, int n, int k, T alpha, const std::vector<T>& a, const std::vector<T>& b,
                         std::vector<T> c, bool overwrite) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int l = 0; l < k; ++l)
        s += static_cast<double>(a[static_cast<std::size_t>(i + l * m)]) * static_cast<double>(b[static_cast<std::size_t>(l + j * k)]);
      T& out = c[static_cast<std::size_t>(i + j * m)];
      out = static_cast<T>(alpha * s + (overwrite ? 0.0 : static_cast<double>(out)));
    }
  return c;
}

template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, int k) {
  const double tolerance = (std::is_same_v<T, float> ? 1e-5 : 1e-13) * (k + 1) * 4;
  REQUIRE(got.size() == want.size());
  for (std::size_t e = 0; e < got.size(); ++e)
    REQUIRE_MESSAGE(std::abs(static_cast<double>(got[e]) - static_cast<double>(want[e])) <= tolerance,
                    "element ", e, ": ", got[e], " != ", want[e]);
}

// Shapes around the register block of T: below, at and past it, and a few that need depth blocks.
template <class T>
std::vector<std::array<int, 3>> shapes() {
  constexpr int mr = kernels::packed_shape<T>::rows, nr = kernels::packed_shape<T>::cols;
  std::vector<std::array<int, 3>> out{{1, 1, 1},           {mr, nr, 1},     {mr - 1, nr - 1, 3}, {mr + 1, nr + 1, 7},
                                      {2 * mr + 3, 3 * nr + 2, 17}, {37, 1, 5},   {1, 29, 5},          {5, 7, 0},
                                      {0, 4, 3},           {3, 0, 3},       {3 * mr, 2 * nr, 600}, {530, 2 * nr + 5, 9}};
  // Columns of B 4 KiB apart (read from a padded copy): k = 512 doubles, 1024 floats, and two depth blocks.
  out.push_back({mr + 5, 2 * nr + 3, 512});
  out.push_back({7, nr - 2, 1024});
  out.push_back({2 * mr, nr + 1, 2048});
  // A taller than one L2 block of rows (1.25 MiB over a depth block): blocks of equal panels, the
  // last one partial, over two depth blocks.
  out.push_back({1100, nr + 3, 520});
  // Every edge-block width, and partial panels of every register count.
  for (int cols = 1; cols <= nr; ++cols) out.push_back({mr + 1 + (cols * 5) % mr, nr + cols, 4});
  return out;
}

template <class T>
void packed_kernel_matches_reference() {
  std::mt19937 gen(7);
  for (const auto& [m, n, k] : shapes<T>())
    for (const bool overwrite : {false, true}) {
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      CAPTURE(overwrite);
      const auto mm = static_cast<std::size_t>(m), nn = static_cast<std::size_t>(n), kk = static_cast<std::size_t>(k);
      const auto a = random_values<T>(mm * kk, gen);
      const auto b = random_values<T>(kk * nn, gen);
      auto c = random_values<T>(mm * nn, gen);
      // NaN where C's old values must never be read.
      if (overwrite && k > 0)
        for (auto& x : c) x = std::numeric_limits<T>::quiet_NaN();
      const T alpha = static_cast<T>(0.75);
      const auto want = reference<T>(m, n, k, alpha, a, b, c, overwrite && k > 0);
      std::vector<T> packed(kernels::packed_shape<T>::a_elements(mm, kk) + 1);
      kernels::pack_a<host>(a.data(), m, k, packed.data());
      // With a following product named (here, itself) the kernel prefetches it: same result.
      const kernels::following_product<T> following =
          overwrite ? kernels::following_product<T>{b.data(), n, k} : kernels::following_product<T>{};
      kernels::packed_gemm<host>(m, n, k, alpha, packed.data(), b.data(), c.data(), overwrite, following);
      check_close(c, want, k);
    }
}

template <class T>
void blas_tile_gemm_matches_reference() {
  std::mt19937 gen(11);
  for (const auto& [m, n, k] : shapes<T>())
    for (const bool overwrite : {false, true}) {
      const auto mm = static_cast<std::size_t>(m), nn = static_cast<std::size_t>(n), kk = static_cast<std::size_t>(k);
      // Three tiles side by side in each buffer, the product on the middle ones.
      const auto a = random_values<T>(3 * mm * kk, gen);
      const auto b = random_values<T>(3 * kk * nn, gen);
      auto c = random_values<T>(3 * mm * nn, gen);
      const kernels::tile_product p{mm * kk, kk * nn, mm * nn, m, n, k, overwrite, false};
      std::vector<T> a_mid(a.begin() + static_cast<std::ptrdiff_t>(mm * kk), a.begin() + static_cast<std::ptrdiff_t>(2 * mm * kk));
      std::vector<T> b_mid(b.begin() + static_cast<std::ptrdiff_t>(kk * nn), b.begin() + static_cast<std::ptrdiff_t>(2 * kk * nn));
      std::vector<T> c_mid(c.begin() + static_cast<std::ptrdiff_t>(mm * nn), c.begin() + static_cast<std::ptrdiff_t>(2 * mm * nn));
      const auto want = reference<T>(m, n, k, T{2}, a_mid, b_mid, c_mid, overwrite && k > 0);
      using memory = Kokkos::HostSpace;
      using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
      const Kokkos::View<const T*, memory> av(Kokkos::View<const T*, memory, unmanaged>(a.data(), a.size()));
      const Kokkos::View<const T*, memory> bv(Kokkos::View<const T*, memory, unmanaged>(b.data(), b.size()));
      const Kokkos::View<T*, memory> cv(Kokkos::View<T*, memory, unmanaged>(c.data(), c.size()));
      kernels::tile_gemm<host, T, memory>(p, T{2}, av, bv, cv, true);
      const std::vector<T> got(c.begin() + static_cast<std::ptrdiff_t>(mm * nn), c.begin() + static_cast<std::ptrdiff_t>(2 * mm * nn));
      // A product with an empty inner dimension leaves C alone (nothing to overwrite with).
      check_close(got, k > 0 ? want : c_mid, k);
    }
}
}  // namespace

TEST_CASE_TEMPLATE("packed tile kernel equals the triple loop at every block edge", T, double, float) {
  packed_kernel_matches_reference<T>();
}

TEST_CASE_TEMPLATE("BLAS tile kernel equals the triple loop, accumulating and overwriting", T, double, float) {
  blas_tile_gemm_matches_reference<T>();
}

TEST_CASE("the SIMD kernel is compiled in exactly when the flags enable it") {
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  CHECK(kernels::has_simd_tile_kernel<double>);
  CHECK(kernels::has_simd_tile_kernel<float>);
#else
  CHECK_FALSE(kernels::has_simd_tile_kernel<double>);
  CHECK(kernels::packed_shape<double>::rows == 4);
#endif
}

}  // namespace tile_kernels_tests
