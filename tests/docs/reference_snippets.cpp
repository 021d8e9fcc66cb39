// The reference pages' code, compiled and run: every ```cpp block of docs/design.md,
// docs/matrices.md, docs/operations.md, docs/errors.md, docs/communication.md, docs/block_sparse.md
// and the reference sections of docs/custom-policies.md is cut from this file (or from the examples
// and tests the suite already builds), line for line; the test_docs_snippets_* tests fail if a
// page and its source drift apart. Each snippet is followed by checks of what the page says it does.
//
// A doctest MPI program (test_docs_reference_snippets, 1-4 ranks, each rank count in its own
// working directory, where the Matrix Market snippets write their files; README.md's program is
// readme_program.cpp). Public API only.

#include "test_support.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace reference_snippets_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

// Builds whose default execution space is a device skip the host-only snippets (node-shared memory,
// the packed tile kernel, a callable that throws): the pages say they are refused there.
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
#define TESSERA_DOCS_DEVICE_BUILD 1
#endif

namespace {

// The value of entry (i, j) of a gathered matrix, 0 where it stores none.
double value_at(const tessera::host_csr<double>& a, tessera::global_index i, tessera::global_index j) {
  const auto row = static_cast<std::size_t>(i);
  for (auto e = a.row_ptr[row]; e < a.row_ptr[row + 1]; ++e)
    if (a.col_idx[static_cast<std::size_t>(e)] == j) return a.values[static_cast<std::size_t>(e)];
  return 0.0;
}

// Rank 0 writes `text` to `path` (in the test's working directory); every rank then sees it.
void write_file(const tessera::communicator& comm, const std::string& path, const std::string& text) {
  if (comm.rank() == 0) std::ofstream(path) << text;
  comm.barrier();
}

}  // namespace

// docs/matrices.md: a combine for build_from_triplets.
// At namespace scope: CUDA cannot launch a kernel whose template arguments name a local type.
struct keep_max { KOKKOS_INLINE_FUNCTION double operator()(double a, double b) const { return a < b ? b : a; } };

// docs/errors.md: a user's semiring that throws (host builds: device code cannot throw).
#ifndef TESSERA_DOCS_DEVICE_BUILD
struct my_semiring {
  KOKKOS_INLINE_FUNCTION double add(double a, double b) const { return a + b; }
  double multiply(double a, double b) const {
    if (a < 0 || b < 0) throw std::domain_error("my_semiring: negative weight");
    return a * b;
  }
};
#endif

// docs/custom-policies.md, "What a mapping may hold": a mapping with state (a table of row owners
// shared by its copies) and no default constructor.
// Rows dealt by a table of owners: a partitioner's output, say (tessera::row_partition is the
// built-in form of the same idea).
struct row_table {
  static constexpr std::string_view name() noexcept { return "row_table"; }
  std::shared_ptr<const std::vector<int>> owners;  // every row's rank; none: rows dealt cyclically

  class mapping {
   public:
    // No default constructor: tessera never asks for one (the tag above must have one).
    mapping(std::vector<int> owners, int ranks, tessera::global_index cols)
        : table_(std::make_shared<const table>(std::move(owners), ranks)), cols_(cols) {}

    [[nodiscard]] int num_ranks() const noexcept { return static_cast<int>(table_->first.size()) - 1; }
    [[nodiscard]] tessera::global_index global_rows() const noexcept { return std::ssize(table_->owner); }
    [[nodiscard]] tessera::global_index global_cols() const noexcept { return cols_; }
    [[nodiscard]] int owner(tessera::global_index i, tessera::global_index /*j*/) const { return row_owner(i); }
    [[nodiscard]] tessera::local_coordinate to_local(tessera::global_index i, tessera::global_index j) const {
      return {row_owner(i), local_row(i), j};
    }
    [[nodiscard]] tessera::global_coordinate to_global(int rank, tessera::global_index li, tessera::global_index lj) const {
      return {table_->rows[static_cast<std::size_t>(table_->first[static_cast<std::size_t>(rank)] + li)], lj};
    }
    [[nodiscard]] tessera::local_extents extents(int rank) const {
      const auto r = static_cast<std::size_t>(rank);
      return {table_->first[r + 1] - table_->first[r], cols_};
    }

    [[nodiscard]] int row_owner(tessera::global_index i) const { return table_->owner[static_cast<std::size_t>(i)]; }
    [[nodiscard]] tessera::global_index local_row(tessera::global_index i) const {
      return table_->local[static_cast<std::size_t>(i)];
    }
    // The same rows keep their places (the table is shared, not copied); other rows are dealt cyclically.
    [[nodiscard]] mapping with_shape(tessera::global_index rows, tessera::global_index cols) const {
      if (rows == global_rows()) {
        mapping same = *this;
        same.cols_ = cols;
        return same;
      }
      return {cyclic(rows, num_ranks()), num_ranks(), cols};
    }

    // Equal when every entry has the same place: the same table (one pointer test) or equal contents.
    friend bool operator==(const mapping& a, const mapping& b) noexcept {
      return a.cols_ == b.cols_ && (a.table_ == b.table_ || (a.table_->owner == b.table_->owner &&
                                                             a.table_->first.size() == b.table_->first.size()));
    }

    static std::vector<int> cyclic(tessera::global_index rows, int ranks) {
      std::vector<int> owner(static_cast<std::size_t>(rows));
      for (std::size_t i = 0; i < owner.size(); ++i) owner[i] = static_cast<int>(i % static_cast<std::size_t>(ranks));
      return owner;
    }

   private:
    struct table {  // built once, then only read: every copy shares it
      table(std::vector<int> owners, int ranks) : owner(std::move(owners)), local(owner.size()), rows(owner.size()) {
        first.assign(static_cast<std::size_t>(ranks) + 1, 0);
        for (std::size_t i = 0; i < owner.size(); ++i) local[i] = first[static_cast<std::size_t>(owner[i]) + 1]++;
        for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r) first[r + 1] += first[r];
        for (std::size_t i = 0; i < owner.size(); ++i)
          rows[static_cast<std::size_t>(first[static_cast<std::size_t>(owner[i])] + local[i])] = static_cast<tessera::global_index>(i);
      }
      std::vector<int> owner;                  // per row: its rank
      std::vector<tessera::global_index> local, rows, first;  // per row: local position; rows by rank; per rank + 1
    };
    std::shared_ptr<const table> table_;
    tessera::global_index cols_ = 0;
  };

  [[nodiscard]] mapping make_mapping(int ranks, tessera::global_index rows, tessera::global_index cols) const {
    return {owners ? *owners : mapping::cyclic(rows, ranks), ranks, cols};
  }
};
static_assert(tessera::whole_row_mapping<row_table::mapping>);
static_assert(!std::default_initializable<row_table::mapping>);  // the concepts do not ask for it

