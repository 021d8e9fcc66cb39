// Distributed SpMM against a serial reference, on every backend, with the
// communication volume asserted from the counters.
#include "test_support.hpp"

#include <cmath>
#include <set>

namespace spmm_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

double x_value(global_index i, global_index j) { return 0.25 * static_cast<double>((i * 7 + j * 3) % 11) - 1.0; }

// Y = A * X on every rank from the gathered A, summing each row in column order as the kernel does.
template <class T>
std::vector<double> reference_product(const host_csr<T>& a, global_index k) {
  std::vector<double> y(static_cast<std::size_t>(a.rows * k), 0.0);
  for (global_index i = 0; i < a.rows; ++i)
    for (offset_type e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
      for (global_index t = 0; t < k; ++t)
        y[static_cast<std::size_t>(i * k + t)] += static_cast<double>(a.values[static_cast<std::size_t>(e)]) *
                                                   x_value(a.col_idx[static_cast<std::size_t>(e)], t);
  return y;
}

template <class T, class P>
void check_product(const dist_matrix<T, P>& a, global_index k, spmm_options options = {}) {
  const auto& comm = a.comm();
  dist_dense<T, P> x(comm, a.num_cols(), k);
  x.fill([](global_index i, global_index j) { return static_cast<T>(x_value(i, j)); });  // exact in float too
  // Sums of at most a few dozen products of small binary fractions: exact but for the rounding of T.
  const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-12;
  const auto reference = reference_product(gather_to_all(a), k);
  const auto require_product = [&](const dist_dense<T, P>& y) {
    REQUIRE(y.num_rows() == a.num_rows());
    REQUIRE(y.num_vectors() == k);
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local());
    const global_index first = y.row_begin();
    for (std::size_t i = 0; i < host.extent(0); ++i)
      for (std::size_t t = 0; t < host.extent(1); ++t) {
        const double expected = reference[static_cast<std::size_t>((first + static_cast<global_index>(i)) * k) + t];
        INFO("row " << first + static_cast<global_index>(i) << " column " << t);
        REQUIRE(std::abs(static_cast<double>(host(i, t)) - expected) <= tolerance * (1.0 + std::abs(expected)));
      }
  };
  require_product(spmm(a, x, options));
  if (options.kernel == spmm_kernel::tessera) {
    INFO("without options (tessera's kernel compiled alone)");
    require_product(spmm(a, x));
    dist_dense<T, P> y(comm, a.mapping(), k);
    spmm(a, x, y);
    require_product(y);
  }
}

template <class P>
void check_inputs() {
  const auto& comm = test::world();
  for (global_index k : {1, 3, 16}) {
    check_product(generate::uniform_random<double, P>(comm, 37, 23, 4, 5), k);     // rectangular
    check_product(generate::uniform_random<double, P>(comm, 19, 61, 6, 9), k);     // wide
    check_product(generate::rmat<double, P>(comm, 7, 8, 3), k);                     // power law, empty rows
    check_product(generate::laplacian_2d<double, P>(comm, 9), k);                    // banded
  }
  check_product(generate::uniform_random<double, P>(comm, 3, 5, 2, 1), 4);          // fewer rows than ranks
  check_product(generate::uniform_random<double, P>(comm, 0, 0, 0, 1), 2);          // empty
  check_product(generate::uniform_random<double, P>(comm, 12, 7, 0, 1), 2);         // no entries
  check_product(generate::uniform_random<double, P>(comm, 8, 8, 3, 1), 0);          // no vectors
  // The same products through Kokkos-Kernels' multivector spmv.
  spmm_options kokkos_kernels;
  kokkos_kernels.kernel = spmm_kernel::kokkos_kernels;
  check_product(generate::uniform_random<double, P>(comm, 37, 23, 4, 5), 5, kokkos_kernels);
  check_product(generate::rmat<double, P>(comm, 7, 8, 3), 1, kokkos_kernels);
  check_product(generate::uniform_random<double, P>(comm, 0, 0, 0, 1), 2, kokkos_kernels);
  check_product(generate::uniform_random<double, P>(comm, 3, 5, 2, 1), 4, kokkos_kernels);
  // Rows of Y written with non-temporal stores (where the build has them, e.g. test_spmm_native).
  spmm_options streaming;
  streaming.streaming_store_bytes = 0;
  for (global_index k : {8, 32, 64}) {
    check_product(generate::uniform_random<double, P>(comm, 37, 23, 4, 5), k, streaming);
    check_product(generate::rmat<double, P>(comm, 7, 8, 3), k, streaming);
    check_product(generate::laplacian_2d<double, P>(comm, 9), k, streaming);
  }
  check_product(generate::uniform_random<double, P>(comm, 3, 5, 2, 1), 8, streaming);
  // Single precision: 16 floats fill an AVX-512 register, 8 an AVX2 one (the host kernel's
  // register rows in -march=native builds); 12 takes the portable loop.
  for (global_index k : {8, 12, 16, 32}) {
    check_product(generate::rmat<float, P>(comm, 7, 8, 3), k);
    check_product(generate::uniform_random<float, P>(comm, 37, 23, 4, 5), k, streaming);
  }
  // Widths outside the fixed ones: panels of four registers, the last one partial (masked) or whole.
  for (global_index k : {5, 100, 128, 130}) {
    check_product(generate::rmat<double, P>(comm, 7, 8, 3), k);
    check_product(generate::uniform_random<double, P>(comm, 37, 23, 4, 5), k, streaming);
  }
  for (global_index k : {72, 200, 256}) {
    check_product(generate::laplacian_2d<float, P>(comm, 9), k);
    check_product(generate::rmat<float, P>(comm, 7, 8, 3), k, streaming);
  }
}


