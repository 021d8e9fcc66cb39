// Distributed SpGEMM against a serial reference: semirings, masks, memory budgets,
// every backend; the rows of B fetched asserted from the counters.
#include "test_support.hpp"

#include <map>
#include <optional>
#include <set>

namespace spgemm_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

template <class Semiring>
host_csr<double> reference_product(const host_csr<double>& a, const host_csr<double>& b, Semiring ring,
                                   const host_csr<double>* mask = nullptr) {
  triplets<double> t;
  for (global_index i = 0; i < a.rows; ++i) {
    std::map<global_index, double> row;
    for (offset_type e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      const auto k = static_cast<std::size_t>(a.col_idx[static_cast<std::size_t>(e)]);
      for (offset_type f = b.row_ptr[k]; f < b.row_ptr[k + 1]; ++f) {
        const double p = ring.multiply(a.values[static_cast<std::size_t>(e)], b.values[static_cast<std::size_t>(f)]);
        auto [it, fresh] = row.try_emplace(b.col_idx[static_cast<std::size_t>(f)], p);
        if (!fresh) it->second = ring.add(it->second, p);
      }
    }
    for (const auto& [j, v] : row)
      if (mask == nullptr || mask->at(i, j)) t.push_back(i, j, v);
  }
  return host_csr<double>::from_triplets(a.rows, b.cols, t, combine::any{});
}

/// C's local block is well formed: columns strictly ascending within rows, the column map
/// strictly ascending, and every mapped column used.
template <class P>
void require_canonical(const dist_matrix<double, P>& c) {
  const auto ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.local().row_ptr);
  const auto col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.local().col_idx);
  const auto map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.col_map());
  std::vector<bool> used(map.extent(0), false);
  for (local_index r = 0; r < c.local_rows(); ++r)
    for (auto e = ptr(static_cast<std::size_t>(r)); e < ptr(static_cast<std::size_t>(r) + 1); ++e) {
      const auto j = col(static_cast<std::size_t>(e));
      REQUIRE(j >= 0);
      REQUIRE(static_cast<std::size_t>(j) < used.size());
      used[static_cast<std::size_t>(j)] = true;
      if (e > ptr(static_cast<std::size_t>(r))) REQUIRE(col(static_cast<std::size_t>(e) - 1) < j);
    }
  for (std::size_t j = 0; j < used.size(); ++j) {
    REQUIRE(used[j]);
    if (j > 0) REQUIRE(map(j - 1) < map(j));
  }
}

template <class P, class Semiring = semirings::plus_times>
void check(const dist_matrix<double, P>& a, const dist_matrix<double, P>& b, Semiring ring = {}) {
  INFO("A " << a.num_rows() << " x " << a.num_cols() << ", B " << b.num_rows() << " x " << b.num_cols());
  spgemm_options<Semiring> options;
  options.ring = ring;
  const auto c = spgemm(a, b, options);
  CHECK(c.num_rows() == a.num_rows());
  CHECK(c.num_cols() == b.num_cols());
  CHECK(c.mapping().row_offsets() == a.mapping().row_offsets());
  const auto reference = reference_product(gather_to_all(a), gather_to_all(b), ring);
  test::require_equal(c, reference, 1e-12);
  require_canonical(c);
  if constexpr (std::is_same_v<Semiring, semirings::plus_times>) {
    // Without options: the plain product (only the space's default kernel compiled).
    const auto plain = spgemm(a, b);
    test::require_equal(plain, reference, 1e-12);
    require_canonical(plain);
  }
  // Every kernel the semiring allows, explicitly (the default is Gustavson on host spaces).
  // Gustavson runs on host spaces only (it refuses the others with an error of its own).
  std::vector<spgemm_kernel> kernels{spgemm_kernel::esc};
  if constexpr (Kokkos::SpaceAccessibility<typename P::execution_space, Kokkos::HostSpace>::accessible)
    kernels.push_back(spgemm_kernel::gustavson);
  else
    MESSAGE("skipped: the Gustavson kernel on a device execution space (host-only)");
  if constexpr (std::is_same_v<Semiring, semirings::plus_times>) kernels.push_back(spgemm_kernel::kokkos_kernels);
  for (const auto kernel : kernels) {
    INFO("kernel " << static_cast<int>(kernel));
    options.kernel = kernel;
    const auto ck = spgemm(a, b, options);
    test::require_equal(ck, reference, 1e-12);
    require_canonical(ck);
  }
}