TEST_CASE("design.md: policies, rebinding and a mapping's questions") {
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  using Q = tessera::rebind_storage_t<P, tessera::csc>;                   // row_block x csc x mpi_rma
  static_assert(std::is_same_v<tessera::rebind_backend_t<Q, tessera::aggregator>,
                               tessera::policy<tessera::row_block, tessera::csc, tessera::aggregator>>);
  const auto map = tessera::row_block{}.make_mapping(/*ranks*/ 4, /*rows*/ 10, /*cols*/ 6);  // rows 3, 3, 2, 2
  const tessera::local_coordinate where = map.to_local(7, 5);             // {rank 2, local row 1, column 5}
  const tessera::global_coordinate back = map.to_global(where.rank, where.row, where.col);   // {7, 5}
  const tessera::local_extents mine = map.extents(2);                     // {2 rows, 6 columns}

  CHECK(map.owner(7, 5) == 2);
  CHECK(where == tessera::local_coordinate{2, 1, 5});
  CHECK(back == tessera::global_coordinate{7, 5});
  CHECK(mine == tessera::local_extents{2, 6});
  static_assert(std::is_same_v<Q, tessera::policy<tessera::row_block, tessera::csc, tessera::mpi_rma>>);
}

TEST_CASE("matrices.md: triplets, Matrix Market, generators, conversions, dense blocks, checking") {
  const auto& env = *tessera::test::running_environment();
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  const auto& comm = env.world();

  const tessera::global_index rows = 40, cols = 30;
  {
    const tessera::global_index row = 1 + comm.rank(), col = 2 * comm.rank();  // one entry per rank
    const double value = 0.5;
    tessera::triplets<double> t;                 // or three std::span<const ...>
    t.push_back(row, col, value);                // 0-based global indices; any rank, any order, repeats allowed
    auto A = tessera::build_from_triplets<double, P>(comm, rows, cols, t);
    CHECK(A.global_nnz() == comm.size());

    t.push_back(0, 0, comm.rank() + 1.0);        // (0, 0) from every rank, twice
    t.push_back(0, 0, 0.25);
    auto B = tessera::build_from_triplets<double, P, keep_max>(comm, rows, cols, t, {});    // combine duplicates by max
    auto C = tessera::build_from_triplets<double, P>(comm, rows, cols, t,
               {.distribution = tessera::row_block{tessera::row_block::balance::nonzeros}});  // balance nonzeros

    const double p = comm.size();
    CHECK(value_at(tessera::gather_to_all(B), 0, 0) == p);                     // the largest
    CHECK(value_at(tessera::gather_to_all(C), 0, 0) == p * (p + 1) / 2 + 0.25 * p);  // summed
    CHECK(B.global_nnz() == comm.size() + 1);
    CHECK(C.mapping().row_end(comm.rank()) - C.mapping().row_begin(comm.rank()) == C.local().num_rows());
  }

  // Matrix Market: A.mtx in this run's working directory.
  const auto L = tessera::generate::laplacian_2d<double, P>(comm, 6);
  tessera::write_matrix_market(L, "A.mtx");
  {
    auto A = tessera::read_matrix_market<double, P>(comm, "A.mtx");
    tessera::write_matrix_market(A, "copy.mtx");

    CHECK(tessera::compare(A, L));
    CHECK(tessera::compare(tessera::read_matrix_market<double, P>(comm, "copy.mtx"), L));
  }

  {
    auto G = tessera::generate::rmat<double, P>(comm, /*scale*/ 14, /*edge factor*/ 16, /*seed*/ 1);
    auto L = tessera::generate::laplacian_2d<double, P>(comm, /*grid n*/ 512);
    auto R = tessera::generate::uniform_random<double, P>(comm, rows, cols, /*draws per row*/ 8, /*seed*/ 3);

    CHECK(G.num_rows() == (1 << 14));
    CHECK(L.num_rows() == 512 * 512);
    CHECK(L.global_nnz() == 5 * 512 * 512 - 4 * 512);
    CHECK(R.num_rows() == rows);
    CHECK(R.num_cols() == cols);
  }

  {
    auto A = tessera::generate::uniform_random<double, P>(comm, rows, cols, 4, 7);
    auto Acsc = tessera::convert<tessera::csc>(A);   // local only, no communication
    auto Acoo = tessera::convert<tessera::coo>(A);
    auto crs  = tessera::local_crs(A);               // KokkosSparse::CrsMatrix over the same Views
    // crs's columns are local: A.col_map()(c) is the global column of local column c.

    CHECK(tessera::compare(Acsc, A));
    CHECK(tessera::compare(Acoo, A));
    CHECK(crs.numRows() == static_cast<int>(A.local().num_rows()));
    CHECK(static_cast<tessera::offset_type>(crs.nnz()) == A.local().nnz());

    tessera::dist_dense<double, P> X(comm, A.num_cols(), 32);            // rows split evenly, zero-filled
    tessera::dist_dense<double, P> Y(comm, A.mapping(), 32);             // rows split like A's
    X.fill([](tessera::global_index i, tessera::global_index j) { return double(i + j); });

    CHECK(X.local().extent(1) == 32);
    CHECK(static_cast<tessera::global_index>(Y.local().extent(0)) == A.mapping().extents(comm.rank()).rows);

    const std::size_t width = 100;
    const tessera::dist_dense<double, P> workspace(comm, A.mapping(), 4096);  // made once
    using view = tessera::dist_dense<double, P>::view_type;
    tessera::dist_dense<double, P> Xw(comm, A.mapping(), view(workspace.local().data(), workspace.local_rows(), width));
    CHECK(Xw.num_vectors() == 100);
    CHECK(Xw.local().data() == workspace.local().data());
  }

  {
    auto A = tessera::generate::uniform_random<double, P>(comm, rows, cols, 4, 7);
    const tessera::host_csr<double> reference = tessera::gather_to_all(A);    // every rank: the whole matrix
    const auto same = tessera::compare(A, reference);                         // exact: structure and values
    const auto near = tessera::compare(tessera::scale(A, 1.0 + 1e-12), A, 1e-9);  // |a - b| <= 1e-9 max(|a|, |b|, 1)
    const auto off = tessera::compare(tessera::scale(A, 2.0), A);            // off.equal is false
    if (!off) fmt::print("{}\n", off.difference);                            // "entry (0, 5): 1.25 vs 0.625", say

    CHECK(same.equal);
    CHECK(same.difference.empty());
    CHECK(near);
    CHECK_FALSE(tessera::compare(tessera::scale(A, 1.0 + 1e-6), A, 1e-9));
    CHECK_FALSE(off.equal);
    CHECK(off.difference.find("entry (") == 0);
  }
}

