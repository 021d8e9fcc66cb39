// The checks of the composition tests (test_composition.cpp: whole-row distributions and the
// user's policies; test_composition_grids.cpp: the grid distributions): every operation against a
// serial reference on random and structured inputs: empty rows, empty ranks (more ranks than
// rows), rectangular shapes, duplicate triplets.
#pragma once
#include "test_support.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

namespace composition {

using namespace tessera;
using test::make_entries;
using test::random_entries;
using test::share;

// A user's backend with exactly the bulk exchange the concept asks for: one exchange of bytes (it
// hides mpi_rma's exchange of any record type), and neither of the optional start_exchange and
// exchange_planned. Every operation must run on it.
struct bytes_only_backend : mpi_rma {
  static constexpr std::string_view name() { return "bytes_only"; }
  [[nodiscard]] buckets<std::byte> exchange(const communicator& comm, const buckets<std::byte>& outgoing) const {
    return personalised_exchange(comm, outgoing);
  }
  void start_exchange() const = delete;
  void exchange_planned() const = delete;
};
static_assert(communication_backend<bytes_only_backend> && !starts_exchanges<bytes_only_backend> &&
              !exchanges_planned<bytes_only_backend>);

std::vector<double> dense_of(const random_entries& e) {
  std::vector<double> d(static_cast<std::size_t>(e.rows * e.cols), 0.0);
  for (std::size_t k = 0; k < e.all.size(); ++k)
    d[static_cast<std::size_t>(e.all.rows[k] * e.cols + e.all.cols[k])] += e.all.values[k];
  return d;
}

host_csr<double> csr_of(const std::vector<double>& d, global_index rows, global_index cols) {
  triplets<double> t;
  for (global_index i = 0; i < rows; ++i)
    for (global_index j = 0; j < cols; ++j)
      if (const double v = d[static_cast<std::size_t>(i * cols + j)]; v != 0.0) t.push_back(i, j, v);
  return host_csr<double>::from_triplets(rows, cols, t);
}

std::vector<double> multiply(const std::vector<double>& a, const std::vector<double>& b, global_index m, global_index k,
                             global_index n) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (global_index i = 0; i < m; ++i)
    for (global_index l = 0; l < k; ++l)
      for (global_index j = 0; j < n; ++j)
        c[static_cast<std::size_t>(i * n + j)] +=
            a[static_cast<std::size_t>(i * k + l)] * b[static_cast<std::size_t>(l * n + j)];
  return c;
}

std::vector<double> transposed(const std::vector<double>& a, global_index m, global_index n) {
  std::vector<double> t(a.size());
  for (global_index i = 0; i < m; ++i)
    for (global_index j = 0; j < n; ++j) t[static_cast<std::size_t>(j * m + i)] = a[static_cast<std::size_t>(i * n + j)];
  return t;
}

double x_value(global_index i, global_index j) { return static_cast<double>((2 * i + 3 * j) % 5) - 2.0; }

// A + A, and the entries equal to 1 kept (as 1), the rest dropped; global nnz counted once.
template <class P>
void check_elementwise(const dist_matrix<double, P>& a, const std::vector<double>& da, global_index m, global_index k) {
  const auto twice = add(a, a);
  std::vector<double> d2(da);
  for (auto& v : d2) v *= 2;
  CHECK(compare(twice, csr_of(d2, m, k)).equal);
  const auto ones = apply_drop_zeros(a, KOKKOS_LAMBDA(const double v) { return v == 1.0 ? 1.0 : 0.0; });
  std::vector<double> d1(da);
  for (auto& v : d1) v = v == 1.0 ? 1.0 : 0.0;
  CHECK(compare(ones, csr_of(d1, m, k)).equal);
  CHECK(ones.global_nnz() == csr_of(d1, m, k).nnz());
}