template <class P>
void check_inputs() {
  const auto& comm = test::world();
  check(generate::uniform_random<double, P>(comm, 23, 31, 4, 1), generate::uniform_random<double, P>(comm, 31, 17, 3, 2));
  const auto r = generate::rmat<double, P>(comm, 7, 8, 3);
  check(r, r);
  check(r, transpose(r));
  const auto l = generate::laplacian_2d<double, P>(comm, 6);
  check(l, l);
  check(generate::uniform_random<double, P>(comm, 3, 2, 2, 1), generate::uniform_random<double, P>(comm, 2, 5, 2, 3));
  check(generate::uniform_random<double, P>(comm, 0, 4, 0, 1), generate::uniform_random<double, P>(comm, 4, 3, 2, 3));
  check(generate::uniform_random<double, P>(comm, 8, 8, 0, 1), generate::uniform_random<double, P>(comm, 8, 8, 3, 3));
  // Dense-ish rows (longer than the insertion-sort limit) and an empty B.
  const auto dense = generate::uniform_random<double, P>(comm, 40, 90, 60, 4);
  check(dense, generate::uniform_random<double, P>(comm, 90, 70, 30, 5));
  check(dense, generate::uniform_random<double, P>(comm, 90, 70, 0, 6));
  // Rows longer than the insertion-sort limit but sparse in a wide column space (sorted, not bitmapped).
  check(generate::uniform_random<double, P>(comm, 10, 30000, 40, 7), generate::uniform_random<double, P>(comm, 30000, 30000, 1, 8));
}


}  // namespace

TEST_CASE_TEMPLATE("spgemm equals the serial product", P, policy<row_block, csr, mpi_rma>,
                   policy<row_block, csr, aggregator>) {
  check_inputs<P>();
}

TEST_CASE("spgemm on progress ranks equals the serial product" * doctest::skip(!test::progress_ranks_requested())) {
  check_inputs<policy<row_block, csr, progress_rank>>();
}

// A user's semiring without an identity (namespace scope: device kernels cannot take a local class).
struct plus_times_without_identity {
  KOKKOS_INLINE_FUNCTION double add(double x, double y) const { return x + y; }
  KOKKOS_INLINE_FUNCTION double multiply(double x, double y) const { return x * y; }
};

TEST_CASE("spgemm over min-plus, max-times and or-and") {
  using P = policy<row_block, csr, aggregator>;
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, P>(comm, 20, 20, 4, 8);
  const auto b = generate::rmat<double, P>(comm, 5, 4, 2);  // 32 x 32
  const auto a32 = generate::uniform_random<double, P>(comm, 20, 32, 3, 9);
  check(a, a, semirings::min_plus{});
  check(a32, b, semirings::max_times{});
  check(a32, b, semirings::or_and{});
  // Rows long enough for the Gustavson kernel's bitmap path (where a semiring's identity lets it
  // add every product unconditionally) beside short ones, in one product; and a semiring of the
  // user's without an identity, which takes the path that tests each entry for being new.
  static_assert(semiring_with_identity<semirings::min_plus, double> &&
                !semiring_with_identity<plus_times_without_identity, double>);
  const auto r = generate::rmat<double, P>(comm, 7, 8, 3);
  const auto wide = generate::uniform_random<double, P>(comm, 30, 90, 40, 10);
  const auto tall = generate::uniform_random<double, P>(comm, 90, 60, 20, 11);
  check(r, r, semirings::min_plus{});
  check(r, r, semirings::max_times{});
  check(r, r, plus_times_without_identity{});
  check(wide, tall, semirings::min_plus{});
  check(wide, tall, semirings::or_and{});
  check(wide, tall, plus_times_without_identity{});
}