TEST_CASE("errors.md: one error on every rank, collectively, counters") {
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  const auto& comm = tessera::test::world();
  write_file(comm, "broken.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 x 1.0\n");

  try {
    auto A = tessera::read_matrix_market<double, P>(comm, "broken.mtx");
  } catch (const tessera::error& e) {
    // Same on every rank, e.g.
    // tessera: parse error (rank 2): broken.mtx:27: expected 'row column value', found '24 x 1.0'
    fmt::print("{} (kind {}, from rank {})\n", e.what(), tessera::to_string(e.kind()), e.origin_rank());
  }

  tessera::test::require_rejected([&] { (void)tessera::read_matrix_market<double, P>(comm, "broken.mtx"); },
                                  tessera::error_kind::parse_error, "broken.mtx:4");

  auto parse_my_part = [&] { return 10 * comm.rank(); };
  auto local = comm.collectively([&] { return parse_my_part(); });   // throws everywhere if any rank threw
  CHECK(local == 10 * comm.rank());
  tessera::test::require_rejected(
      [&] { (void)comm.collectively([&] { return comm.rank() == comm.size() - 1 ? throw std::runtime_error("mine") : 0; }); },
      tessera::error_kind::external, "mine");

#ifndef TESSERA_DOCS_DEVICE_BUILD
  {
    const auto A = tessera::generate::uniform_random<double, P>(comm, 20, 20, 3, 1);
    const auto B = A;
    try {
      auto C = tessera::spgemm(A, B, tessera::spgemm_options<my_semiring>{});
    } catch (const tessera::error& e) {
      // on every rank: "tessera: external exception (rank 3): my_semiring: negative weight"
    }
    CHECK(tessera::compare(tessera::spgemm(A, B, tessera::spgemm_options<my_semiring>{}), tessera::spgemm(A, B)));
  }
#endif

  const tessera::global_index m = 12, n = 9;
  tessera::triplets<double> t;
  for (tessera::global_index i = 0; i < m; ++i) t.push_back(i, (i + comm.rank()) % n, 1.0);  // on every rank

  comm.stats().reset();
  {
    tessera::stats_scope scope(comm, "my phase");
    auto A = tessera::build_from_triplets<double, P>(comm, m, n, t);   // opens "build" inside
  }
  fmt::print("{}\n", comm.stats());                       // "build: 2 messages, 1651616 bytes"
  auto build = comm.stats().of("build");                  // tessera::traffic{messages, bytes}
  auto all = tessera::reduce_traffic(comm, "build");      // .total and .max_per_rank over ranks (collective)

  {
    const tessera::profiling_region region("my_app::assemble");      // a Kokkos Tools region
    auto A = tessera::build_from_triplets<double, P>(comm, m, n, t);  // inside it: my_app::assemble/tessera::build
  }

  // Every rank sends P - 1 size messages and one bucket to each other rank that owns some of its rows.
  CHECK(build.messages >= static_cast<std::uint64_t>(comm.size() - 1));
  CHECK(all.total.messages == static_cast<std::uint64_t>(comm.sum(static_cast<std::int64_t>(build.messages))));
  CHECK(all.max_per_rank.bytes >= build.bytes);
  CHECK(comm.stats().of("my phase").messages == 0);  // attributed to the innermost scope
}

TEST_CASE("communication.md: started exchanges, a backend context, mailboxes, node-shared memory") {
  const auto& env = *tessera::test::running_environment();
  const auto& comm = env.world();
  const int P = comm.size();

  {
    tessera::buckets<std::byte> outgoing;  // one byte to every rank: my rank
    outgoing.data.assign(static_cast<std::size_t>(P), static_cast<std::byte>(comm.rank()));
    for (int r = 0; r <= P; ++r) outgoing.offsets.push_back(static_cast<std::size_t>(r));
    int computed = 0;
    auto compute_something_else = [&] { ++computed; };

    auto pending = tessera::start_exchange(tessera::mpi_rma{}, comm, std::move(outgoing));  // sizes agreed, sends posted
    compute_something_else();
    tessera::buckets<std::byte> arrived = std::move(pending).finish();                      // bucket r came from rank r

    CHECK(computed == 1);
    for (int r = 0; r < P; ++r) {
      REQUIRE(arrived.bucket(r).size() == 1);
      CHECK(arrived.bucket(r)[0] == static_cast<std::byte>(r));
    }
  }

  {
    const std::size_t n_local = 16;
    std::vector<double> v(8, 1.0 + comm.rank());
    Kokkos::View<double*, Kokkos::HostSpace> kokkos_view("kokkos_view", 4);

    tessera::aggregator::options opts;
    opts.messaging.buffer_bytes = 1 << 16;              // per-destination buffer
    opts.messaging.route = tessera::routing::two_hop;   // ~2 sqrt(P) peers per rank
    tessera::aggregator::context ctx(env.world(), opts);

    auto seg = ctx.allocate<double>(n_local);           // collective: n_local elements on this rank
    auto mine = ctx.expose(std::span<double>(v));       // collective: register existing memory
    auto view = ctx.expose_view(kokkos_view);           // a contiguous, host-accessible rank-1 View

    // Read the next rank's registered vector.
    std::vector<double> got(8, 0.0);
    ctx.get(mine, (comm.rank() + 1) % P, 0, std::span<double>(got));
    CHECK(got[7] == 1.0 + (comm.rank() + 1) % P);
    ctx.barrier();

    const std::size_t bins_per_rank = 5;
    std::vector<std::pair<int, std::uint32_t>> my_updates;  // (rank, bin): one to every bin of every rank
    for (int r = 0; r < P; ++r)
      for (std::uint32_t b = 0; b < bins_per_rank; ++b) my_updates.emplace_back(r, b);

    // bale's histogram with a mailbox: the same code on every backend
    std::vector<std::int64_t> counts(bins_per_rank);
    tessera::mailbox<std::uint32_t> updates(ctx.messages(), [&](int /*origin*/, std::uint32_t bin) { ++counts[bin]; });
    for (auto [rank, bin] : my_updates) updates.push(rank, bin);
    updates.drain();

    for (const auto c : counts) CHECK(c == P);  // one update from every rank
    ctx.barrier();
    (void)seg;
    (void)view;
  }
}