// Block-diagonal: every rank's rows reference only its own X rows.
template <class P>
dist_matrix<double, P> block_diagonal(const communicator& comm, global_index n) {
  triplets<double> t;
  const row_block::mapping m(comm.size(), n, n);
  const global_index b = m.row_begin(comm.rank()), e = m.row_end(comm.rank());
  for (global_index i = b; i < e; ++i)
    for (global_index j = b; j < e; ++j) t.push_back(i, j, static_cast<double>(i + 2 * j));
  return build_from_triplets<double, P>(comm, n, n, t);
}

}  // namespace

TEST_CASE_TEMPLATE("spmm equals the serial reference", P, policy<row_block, csr, mpi_rma>,
                   policy<row_block, csr, aggregator>) {
  check_inputs<P>();
}

TEST_CASE("spmm on progress ranks equals the serial reference" * doctest::skip(!test::progress_ranks_requested())) {
  check_inputs<policy<row_block, csr, progress_rank>>();
}

TEST_CASE_TEMPLATE("spmm with a block-diagonal A sends nothing", P, policy<row_block, csr, mpi_rma>,
                   policy<row_block, csr, aggregator>) {
  const auto& comm = test::world();
  const auto a = block_diagonal<P>(comm, 17);
  check_product(a, 5);
  comm.stats().reset();
  dist_dense<double, P> x(comm, 17, 5);
  x.fill(x_value);
  (void)spmm(a, x);
  CHECK(spmm_plan_for(a, x).halo_rows() == 0);
  CHECK(reduce_traffic(comm, "spmm").total == traffic{});
}

TEST_CASE("a plan that fetches nothing serves every width; one that fetches refuses another width on every rank") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto diagonal = block_diagonal<P>(comm, 17);
  dist_dense<double, P> wide(comm, 17, 8);
  wide.fill(x_value);
  auto& plan = spmm_plan_for(diagonal, wide);
  CHECK(plan.any_width());
  const std::size_t kept = diagonal.plan_cache().size();
  for (const global_index k : {3, 1, 8, 0}) {
    dist_dense<double, P> x(comm, 17, k), y(comm, diagonal.mapping(), k);
    x.fill(x_value);
    CHECK(&spmm_plan_for(diagonal, x) == &plan);  // no new plan for a new width
    plan.apply(diagonal, x, y);
    const auto reference = reference_product(gather_to_all(diagonal), k);
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local());
    for (std::size_t i = 0; i < host.extent(0); ++i)
      for (std::size_t t = 0; t < host.extent(1); ++t)
        REQUIRE(std::abs(host(i, t) - reference[static_cast<std::size_t>((y.row_begin() + static_cast<global_index>(i)) * k) + t]) <= 1e-12);
  }
  CHECK(diagonal.plan_cache().size() == kept);

  // A banded A on several ranks fetches rows: its plan is for one width, and says so on every rank.
  const auto banded = test::tridiagonal<P>(comm, 40);
  dist_dense<double, P> x6(comm, 40, 6), x2(comm, 40, 2), y2(comm, banded.mapping(), 2);
  auto& fetching = spmm_plan_for(banded, x6);
  CHECK(fetching.any_width() == (comm.size() == 1));
  if (comm.size() > 1)
    test::require_rejected([&] { fetching.apply(banded, x2, y2); }, error_kind::dimension_mismatch, "not split as the plan expects");
}