TEST_CASE("masked spgemm keeps only the mask's entries") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, P>(comm, 25, 19, 4, 4);
  const auto b = generate::uniform_random<double, P>(comm, 19, 22, 4, 5);
  const auto mask = generate::uniform_random<double, P>(comm, 25, 22, 6, 6);
  const auto c = spgemm_masked(mask, a, b);
  const auto m = gather_to_all(mask);
  test::require_equal(c, reference_product(gather_to_all(a), gather_to_all(b), semirings::plus_times{}, &m), 1e-12);
  spgemm_options<> kokkos_kernels;
  kokkos_kernels.kernel = spgemm_kernel::kokkos_kernels;
  CHECK_THROWS_AS([&] { [[maybe_unused]] const auto product = spgemm_masked(mask, a, b, kokkos_kernels); }(), error);  // it has no masks
  const auto wrong = generate::uniform_random<double, P>(comm, 25, 21, 6, 6);
  CHECK_THROWS_AS([&] { [[maybe_unused]] const auto product = spgemm_masked(wrong, a, b); }(), error);
}

namespace {
// The serial reference of GrB_mxm's pieces on gathered matrices.

// The entries of `c` that `keep(i, j)` accepts.
template <class Keep>
host_csr<double> filtered(const host_csr<double>& c, Keep keep) {
  triplets<double> t;
  for (global_index i = 0; i < c.rows; ++i)
    for (offset_type e = c.row_ptr[static_cast<std::size_t>(i)]; e < c.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      const auto j = c.col_idx[static_cast<std::size_t>(e)];
      if (keep(i, j)) t.push_back(i, j, c.values[static_cast<std::size_t>(e)]);
    }
  return host_csr<double>::from_triplets(c.rows, c.cols, t);
}

// C ⊕ T with `add` where both store an entry.
template <class Add>
host_csr<double> accumulated(const host_csr<double>& c, const host_csr<double>& t, Add add) {
  triplets<double> all;
  for (const auto* m : {&c, &t})
    for (global_index i = 0; i < m->rows; ++i)
      for (offset_type e = m->row_ptr[static_cast<std::size_t>(i)]; e < m->row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
        all.push_back(i, m->col_idx[static_cast<std::size_t>(e)], m->values[static_cast<std::size_t>(e)]);
  return host_csr<double>::from_triplets(c.rows, c.cols, all, add);
}

// The stored value of (i, j), if any.
std::optional<double> stored(const host_csr<double>& m, global_index i, global_index j) {
  for (offset_type e = m.row_ptr[static_cast<std::size_t>(i)]; e < m.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
    if (m.col_idx[static_cast<std::size_t>(e)] == j) return m.values[static_cast<std::size_t>(e)];
  return std::nullopt;
}
}  // namespace

TEST_CASE_TEMPLATE("GraphBLAS mxm: transposed inputs, valued and complemented masks, accumulate into C", P,
                   policy<row_block, csr, mpi_rma>, policy<row_block, coo, aggregator>) {
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, P>(comm, 17, 13, 3, 31);   // 17 x 13
  const auto b = generate::uniform_random<double, P>(comm, 17, 11, 3, 32);   // 17 x 11
  const auto sq = generate::uniform_random<double, P>(comm, 13, 13, 3, 33);  // 13 x 13
  const auto ha = gather_to_all(a), hb = gather_to_all(b), hsq = gather_to_all(sq);
  const semirings::plus_times ring;

  SUBCASE("A^T * B and A^T * A^T^T: transposes done by the operation") {
    test::require_equal(spgemm(a, b, spgemm_options{.transpose_a = true}),
                        reference_product(test::transposed(ha), hb, ring), 1e-12);
    test::require_equal(spgemm(sq, sq, spgemm_options{.transpose_a = true, .transpose_b = true}),
                        reference_product(test::transposed(hsq), test::transposed(hsq), ring), 1e-12);
    test::require_equal(spgemm(b, a, spgemm_options{.ring = semirings::min_plus{}, .transpose_a = true}),
                        reference_product(test::transposed(hb), ha, semirings::min_plus{}), 1e-12);
  }
  // A mask with explicit zeros: a structural mask selects them, a valued one does not.
  triplets<double> mt;
  for (global_index i = comm.rank(); i < 13; i += comm.size())
    for (global_index j = 0; j < 11; j += 1 + (i % 3)) mt.push_back(i, j, (i + j) % 2 == 0 ? 0.0 : 1.5);
  const auto mask = build_from_triplets<double, P>(comm, 13, 11, mt);
  const auto hm = gather_to_all(mask);
  const auto full = reference_product(test::transposed(ha), hb, ring);
  const auto structure = [&](global_index i, global_index j) { return stored(hm, i, j).has_value(); };
  const auto values = [&](global_index i, global_index j) { return stored(hm, i, j).value_or(0.0) != 0.0; };
  SUBCASE("structural, valued and complemented masks") {
    test::require_equal(spgemm_masked(mask, a, b, spgemm_options{.transpose_a = true}), filtered(full, structure), 1e-12);
    test::require_equal(spgemm_masked(mask, a, b, spgemm_options{.transpose_a = true, .mask = mask_kind::values}),
                        filtered(full, values), 1e-12);
    test::require_equal(spgemm_masked(mask, a, b, spgemm_options{.transpose_a = true, .complement_mask = true}),
                        filtered(full, [&](global_index i, global_index j) { return !structure(i, j); }), 1e-12);
    test::require_equal(
        spgemm_masked(mask, a, b,
                      spgemm_options{.transpose_a = true, .mask = mask_kind::values, .complement_mask = true}),
        filtered(full, [&](global_index i, global_index j) { return !values(i, j); }), 1e-12);
  }
  SUBCASE("accumulate: C = C + A^T B, and C<M> = C min (A^T B) under a complemented valued mask") {
    auto c = generate::uniform_random<double, P>(comm, 13, 11, 2, 34);
    const auto c0 = gather_to_all(c);
    spgemm_accumulate(a, b, c, spgemm_options{.transpose_a = true});
    test::require_equal(c, accumulated(c0, full, std::plus<double>{}), 1e-12);

    const auto c1 = gather_to_all(c);
    const auto tropical = reference_product(test::transposed(ha), hb, semirings::min_plus{});
    spgemm_accumulate(mask, a, b, c,
                      spgemm_options{.ring = semirings::min_plus{}, .transpose_a = true, .mask = mask_kind::values,
                                     .complement_mask = true});
    const auto selected = filtered(tropical, [&](global_index i, global_index j) { return !values(i, j); });
    test::require_equal(c, accumulated(c1, selected, [](double x, double y) { return std::min(x, y); }), 1e-12);
  }
  SUBCASE("bad shapes and masks are refused on every rank") {
    test::require_rejected([&] { (void)spgemm(a, b); }, error_kind::dimension_mismatch, "A is 17 x 13 but B is 17 x 11");
    const auto wrong = generate::uniform_random<double, P>(comm, 13, 12, 2, 35);
    test::require_rejected([&] { (void)spgemm_masked(wrong, a, b, spgemm_options{.transpose_a = true, .complement_mask = true}); },
                           error_kind::dimension_mismatch, "the mask is 13 x 12 but A * B is 13 x 11");
    auto c = generate::uniform_random<double, P>(comm, 13, 12, 2, 36);
    test::require_rejected([&] { spgemm_accumulate(a, b, c, spgemm_options{.transpose_a = true}); },
                           error_kind::dimension_mismatch, "add: A is 13 x 12 but B is 13 x 11");
  }
}

TEST_CASE("a memory budget splits the product into batches with the same result") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto r = generate::rmat<double, P>(comm, 7, 8, 5);
  std::size_t batches = 0;
  spgemm_options<> tiny;
  tiny.memory_budget_bytes = 64;  // four products: nearly every row is its own batch
  tiny.batches = &batches;
  const auto c = spgemm(r, r, tiny);
  test::require_equal(c, reference_product(gather_to_all(r), gather_to_all(r), semirings::plus_times{}), 1e-12);
  std::size_t unlimited = 0;
  spgemm_options<> all;
  all.batches = &unlimited;
  (void)spgemm(r, r, all);
  CHECK(unlimited == (r.local_rows() > 0 ? 1u : 0u));
  CHECK(comm.max(batches) > 8);
}

TEST_CASE("spgemm fetches only the rows of B that A references (mpi_rma)") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const global_index n = 30;
  const auto a = test::tridiagonal<P>(comm, n);
  comm.stats().reset();
  const auto c = spgemm(a, a);
  test::require_equal(c, reference_product(gather_to_all(a), gather_to_all(a), semirings::plus_times{}), 1e-12);
  // Per halo row: one get of its 2 row pointers, one of its columns, one of its values.
  const row_block::mapping m(comm.size(), n, n);
  std::uint64_t messages = 0, bytes = 0;
  for (global_index row : {m.row_begin(comm.rank()) - 1, m.row_end(comm.rank())}) {
    if (row < 0 || row >= n || m.row_begin(comm.rank()) == m.row_end(comm.rank())) continue;
    const std::uint64_t length = row == 0 || row == n - 1 ? 2 : 3;
    messages += 3;
    bytes += 2 * 8 + length * (8 + 8);
  }
  CHECK(comm.stats().of("spgemm") == traffic{messages, bytes});
}