TEST_CASE("communication.md: node-shared memory" * doctest::skip(tessera::test::shared_windows_disabled())) {
  const auto& comm = tessera::test::world();
  tessera::node_shared_array<double> halo(comm, 1024);
  std::ranges::fill(halo.local(), comm.rank());
  halo.sync(); comm.barrier(); halo.sync();
  const double first = halo.on_node(0) ? halo.peer(0)[0] : -1.0;  // rank 0's element, read in place
  CHECK(first == 0.0);  // every rank of this test is on one node
  comm.barrier();
}

TEST_CASE("operations.md: X in node-shared memory, read in place" * doctest::skip(tessera::test::shared_windows_disabled())) {
  const auto& comm = tessera::test::world();
  // Node-shared memory is host memory: a host space, also in a build whose default space is a device.
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma, Kokkos::DefaultHostExecutionSpace>;
  auto A = tessera::generate::rmat<double, P>(comm, 10);
  tessera::dist_dense<double, P> private_X(comm, A.num_cols(), 32);
  private_X.fill([](tessera::global_index i, tessera::global_index j) { return 1.0 / (1 + i + j); });
  auto X = tessera::share_on_node(private_X);             // the node's rows one array, in shared memory
  auto Y = tessera::spmm(A, X);                            // in place: huge pages, or X small (here 256 KiB)
  tessera::spmm_options always{.read_x_in_place = tessera::x_in_place::always};
  tessera::spmm(A, X, Y);                                  // write X.local() in place between products
  auto Z = tessera::spmm(A, X, always);                    // in place on any pages
  const auto y = Y.gather_to_root(), z = Z.gather_to_root(), r = tessera::spmm(A, private_X).gather_to_root();
  if (comm.rank() == 0) {
    CHECK(*y == *r);  // the same sums in the same order, wherever X's rows are read
    CHECK(*z == *r);
  }
  CHECK(tessera::is_node_shared(X));
  const auto read = tessera::spmm_plan_for(A, X, always).agree_x_rows_read(X);
  CHECK((read == tessera::spmm_plan<double, P>::x_rows_read::in_place) == (comm.size() > 1));
}

TEST_CASE("operations.md: renumbering for locality") {
  const auto& comm = tessera::test::world();
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  const auto A = tessera::generate::laplacian_2d<double, P>(comm, 9);
  tessera::dist_dense<double, P> X(comm, A.mapping(), 3);
  X.fill([](tessera::global_index i, tessera::global_index j) { return 1.0 + static_cast<double>((i + 2 * j) % 5); });
  auto [Ar, perm] = tessera::reorder(A, tessera::row_ordering::reverse_cuthill_mckee);  // once
  auto Xr = tessera::permute_rows(X, perm);                // X in the new numbering
  auto Yr = tessera::spmm(Ar, Xr);                         // as many products as you like
  auto Y = tessera::restore_rows(Yr, perm);                // back in A's numbering: A X
  std::vector<tessera::local_index> mine(static_cast<std::size_t>(A.local_rows()));
  std::iota(mine.rbegin(), mine.rend(), 0);                // your own order: here each rank's rows reversed
  tessera::row_permutation<P> yours(comm, A.mapping(), mine);
  auto reversed = tessera::reorder(A, yours);              // reversed.matrix, reversed.permutation
  auto banded = tessera::reorder(A, tessera::row_ordering::reverse_cuthill_mckee, tessera::reorder_scope::whole_matrix);
  auto Yb = tessera::restore_rows(tessera::spmm(banded.matrix, tessera::permute_rows(X, banded.permutation)),
                                  banded.permutation);     // A X again, rows having moved between ranks
  auto hubs = tessera::reorder(A, tessera::row_ordering::by_degree, tessera::reorder_scope::whole_matrix,
                               tessera::row_block{tessera::row_block::balance::nonzeros});  // rows split anew by nonzeros
  auto Yh = tessera::restore_rows(tessera::spmm(hubs.matrix, tessera::permute_rows(X, hubs.permutation)),
                                  hubs.permutation);       // Y back on A's split
  const auto y = Y.gather_to_root(), ax = tessera::spmm(A, X).gather_to_root();
  const auto yb = Yb.gather_to_root(), yh = Yh.gather_to_root();
  if (comm.rank() == 0)
    for (std::size_t e = 0; e < y->size(); ++e) {
      CHECK((*y)[e] == doctest::Approx((*ax)[e]).epsilon(1e-12));
      CHECK((*yb)[e] == doctest::Approx((*ax)[e]).epsilon(1e-12));
      CHECK((*yh)[e] == doctest::Approx((*ax)[e]).epsilon(1e-12));
    }
  CHECK(tessera::same_rows(Yh.mapping(), A.mapping()));
  CHECK(hubs.matrix.mapping() == hubs.permutation.new_mapping());
  CHECK(Ar.global_nnz() == A.global_nnz());
  CHECK_FALSE(banded.permutation.within_ranks());
  CHECK(reversed.matrix.global_nnz() == A.global_nnz());
  // Each rank's rows reversed: local row 0 is now its last.
  if (A.local_rows() > 0) CHECK(reversed.permutation.new_local_row(0) == A.local_rows() - 1);
  const auto back = tessera::restore_rows(tessera::permute_rows(X, reversed.permutation), reversed.permutation);
  const auto x = X.gather_to_root(), b = back.gather_to_root();
  if (comm.rank() == 0) CHECK(*x == *b);
}