template <class P>
void check_operations(global_index m, global_index k, global_index n, double density, std::uint64_t seed) {
  const auto& comm = test::world();
  CAPTURE(m);
  CAPTURE(k);
  CAPTURE(n);
  const auto ea = make_entries(m, k, density, seed), eb = make_entries(k, n, density, seed + 1);
  const auto a = build_from_triplets<double, P>(comm, m, k, share(ea.all, comm));
  const auto b = build_from_triplets<double, P>(comm, k, n, share(eb.all, comm));
  const auto da = dense_of(ea), db = dense_of(eb);
  REQUIRE(compare(a, csr_of(da, m, k)).equal);

  SUBCASE("spgemm") {
    const auto c = spgemm(a, b);
    const auto r = compare(c, csr_of(multiply(da, db, m, k, n), m, n));
    CHECK_MESSAGE(r.equal, r.difference);
    CHECK(same_rows(c.mapping(), a.mapping()));
  }
  SUBCASE("transpose, both algorithms") {
    for (const auto algorithm : {transpose_algorithm::route, transpose_algorithm::slots}) {
      const auto t = transpose(a, algorithm);
      const auto r = compare(t, csr_of(transposed(da, m, k), k, m));
      CHECK_MESSAGE(r.equal, r.difference);
    }
  }
  SUBCASE("spmm, X split like the rows of A^T") {
    const global_index width = 3;
    dist_dense<double, P> x(comm, k, width);
    x.fill(x_value);
    const auto y = spmm(a, x);
    CHECK(same_rows(y.mapping(), a.mapping()));
    std::vector<double> dx(static_cast<std::size_t>(k * width));
    for (global_index i = 0; i < k; ++i)
      for (global_index j = 0; j < width; ++j) dx[static_cast<std::size_t>(i * width + j)] = x_value(i, j);
    const auto expected = multiply(da, dx, m, k, width);
    const auto got = y.gather_to_root();
    if (comm.rank() == 0) CHECK(*got == expected);
    // A second product reuses the plan and still agrees.
    const auto again = spmm(a, x).gather_to_root();
    if (comm.rank() == 0) CHECK(*again == expected);
  }
  SUBCASE("add, apply_drop_zeros, reduce_rows") {
    check_elementwise(a, da, m, k);
    const auto sums = reduce_rows(a).gather_to_root();
    if (comm.rank() == 0) {
      std::vector<double> expected(static_cast<std::size_t>(m), 0.0);
      for (global_index i = 0; i < m; ++i)
        for (global_index j = 0; j < k; ++j) expected[static_cast<std::size_t>(i)] += da[static_cast<std::size_t>(i * k + j)];
      CHECK(*sums == expected);
    }
  }
}

template <class P>
void check_shapes() {
  check_operations<P>(23, 17, 11, 0.3, 1);   // rectangular, empty rows, duplicates
  check_operations<P>(16, 16, 16, 0.15, 2);  // square
  check_operations<P>(3, 2, 5, 0.9, 3);      // more ranks than rows at 4 ranks: empty ranks
  check_operations<P>(1, 1, 1, 1.0, 4);
}

// The distribution options of a grid policy for small matrices: blocks small enough that every
// rank holds some, and (replicated_columns) a grid with more than one grid row where P allows, so
// the replicas are really there.
template <class D>
D small_blocks(int ranks) {
  const auto square = process_grid::squarest(ranks);
  if constexpr (std::is_same_v<D, block_cyclic_2d>)
    return block_cyclic_2d{.grid = square, .block_rows = 3, .block_cols = 2};
  else
    return replicated_columns{.grid = process_grid{square.q, square.p}, .block_cols = 2};
}

// The same operations on a grid distribution: spgemm is sparse SUMMA, transpose goes to the
// transposed grid, spmm takes X and Y by rows; element-wise operations keep the replicas.
template <class P>
void check_grid_operations(global_index m, global_index k, global_index n, double density, std::uint64_t seed) {
  const auto& comm = test::world();
  CAPTURE(m);
  CAPTURE(k);
  CAPTURE(n);
  using D = typename P::distribution_type;
  const build_options<P> options{.distribution = small_blocks<D>(comm.size())};
  const auto ea = make_entries(m, k, density, seed), eb = make_entries(k, n, density, seed + 1);
  const auto a = build_from_triplets<double, P>(comm, m, k, share(ea.all, comm), options);
  const auto b = build_from_triplets<double, P>(comm, k, n, share(eb.all, comm), options);
  const auto da = dense_of(ea), db = dense_of(eb);
  REQUIRE(compare(a, csr_of(da, m, k)).equal);

  SUBCASE("spgemm, SUMMA and every layer count") {
    for (int layers = 1; layers <= comm.size(); ++layers) {
      if (comm.size() % layers != 0) continue;
      const auto c = spgemm(a, b, spgemm_options{.layers = layers});
      const auto r = compare(c, csr_of(multiply(da, db, m, k, n), m, n));
      CHECK_MESSAGE(r.equal, r.difference);
    }
  }
  SUBCASE("transpose") {
    const auto t = transpose(a);
    const auto r = compare(t, csr_of(transposed(da, m, k), k, m));
    CHECK_MESSAGE(r.equal, r.difference);
  }
  SUBCASE("spmm, X and Y by rows") {
    const global_index width = 3;
    dist_dense<double, rebind_distribution_t<P, row_block>> x(comm, k, width);
    x.fill(x_value);
    std::vector<double> dx(static_cast<std::size_t>(k * width));
    for (global_index i = 0; i < k; ++i)
      for (global_index j = 0; j < width; ++j) dx[static_cast<std::size_t>(i * width + j)] = x_value(i, j);
    const auto got = spmm(a, x).gather_to_root();
    if (comm.rank() == 0) CHECK(*got == multiply(da, dx, m, k, width));
  }
  SUBCASE("add, apply_drop_zeros") { check_elementwise(a, da, m, k); }
}

template <class P>
void check_grid_shapes() {
  check_grid_operations<P>(23, 17, 11, 0.3, 1);
  check_grid_operations<P>(16, 16, 16, 0.15, 2);
  check_grid_operations<P>(3, 2, 5, 0.9, 3);  // more ranks than block rows: empty ranks
  check_grid_operations<P>(1, 1, 1, 1.0, 4);
}

}  // namespace composition