TEST_CASE("repeated products reuse and grow the staging windows") {
  // Products on one communicator share the windows B's rows are staged in; a larger B grows
  // them collectively, a smaller one after it reuses them, stale contents never leak in.
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto small = generate::laplacian_2d<double, P>(comm, 4);
  const auto large = generate::rmat<double, P>(comm, 8, 8, 11);
  const auto mid = generate::laplacian_2d<double, P>(comm, 9);
  for (int round = 0; round < 2; ++round)
    for (const auto* m : {&small, &large, &mid, &small}) {
      const auto c = spgemm(*m, *m);
      test::require_equal(c, reference_product(gather_to_all(*m), gather_to_all(*m), semirings::plus_times{}), 1e-12);
    }
}

TEST_CASE("spgemm_plan::multiply_plain multiplies through a plan of the default options only") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto a = generate::rmat<double, P>(comm, 6, 4, 11);
  const auto reference = reference_product(gather_to_all(a), gather_to_all(a), semirings::plus_times{});
  spgemm_plan<double, P> plain(a, a);
  test::require_equal(plain.multiply_plain(a, a), reference, 1e-12);
  test::require_equal(plain.multiply_plain(a, a), reference, 1e-12);  // reused
  spgemm_options<> esc;
  esc.kernel = spgemm_kernel::esc;
  spgemm_plan<double, P> chosen(a, a, esc);
  test::require_rejected([&] { (void)chosen.multiply_plain(a, a); }, error_kind::invalid_argument, "multiply_plain");
  test::require_equal(chosen.apply(a, a), reference, 1e-12);
}