namespace {

// Serial references for the GraphBLAS pieces: entries as a map, any semiring.
using entry_map = std::map<std::pair<tessera::global_index, tessera::global_index>, double>;

entry_map entries_of(const tessera::host_csr<double>& a, bool transposed = false) {
  entry_map out;
  for (tessera::global_index i = 0; i < a.rows; ++i)
    for (auto e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      const auto j = a.col_idx[static_cast<std::size_t>(e)];
      out[transposed ? std::pair{j, i} : std::pair{i, j}] = a.values[static_cast<std::size_t>(e)];
    }
  return out;
}

template <class Add, class Multiply>
entry_map product_of(const entry_map& a, const entry_map& b, Add add, Multiply multiply) {
  std::map<tessera::global_index, std::vector<std::pair<tessera::global_index, double>>> b_rows;
  for (const auto& [ij, v] : b) b_rows[ij.first].emplace_back(ij.second, v);
  entry_map c;
  for (const auto& [ik, va] : a)
    for (const auto& [j, vb] : b_rows[ik.second]) {
      const auto key = std::pair{ik.first, j};
      const double p = multiply(va, vb);
      const auto it = c.find(key);
      if (it == c.end()) c.emplace(key, p);
      else it->second = add(it->second, p);
    }
  return c;
}

tessera::host_csr<double> csr_of(const entry_map& m, tessera::global_index rows, tessera::global_index cols) {
  tessera::triplets<double> t;
  for (const auto& [ij, v] : m) t.push_back(ij.first, ij.second, v);
  return tessera::host_csr<double>::from_triplets(rows, cols, t);
}

}  // namespace

struct max_plus {  // a user's semiring: longest paths, most likely sequences (Viterbi)
  template <class T> KOKKOS_INLINE_FUNCTION T add(T a, T b) const { return a < b ? b : a; }
  template <class T> KOKKOS_INLINE_FUNCTION T multiply(T a, T b) const { return a + b; }
  template <class T> KOKKOS_INLINE_FUNCTION T identity() const { return -std::numeric_limits<T>::infinity(); }  // optional
};
static_assert(tessera::semiring_with_identity<max_plus, double>);

TEST_CASE("operations.md: every operation, plans, GraphBLAS's pieces") {
  const auto& comm = tessera::test::world();
  const auto plus = [](double x, double y) { return x + y; };
  const auto times = [](double x, double y) { return x * y; };
  const auto min = [](double x, double y) { return std::min(x, y); };

  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::aggregator>;
  auto A = tessera::generate::rmat<double, P>(comm, 10);
  tessera::dist_dense<double, P> X(comm, A.num_cols(), 32);
  X.fill([](tessera::global_index i, tessera::global_index j) { return 1.0 / (1 + i + j); });
  auto Y  = tessera::spmm(A, X);                          // first call inspects, later calls reuse the plan
  auto C  = tessera::spgemm(A, A);                        // row-wise Gustavson on host spaces
  tessera::spgemm_options<tessera::semirings::min_plus> tropical;
  auto D  = tessera::spgemm(A, A, tropical);              // any semiring (Gustavson too)
  auto M  = tessera::spgemm_masked(A, A, A);              // C<A> = A * A: triangle-counting style
  auto At = tessera::transpose(A, tessera::transpose_algorithm::slots);
  auto B  = tessera::add(tessera::scale(A, 2.0), At);     // needs equal shapes and mappings
  auto rs = tessera::reduce_rows(A);                       // dist_dense, one column
  auto cm = tessera::reduce_columns(A, tessera::combine::max{});
  auto pruned = tessera::prune(A, KOKKOS_LAMBDA(double v) { return v < 1e-3; });  // in the execution space
  auto act = tessera::apply_drop_zeros(A, KOKKOS_LAMBDA(double v) { return v > 0.5 ? v : 0.0; });  // fused, on the device

  const auto a = tessera::gather_to_all(A);
  const auto n = a.rows;
  const auto ea = entries_of(a), eat = entries_of(a, true);
  {
    const auto y = Y.gather_to_root();
    if (comm.rank() == 0) {
      REQUIRE(y.has_value());
      std::vector<double> expected(static_cast<std::size_t>(n) * 32, 0.0);
      for (const auto& [ij, v] : ea)
        for (tessera::global_index j = 0; j < 32; ++j)
          expected[static_cast<std::size_t>(ij.first * 32 + j)] += v / (1.0 + static_cast<double>(ij.second + j));
      for (std::size_t e = 0; e < expected.size(); ++e) CHECK((*y)[e] == doctest::Approx(expected[e]).epsilon(1e-12));
    }
  }
  CHECK(tessera::compare(C, csr_of(product_of(ea, ea, plus, times), n, n), 1e-12));
  CHECK(tessera::compare(D, csr_of(product_of(ea, ea, min, plus), n, n)));
  {
    auto L = tessera::spgemm(A, A, tessera::spgemm_options<max_plus>{});
    const auto max = [](double x, double y) { return std::max(x, y); };
    CHECK(tessera::compare(L, csr_of(product_of(ea, ea, max, plus), n, n)));
  }
  {
    auto masked = product_of(ea, ea, plus, times);
    std::erase_if(masked, [&](const auto& kv) { return !ea.contains(kv.first); });
    CHECK(tessera::compare(M, csr_of(masked, n, n), 1e-12));
  }
  CHECK(tessera::compare(At, csr_of(eat, n, n)));
  {
    entry_map sum = eat;
    for (const auto& [ij, v] : ea) sum[ij] += 2 * v;
    CHECK(tessera::compare(B, csr_of(sum, n, n)));
  }
  {
    const auto row_sums = rs.gather_to_root();
    if (comm.rank() == 0) {
      std::vector<double> expected(static_cast<std::size_t>(n), 0.0);
      for (const auto& [ij, v] : ea) expected[static_cast<std::size_t>(ij.first)] += v;
      CHECK(*row_sums == expected);
    }
  }
  CHECK(cm.num_vectors() == 1);
  CHECK(tessera::compare(pruned, a));  // R-MAT's values count edges: none below 1e-3
  CHECK(tessera::compare(act, a));     // nor below 0.5

  tessera::spgemm_plan plan(A, B, tessera::spgemm_options{.ring = tessera::semirings::min_plus{}});
  for (int step = 0; step < 10; ++step) D = plan.apply(A, B);   // A's values change, its structure not

  const auto eb = entries_of(tessera::gather_to_all(B));
  CHECK(tessera::compare(D, csr_of(product_of(ea, eb, min, plus), n, n)));

  const auto ec = entries_of(tessera::gather_to_all(C)), em = entries_of(tessera::gather_to_all(M));
  // C<!M> = C min (A^T B) over min-plus, with a valued, complemented mask:
  tessera::spgemm_accumulate(M, A, B, C, tessera::spgemm_options{.ring = tessera::semirings::min_plus{},
      .transpose_a = true, .mask = tessera::mask_kind::values, .complement_mask = true});

  entry_map expected = ec;
  for (const auto& [ij, v] : product_of(eat, eb, min, plus)) {
    const auto mask = em.find(ij);
    if (mask != em.end() && mask->second != 0.0) continue;  // the complemented mask drops what M holds
    const auto it = expected.find(ij);
    if (it == expected.end()) expected.emplace(ij, v);
    else it->second = std::min(it->second, v);
  }
  CHECK(tessera::compare(C, csr_of(expected, n, n), 1e-12));
}