TEST_CASE("spmm with a banded A fetches exactly the halo rows (mpi_rma)") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const global_index n = 40, k = 6;
  const auto a = test::tridiagonal<P>(comm, n);
  check_product(a, k);
  dist_dense<double, P> x(comm, n, k);
  x.fill(x_value);
  const row_block::mapping m(comm.size(), n, n);
  const int me = comm.rank(), p = comm.size();
  const std::size_t expected_halo = (me > 0 ? 1u : 0u) + (me + 1 < p ? 1u : 0u);
  auto& plan = spmm_plan_for(a, x);
  CHECK(plan.halo_rows() == expected_halo);
  CHECK(plan.gets_per_apply() == expected_halo);  // one row from each neighbour: one get each
  comm.stats().reset();
  (void)spmm(a, x);
  CHECK(comm.stats().of("spmm") == traffic{expected_halo, expected_halo * k * sizeof(double)});
  CHECK(a.plan_cache().size() == 1);  // the second product reused the first one's plan
}

TEST_CASE("spmm with scattered halo rows fetches one packed block per owner (mpi_rma)") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const global_index k = 5;
  const auto a = generate::rmat<double, P>(comm, 8, 4, 7);
  check_product(a, k);
  const global_index n = a.num_cols();
  dist_dense<double, P> x(comm, n, k);
  x.fill(x_value);
  // The halo and its owners, from the gathered A.
  const auto whole = gather_to_all(a);
  const row_block::mapping rows(comm.size(), a.num_rows(), a.num_rows());
  const row_block::mapping xs(comm.size(), n, n);
  const int me = comm.rank();
  std::set<global_index> halo;
  std::set<int> owners;
  for (global_index i = rows.row_begin(me); i < rows.row_end(me); ++i)
    for (offset_type e = whole.row_ptr[static_cast<std::size_t>(i)]; e < whole.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      const global_index c = whole.col_idx[static_cast<std::size_t>(e)];
      if (xs.row_owner(c) == me) continue;
      halo.insert(c);
      owners.insert(xs.row_owner(c));
    }
  auto& plan = spmm_plan_for(a, x);
  CHECK(plan.halo_rows() == halo.size());
  CHECK(plan.gets_per_apply() == owners.size());  // one get per owner, packed or a single run
  std::vector<std::int64_t> packed{static_cast<std::int64_t>(plan.packed_owners())};
  comm.allreduce_inplace(packed, MPI_SUM);
  if (comm.size() > 1) CHECK(packed[0] > 0);  // scattered rows: some owner packs
  comm.stats().reset();
  const auto y = spmm(a, x);
  CHECK(comm.stats().of("spmm") == traffic{owners.size(), halo.size() * k * sizeof(double)});
  check_product(a, k);  // again, through the other staging window
  check_product(a, k);
}