TEST_CASE("the Gustavson kernel refuses masks and memory budgets") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, P>(comm, 12, 12, 3, 7);
  spgemm_options<> gustavson;
  gustavson.kernel = spgemm_kernel::gustavson;
  CHECK_THROWS_AS([&] { [[maybe_unused]] const auto product = spgemm_masked(a, a, a, gustavson); }(), error);
  gustavson.memory_budget_bytes = 1024;
  CHECK_THROWS_AS([&] { [[maybe_unused]] const auto product = spgemm(a, a, gustavson); }(), error);
}

static void check_gustavson_kernel(bool table) {
  // A (3 x 3) times B^ whose rows are local row 1, fetched row 0, local row 0 of a 2-row B;
  // accumulator columns 0..49, B's local column j is accumulator column 2j + 1 (translated) or j + 10 (shifted).
  INFO("table " << table);
  using mem = Kokkos::HostSpace;
  auto view_of = [](auto&& values, const char* label) {
    using V = typename std::decay_t<decltype(values)>::value_type;
    return to_view<V, mem>(std::vector<V>(values.begin(), values.end()), label);
  };
  kernels::gustavson_operands<double, mem> op;
  op.a_ptr = view_of(std::vector<offset_type>{0, 2, 2, 5}, "a_ptr");  // row 1 empty
  op.a_col = view_of(std::vector<local_index>{0, 1, 2, 1, 0}, "a_col");
  op.a_val = view_of(std::vector<double>{1, 2, 3, 4, 5}, "a_val");
  op.source = view_of(std::vector<local_index>{1, -1, 0}, "source");
  // Local B: row 0 holds local columns 24..0 (descending: 25 entries), row 1 columns 3, 1.
  std::vector<offset_type> b_ptr{0, 25, 27};
  std::vector<local_index> b_col;
  std::vector<double> b_val;
  for (local_index j = 24; j >= 0; --j) {
    b_col.push_back(j);
    b_val.push_back(1.0 + j);
  }
  b_col.insert(b_col.end(), {3, 1});
  b_val.insert(b_val.end(), {10, 20});
  op.b_ptr = view_of(b_ptr, "b_ptr");
  op.b_val = view_of(b_val, "b_val");
  std::vector<local_index> b_to_acc(25);
  for (std::size_t j = 0; j < b_to_acc.size(); ++j) b_to_acc[j] = static_cast<local_index>(table ? 2 * j + 1 : j + 10);
  if (table) {  // columns translated by the caller
    std::vector<local_index> translated;
    for (const auto j : b_col) translated.push_back(b_to_acc[static_cast<std::size_t>(j)]);
    op.b_col = view_of(translated, "b_col");
  } else {  // B's own columns, shifted by the kernel
    op.b_col = view_of(b_col, "b_col");
    op.b_offset = 10;
  }
  // Fetched row 0: accumulator columns 40, 3, 0 (3 is also B's local column 1).
  op.h_ptr = view_of(std::vector<offset_type>{0, 3}, "h_ptr");
  op.h_col = view_of(std::vector<local_index>{40, 3, 0}, "h_col");
  op.h_val = view_of(std::vector<double>{7, 8, 9}, "h_val");
  op.width = 50;
  const auto c = kernels::gustavson(Kokkos::DefaultHostExecutionSpace{}, op, semirings::plus_times{});

  // Expected, dense over accumulator columns.
  std::vector<std::map<local_index, double>> expected(3);
  const std::vector<offset_type> a_ptr{0, 2, 2, 5};
  const std::vector<local_index> a_col{0, 1, 2, 1, 0};
  const std::vector<double> a_val{1, 2, 3, 4, 5};
  for (std::size_t i = 0; i < 3; ++i)
    for (auto e = a_ptr[i]; e < a_ptr[i + 1]; ++e) {
      const auto k = static_cast<std::size_t>(a_col[static_cast<std::size_t>(e)]);
      const double a = a_val[static_cast<std::size_t>(e)];
      if (k == 1) {
        expected[i][40] += a * 7;
        expected[i][3] += a * 8;
        expected[i][0] += a * 9;
      } else {
        const std::size_t r = k == 0 ? 1 : 0;
        for (auto f = b_ptr[r]; f < b_ptr[r + 1]; ++f)
          expected[i][b_to_acc[static_cast<std::size_t>(b_col[static_cast<std::size_t>(f)])]] +=
              a * b_val[static_cast<std::size_t>(f)];
      }
    }
  std::set<local_index> all;
  for (const auto& row : expected)
    for (const auto& [u, v] : row) all.insert(u);
  const auto used = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.used);
  REQUIRE(used.extent(0) == all.size());
  std::size_t j = 0;
  for (const auto u : all) CHECK(used(j++) == u);
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(c.row_ptr(i + 1) - c.row_ptr(i) == static_cast<offset_type>(expected[i].size()));
    auto e = static_cast<std::size_t>(c.row_ptr(i));
    for (const auto& [u, v] : expected[i]) {
      CHECK(used(static_cast<std::size_t>(c.col_idx(e))) == u);
      CHECK(c.values(e) == doctest::Approx(v));
      ++e;
    }
  }
}