TEST_CASE("operations.md: grid distributions, replicated columns, X and Y along the grid") {
  const auto& comm = tessera::test::world();
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::aggregator>;
  auto A = tessera::generate::rmat<double, P>(comm, 10);
  const auto a = tessera::gather_to_all(A);
  const auto n = a.rows;
  const auto ea = entries_of(a);
  const auto a_squared = csr_of(product_of(ea, ea, std::plus<>{}, std::multiplies<>{}), n, n);

  using G = tessera::policy<tessera::block_cyclic_2d, tessera::csr, tessera::mpi_rma>;
  using R = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  auto A2 = tessera::redistribute<G>(A, tessera::block_cyclic_2d{.grid = tessera::process_grid::squarest(comm.size()),
                                                                 .block_rows = 64, .block_cols = 64});
  auto C2 = tessera::spgemm(A2, A2);                                  // sparse SUMMA on A2's p x q grid
  auto C3 = tessera::spgemm(A2, A2, tessera::spgemm_options{.layers = comm.size()});  // split-3D: P layers of 1 x 1
  tessera::dist_dense<double, R> X(comm, A2.num_cols(), 8);            // X and Y by rows
  auto Y2 = tessera::spmm(A2, X);                                      // the 2-D product
  auto T2 = tessera::transpose(A2);                                    // on the transposed q x p grid
  auto back = tessera::redistribute<R>(C2);                            // any distribution to any other

  const auto grid = tessera::process_grid::squarest(comm.size());
  CHECK(A2.mapping().grid() == grid);
  CHECK(T2.mapping().grid() == tessera::process_grid{grid.q, grid.p});
  CHECK(tessera::compare(C2, a_squared, 1e-12));
  CHECK(tessera::compare(C3, a_squared, 1e-12));
  CHECK(tessera::compare(back, a_squared, 1e-12));
  CHECK(tessera::compare(T2, tessera::test::transposed(a)));
  CHECK(Y2.num_vectors() == 8);

  {
    using V = tessera::policy<tessera::row_partition, tessera::csr, tessera::mpi_rma>;
    tessera::dist_dense<double, V> X(comm, tessera::grid_aligned_rows(A2.mapping(), tessera::grid_side::columns), 8);
    tessera::dist_dense<double, V> Y(comm, tessera::grid_aligned_rows(A2.mapping(), tessera::grid_side::rows), 8);
    tessera::spmm(A2, X, Y);  // X's rows from the p - 1 peers of my grid column, Y's to the q - 1 of my grid row

    CHECK(Y.num_vectors() == 8);
  }

  {
    using RC = tessera::policy<tessera::replicated_columns, tessera::csr, tessera::mpi_rma>;
    const auto grid = tessera::process_grid::squarest(comm.size());              // p x q, p <= q, p * q = P
    auto R1 = tessera::redistribute<RC>(A, tessera::replicated_columns{});        // default 1 x P grid: columns split, no replica
    auto Rp = tessera::redistribute<RC>(A, tessera::replicated_columns{.grid = grid, .block_cols = 16});  // p replicas per column block
    auto Cp = tessera::spgemm(Rp, Rp);                                             // SUMMA: B never moves

    CHECK(grid.p <= grid.q);
    CHECK(grid.p * grid.q == comm.size());
    CHECK(R1.mapping().grid() == tessera::process_grid{1, comm.size()});
    CHECK(R1.mapping().replicas(0, 0).size() == 1);
    CHECK(Rp.mapping().replicas(0, 0).size() == static_cast<std::size_t>(grid.p));
    CHECK(R1.global_nnz() == A.global_nnz());  // primaries are counted once
    CHECK(Rp.global_nnz() == A.global_nnz());
    CHECK(comm.sum(static_cast<std::int64_t>(Rp.local().nnz())) == grid.p * A.global_nnz());  // every replica stored
    CHECK(tessera::compare(R1, a));
    CHECK(tessera::compare(Rp, a));
    CHECK(tessera::compare(Cp, a_squared, 1e-12));
  }
}

// The operands of block_sparse.md's first listing: tilings, tile patterns and element values.
struct block_problem {
  tessera::tiled_range k_tiles = tessera::tiled_range::from_sizes(std::vector<tessera::global_index>{50, 0, 70, 30});
  tessera::tiled_range n_tiles = tessera::tiled_range::uniform(100, 40);
  static bool a_nonzero(std::size_t ti, std::size_t tj) { return (ti + tj) % 3 != 1; }
  static bool b_nonzero(std::size_t ti, std::size_t tj) { return (2 * ti + tj) % 3 != 0; }
  static double a_value(tessera::global_index i, tessera::global_index j) { return 1.0 / double(1 + i + 2 * j); }
  static double b_value(tessera::global_index i, tessera::global_index j) { return 1.0 / double(2 + 3 * i + j); }
};