TEST_CASE("spmm reads X in place where X lies in node-shared memory" * doctest::skip(test::shared_windows_disabled())) {
  // Node-shared memory is host memory: a host space, also in a build whose default space is a device.
  using P = policy<row_block, csr, mpi_rma, Kokkos::DefaultHostExecutionSpace>;
  const auto& comm = test::world();
  const int p = comm.size();
  const auto require_equal = [&](const dist_dense<double, P>& y, const std::vector<double>& reference, double scale) {
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local());
    const auto k = static_cast<std::size_t>(y.num_vectors());
    for (std::size_t i = 0; i < host.extent(0); ++i)
      for (std::size_t t = 0; t < k; ++t) {
        const double expected = scale * reference[static_cast<std::size_t>(y.row_begin() + static_cast<global_index>(i)) * k + t];
        INFO("row " << y.row_begin() + static_cast<global_index>(i) << " column " << t);
        REQUIRE(std::abs(host(i, t) - expected) <= 1e-12 * (1.0 + std::abs(expected)));
      }
  };
  for (const int ranks_per_node : {0, 1, 2}) {
    // In place only where every rank's reads stay on its (emulated) node; otherwise fetched.
    const bool one_node = ranks_per_node == 0 || ranks_per_node >= p;
    for (const global_index k : {1, 8, 32}) {
      const std::vector<dist_matrix<double, P>> matrices{
          generate::rmat<double, P>(comm, 7, 8, 3),                // power law, empty rows
          generate::uniform_random<double, P>(comm, 37, 23, 4, 5),  // rectangular
          generate::laplacian_2d<double, P>(comm, 9),               // banded
          generate::uniform_random<double, P>(comm, 3, 5, 2, 1)};   // fewer rows than ranks
      for (const auto& a : matrices) {
        INFO(ranks_per_node << " ranks per node, k = " << k << ", A " << a.num_rows() << " x " << a.num_cols());
        dist_dense<double, P> x(comm, a.num_cols(), k);
        x.fill(x_value);
        const auto shared = share_on_node(x, ranks_per_node);
        REQUIRE(is_node_shared(shared));
        REQUIRE_FALSE(is_node_shared(x));
        const auto reference = reference_product(gather_to_all(a), k);
        // By default only where the shared memory has huge pages (most systems mount /dev/shm
        // without) or X is small: the default's choice is checked below; `always` reads in place.
        spmm_options always;
        always.read_x_in_place = x_in_place::always;
        require_equal(spmm(a, shared, always), reference, 1.0);  // plan made now: apply agrees by itself
        comm.stats().reset();
        require_equal(spmm(a, shared, always), reference, 1.0);  // kept plan: agreed in the lookup
        auto& plan = spmm_plan_for(a, shared, always);
        std::vector<std::int64_t> fetched{static_cast<std::int64_t>(plan.halo_rows())};
        comm.allreduce_inplace(fetched, MPI_SUM);
        const traffic moved = reduce_traffic(comm, "spmm").total;
        if (one_node || fetched[0] == 0) CHECK(moved == traffic{});  // nothing through the backend
        else CHECK(moved.bytes > 0);
        CHECK((plan.agree_x_rows_read(shared) == spmm_plan<double, P>::x_rows_read::in_place) ==
              (one_node && fetched[0] > 0));
        // The default reads in place where every rank's X has huge pages or is small; `never` fetches.
        const bool huge_or_small =
            comm.min(shared.node_shared()->huge_pages() ||
                             shared.node_shared()->node_span().size() * sizeof(double) <= x_in_place_small_bytes
                         ? 1
                         : 0) == 1;
        CHECK((spmm_plan_for(a, shared).agree_x_rows_read(shared) == spmm_plan<double, P>::x_rows_read::in_place) ==
              (one_node && fetched[0] > 0 && huge_or_small));
        spmm_options never;
        never.read_x_in_place = x_in_place::never;
        CHECK(spmm_plan_for(a, shared, never).agree_x_rows_read(shared) == spmm_plan<double, P>::x_rows_read::fetched);
        require_equal(spmm(a, shared, never), reference, 1.0);
        require_equal(spmm(a, shared), reference, 1.0);
        // New values written in place between products are read by the next one.
        const auto local = shared.local();
        for (std::size_t i = 0; i < local.extent(0); ++i)
          for (std::size_t t = 0; t < local.extent(1); ++t) local(i, t) *= 2.0;
        require_equal(spmm(a, shared, always), reference, 2.0);
        // Through the plan, and with one rank passing X in private memory: that product fetches.
        dist_dense<double, P> y(comm, a.mapping(), k);
        plan.apply(a, shared, y);
        require_equal(y, reference, 2.0);
        dist_dense<double, P> doubled(comm, a.num_cols(), k);
        doubled.fill([](global_index i, global_index j) { return 2.0 * x_value(i, j); });
        const dist_dense<double, P>& mixed = comm.rank() == 0 ? doubled : shared;
        CHECK(plan.agree_x_rows_read(mixed) == spmm_plan<double, P>::x_rows_read::fetched);
        require_equal(spmm(a, mixed, always), reference, 2.0);
        plan.apply(a, mixed, y);
        require_equal(y, reference, 2.0);
      }
    }
  }
}

TEST_CASE("spmm rejects shapes that do not match, on every rank") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& comm = test::world();
  const auto a = generate::uniform_random<double, P>(comm, 10, 12, 3, 2);
  dist_dense<double, P> wrong(comm, 11, 2);
  try {
    (void)spmm(a, wrong);
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::dimension_mismatch);
    CHECK(std::string(e.what()).find("X has 11 rows") != std::string::npos);
  }
  dist_dense<double, P> x(comm, 12, 2);
  CHECK_THROWS_AS(spmv(a, x), error);
}

}  // namespace spmm_tests