TEST_CASE("kernels::gustavson on one rank: fetched rows, translated or shifted columns, long rows") {
  check_gustavson_kernel(true);
  check_gustavson_kernel(false);
}

TEST_CASE("spgemm rejects mismatched shapes on every rank") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, P>(comm, 10, 12, 3, 2);
  try {
    (void)spgemm(a, a);
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::dimension_mismatch);
  }
}

TEST_CASE("kernels::sort_rows sorts every row by column, values alongside") {
  // Rows of 0, 1, 7 (insertion sort), 33 already sorted, 40 and 5000 entries (radix sort: keys
  // needing one, two and four byte passes), with duplicate keys; sort_by_key's heap sort too.
  using exec = Kokkos::DefaultHostExecutionSpace;
  const std::vector<std::int64_t> lengths{0, 1, 7, 33, 40, 5000, 5000, 5000};
  const std::vector<std::int32_t> largest{1, 5, 100, 1000, 200, 255, 60000, 2000000000};
  std::vector<offset_type> ptr{0};
  for (auto n : lengths) ptr.push_back(ptr.back() + n);
  Kokkos::View<offset_type*, Kokkos::HostSpace> row_ptr("row_ptr", ptr.size());
  Kokkos::View<std::int32_t*, Kokkos::HostSpace> cols("cols", static_cast<std::size_t>(ptr.back()));
  Kokkos::View<double*, Kokkos::HostSpace> values("values", static_cast<std::size_t>(ptr.back()));
  std::uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    row_ptr(r + 1) = ptr[r + 1];
    for (auto e = ptr[r]; e < ptr[r + 1]; ++e) {
      const auto k = r == 3 ? static_cast<std::int32_t>(e - ptr[r])  // already in order
                            : static_cast<std::int32_t>((next() >> 33) % static_cast<std::uint64_t>(largest[r] + 1));
      cols(static_cast<std::size_t>(e)) = k;
      values(static_cast<std::size_t>(e)) = 0.5 * k;  // each value follows its key
    }
  }
  std::vector<std::int32_t> expected(cols.data(), cols.data() + cols.extent(0));
  for (std::size_t r = 0; r < lengths.size(); ++r) std::sort(expected.begin() + ptr[r], expected.begin() + ptr[r + 1]);
  kernels::sort_rows(exec{}, row_ptr, cols, values);
  for (std::size_t e = 0; e < expected.size(); ++e) {
    REQUIRE(cols(e) == expected[e]);
    REQUIRE(values(e) == 0.5 * expected[e]);
  }
  std::vector<std::int64_t> keys{9, 3, 7, 3, 1, 8, 2, 6, 5, 4, 0, 11, 10};
  for (const std::int64_t n : {0, 1, 5, 40, 300}) {  // sort_keys: insertion and heap sort
    std::vector<std::int64_t> k(static_cast<std::size_t>(n));
    for (auto& x : k) x = static_cast<std::int64_t>((next() >> 33) % 50);
    auto sorted = k;
    std::sort(sorted.begin(), sorted.end());
    kernels::sort_keys(k.data(), n);
    CHECK(k == sorted);
  }
  std::vector<double> vals(keys.begin(), keys.end());
  kernels::heap_sort(keys.data(), vals.data(), static_cast<std::int64_t>(keys.size()));
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  for (std::size_t i = 0; i < keys.size(); ++i) CHECK(vals[i] == static_cast<double>(keys[i]));
}

}  // namespace spgemm_tests