// The dense column-major product of two tile patterns (element (i, j) at i + j * m).
std::vector<double> dense_product(const tessera::tiled_range& rows, const tessera::tiled_range& inner,
                                  const tessera::tiled_range& cols) {
  const auto m = rows.extent(), k = inner.extent(), n = cols.extent();
  auto a = [&](tessera::global_index i, tessera::global_index l) {
    return block_problem::a_nonzero(rows.tile_of(i), inner.tile_of(l)) ? block_problem::a_value(i, l) : 0.0;
  };
  auto b = [&](tessera::global_index l, tessera::global_index j) {
    return block_problem::b_nonzero(inner.tile_of(l), cols.tile_of(j)) ? block_problem::b_value(l, j) : 0.0;
  };
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (tessera::global_index j = 0; j < n; ++j)
    for (tessera::global_index l = 0; l < k; ++l) {
      const double blj = b(l, j);
      if (blj == 0.0) continue;
      for (tessera::global_index i = 0; i < m; ++i) c[static_cast<std::size_t>(i + j * m)] += a(i, l) * blj;
    }
  return c;
}

void check_dense(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t e = 0; e < got.size(); ++e) CHECK(got[e] == doctest::Approx(expected[e]).epsilon(1e-12));
}

#ifndef TESSERA_DOCS_DEVICE_BUILD
TEST_CASE("block_sparse.md: the listing, A read in place, the tile kernel" *
          doctest::skip(tessera::test::shared_windows_disabled())) {
  const auto& comm = tessera::test::world();
  const block_problem problem;
  const auto& k_tiles = problem.k_tiles;
  const auto& n_tiles = problem.n_tiles;
  const auto a_nonzero = &block_problem::a_nonzero;
  const auto b_nonzero = &block_problem::b_nonzero;
  const auto a_value = &block_problem::a_value;
  const auto b_value = &block_problem::b_value;
  const auto B_2d = tessera::make_block_sparse<double, tessera::policy<tessera::block_cyclic_2d, tessera::tiles, tessera::mpi_rma>>(
      comm, tessera::block_cyclic_2d{}.make_tile_mapping(comm.size(), k_tiles, n_tiles), b_nonzero, b_value);
  const tessera::global_index m = 484, k = k_tiles.extent();
  tessera::triplets<double> entries;  // this rank's share of an m x k element-sparse matrix
  for (tessera::global_index i = comm.rank(); i < m; i += comm.size()) {
    entries.push_back(i, (7 * i) % k, 1.0 + static_cast<double>(i));
    entries.push_back(i, (7 * i + 3) % k, 0.5);
  }
  {
    using namespace tessera;
    const auto grid = process_grid::squarest(comm.size());         // p x q, p <= q, p * q = P
    auto rows = tiled_range::from_sizes(std::vector<global_index>{120, 64, 300});   // irregular tiles
    // A: 2-D tile-cyclic. make_block_sparse(comm, mapping, nonzero(ti, tj), value(i, j))
    auto a_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), rows, k_tiles);
    auto A = make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(comm, a_map, a_nonzero, a_value);
    // B: tile columns balanced by flops (mirrored-cyclic) over q, replicated over the p grid rows.
    auto owners = bsgemm_column_owners(A.shape(), pattern_shape(k_tiles, n_tiles, b_nonzero), grid.q);
    auto b_map = replicated_columns{.grid = grid}.make_tile_mapping(comm.size(), k_tiles, n_tiles, owners);
    auto B = make_block_sparse<double, policy<replicated_columns, tiles, mpi_rma>>(comm, b_map, b_nonzero, b_value);

    A = share_on_node(A);                    // optional: on one node, bsgemm then reads A where it lies
    bsgemm_plan plan(A, B, {.memory_bytes = 512 << 20, .screening_threshold = 1e-8});
    auto C = plan.make_c();                                           // C follows A's rows, B's columns
    for (int it = 0; it < 10; ++it) plan.apply(1.0, A, B, 0.0, C);    // inspect once, execute many times
    auto D = bsgemm(1.0, A, B);                                       // one-shot form (fresh plan)
    auto E = summa(1.0, A, B_2d);                                     // all three 2-D cyclic
    std::vector<double> dense = gather_dense(C);                      // tests and small checks

    // Element-sparse <-> tiles, given the tilings (in the target distribution's mapping):
    auto S = build_from_triplets<double, policy<row_block, csr, mpi_rma>>(comm, m, k, entries);
    auto T = to_tiles<policy<block_cyclic_2d, tiles, mpi_rma>>(S, block_cyclic_2d::mapping(grid, rows, k_tiles));
    auto back = to_elements<policy<row_block, csr, mpi_rma>>(T);     // nonzero elements of the tiles

    const auto expected = dense_product(rows, k_tiles, n_tiles);
    check_dense(dense, expected);
    check_dense(gather_dense(D), expected);
    check_dense(gather_dense(E), expected);
    CHECK(is_node_shared(A));
    CHECK(compare(back, S));
    CHECK(compare(T, S));
    CHECK(C.mapping().grid() == grid);
  }
  {
    using namespace tessera;
    const auto grid = process_grid::squarest(comm.size());
    const auto rows = tiled_range::uniform(90, 30);
    const auto a_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), rows, k_tiles);
    const auto nz = a_nonzero;
    const auto value = a_value;
    const auto B = make_block_sparse<double, policy<replicated_columns, tiles, mpi_rma>>(
        comm, replicated_columns{.grid = grid}.make_tile_mapping(comm.size(), k_tiles, n_tiles), b_nonzero, b_value);
    auto C = bsgemm(1.0, make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(comm, a_map, nz, value), B);
    comm.stats().reset();

    auto A = tessera::share_on_node(make_block_sparse<double, policy<block_cyclic_2d, tiles, mpi_rma>>(comm, a_map, nz, value));
    tessera::bsgemm_plan plan(A, B);
    plan.apply(1.0, A, B, 0.0, C);   // plan.read_a_in_place(): true on one node, no bytes in the counters

    CHECK(plan.read_a_in_place());
    CHECK(comm.stats().of("bsgemm").bytes == 0);
    check_dense(gather_dense(C), dense_product(rows, k_tiles, n_tiles));

    const auto& a = A;
    const auto& b = B;
    tessera::bsgemm_options options;
    options.tile_kernel = tessera::bsgemm_tile_kernel::packed;  // or blas, or automatic (the default)
    auto c = tessera::bsgemm(1.0, a, b, options);

    check_dense(gather_dense(c), dense_product(rows, k_tiles, n_tiles));
  }
}
#endif

TEST_CASE("block_sparse.md: process grids, tilings, the two grid distributions' mappings") {
  const auto& comm = tessera::test::world();

  const auto grid = tessera::process_grid::squarest(comm.size());  // 1 x 1, 1 x 2, 1 x 3, 2 x 2, 2 x 3, ...
  const int my_row = grid.row_of(comm.rank()), my_col = grid.col_of(comm.rank());  // comm.rank() == grid.rank(my_row, my_col)

  CHECK(grid.p <= grid.q);
  CHECK(grid.size() == comm.size());
  CHECK(grid.rank(my_row, my_col) == comm.rank());
  CHECK(tessera::process_grid::squarest(6) == tessera::process_grid{2, 3});
  CHECK(tessera::process_grid::squarest(7) == tessera::process_grid{1, 7});

  const auto rows = tessera::tiled_range::from_sizes(std::vector<tessera::global_index>{3, 0, 5, 4});  // [0, 3) [3, 3) [3, 8) [8, 12)
  const auto cols = tessera::tiled_range::uniform(10, 4);                                          // [0, 4) [4, 8) [8, 10)
  const tessera::tiled_range same_cols(std::vector<tessera::global_index>{0, 4, 8, 10});           // the boundaries themselves

  CHECK(rows.num_tiles() == 4);
  CHECK(rows.extent() == 12);
  CHECK(rows.tile_of(3) == 2);  // the empty tile 1 holds nothing
  CHECK(cols == same_cols);
  CHECK(cols.size(2) == 2);

  const tessera::block_cyclic_2d::mapping cyclic(grid, rows, cols);             // tile (ti, tj) on grid (ti mod p, tj mod q)
  const tessera::replicated_columns::mapping replicated(grid, rows, cols);      // tile column tj on grid column tj mod q, every grid row
  const tessera::replicated_columns::mapping chosen(grid, rows, cols, {0, 0, grid.q - 1});  // or each tile column's grid column

  for (std::size_t ti = 0; ti < rows.num_tiles(); ++ti)
    for (std::size_t tj = 0; tj < cols.num_tiles(); ++tj) {
      CHECK(cyclic.tile_owner(ti, tj) == grid.rank(static_cast<int>(ti) % grid.p, static_cast<int>(tj) % grid.q));
      CHECK(replicated.holds(comm.rank(), ti, tj) == (static_cast<int>(tj) % grid.q == my_col));
    }
  CHECK(replicated.replicas(0, 9).size() == static_cast<std::size_t>(grid.p));
  CHECK(chosen.tile_col_owner(2) == grid.q - 1);
  CHECK(chosen.column_owners() == std::vector<int>{0, 0, grid.q - 1});
  CHECK(cyclic.global_rows() == 12);
  CHECK(replicated.global_cols() == 10);

  // bsgemm's operands from element-sparse matrices: A tile-cyclic, B's tile columns replicated.
  using R = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  const auto a = tessera::generate::uniform_random<double, R>(comm, 12, 9, 3, 5);
  const auto b = tessera::generate::uniform_random<double, R>(comm, 9, 10, 2, 6);
  const auto k_tiles = tessera::tiled_range::from_sizes(std::vector<tessera::global_index>{4, 5});

  using tiled_a = tessera::policy<tessera::block_cyclic_2d, tessera::tiles, tessera::mpi_rma>;
  using tiled_b = tessera::policy<tessera::replicated_columns, tessera::tiles, tessera::mpi_rma>;
  const auto ta = tessera::to_tiles<tiled_a>(a, tessera::block_cyclic_2d::mapping(grid, rows, k_tiles));
  const auto tb = tessera::to_tiles<tiled_b>(b, tessera::replicated_columns::mapping(grid, k_tiles, cols));
  const auto c = tessera::bsgemm(1.0, ta, tb);   // C on A's grid: A's row tiles, B's tile columns and their owners

  CHECK(tessera::compare(c, tessera::spgemm(a, b), 1e-12));
  CHECK(c.mapping().column_owners() == tb.mapping().column_owners());
}

TEST_CASE("custom-policies.md: a mapping with a table and no default constructor") {
  const auto& comm = tessera::test::world();
  const tessera::global_index n = 37;

  // Row i's owner from a table every rank holds alike.
  std::vector<int> owners(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < owners.size(); ++i) owners[i] = static_cast<int>((i * 7 + i / 5) % static_cast<std::size_t>(comm.size()));
  using T = tessera::policy<row_table, tessera::csr, tessera::mpi_rma>;
  using R = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  const row_table by_table{std::make_shared<const std::vector<int>>(owners)};

  tessera::triplets<double> t;
  for (tessera::global_index i = comm.rank(); i < n; i += comm.size())
    for (tessera::global_index d : {-3, 0, 1, 11}) t.push_back(i, (i + d + n) % n, 1.0 + static_cast<double>(i % 5));
  const auto A = tessera::build_from_triplets<double, T>(comm, n, n, t, {.distribution = by_table});
  const auto reference = tessera::build_from_triplets<double, R>(comm, n, n, t);

  for (tessera::global_index i = 0; i < n; ++i) CHECK(A.mapping().row_owner(i) == owners[static_cast<std::size_t>(i)]);
  // Two mappings made apart are equal: == compares the tables, not the pointers.
  CHECK(by_table.make_mapping(comm.size(), n, n) == A.mapping());
  if (comm.size() > 1) CHECK_FALSE(row_table{}.make_mapping(comm.size(), n, n) == A.mapping());  // rows dealt cyclically

  tessera::dist_dense<double, T> X(comm, A.mapping(), 3);
  X.fill([](tessera::global_index i, tessera::global_index j) { return 1.0 + double((i + j) % 4); });
  tessera::dist_dense<double, R> Xr(comm, n, 3);
  Xr.fill([](tessera::global_index i, tessera::global_index j) { return 1.0 + double((i + j) % 4); });
  const auto y = tessera::spmm(A, X).gather_to_root();
  const auto yr = tessera::spmm(reference, Xr).gather_to_root();
  if (comm.rank() == 0) CHECK(*y == *yr);
  CHECK(tessera::compare(tessera::spgemm(A, A), tessera::spgemm(reference, reference), 1e-12));
  CHECK(tessera::compare(tessera::transpose(A), tessera::transpose(reference)));
  CHECK(tessera::compare(tessera::add(A, A), tessera::scale(reference, 2.0)));
  CHECK(tessera::compare(tessera::redistribute<R>(A), reference));
}

}  // namespace reference_snippets_tests
