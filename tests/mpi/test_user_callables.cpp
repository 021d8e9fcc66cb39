// A user's callable (semiring, apply functor, prune predicate, reduction, combine, mailbox handler)
// that throws on ONE rank during a collective operation: every rank raises the same tessera::error,
// naming the rank it came from, nobody hangs (CTest's deadline), and the communicator stays usable.
#include "test_support.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace user_callables_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

using P = test::csr_policy;

// Semirings, apply_drop_zeros functors and combines run inside Kokkos kernels: an exception can
// leave one only where the kernel runs on the calling thread (Serial). On OpenMP it calls
// std::terminate, on a GPU device code cannot throw (docs/errors.md), so those cases are skipped
// there, visibly.
#if defined(KOKKOS_ENABLE_SERIAL)
constexpr bool kernels_may_throw = std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Serial>;
#else
constexpr bool kernels_may_throw = false;
#endif

// The rank whose callable throws: the last one (rank 0 at one rank).
int failing_rank() { return test::world().size() - 1; }

std::string failure_text() { return fmt::format("user callable failed on rank {}", failing_rank()); }

[[noreturn]] void fail() { throw std::runtime_error(failure_text()); }

// Runs `operation` and requires the failing rank's exception on every rank, then a working communicator.
template <class Operation>
void require_raised_everywhere(Operation&& operation) {
  const auto& comm = test::world();
  try {
    operation();
    FAIL("no exception on rank " << comm.rank());
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::external);
    CHECK(e.origin_rank() == failing_rank());
    CHECK(e.message() == failure_text());
    CHECK(std::string(e.what()).find(fmt::format("(rank {})", failing_rank())) != std::string::npos);
  }
  CHECK(comm.sum(1) == comm.size());
}

}  // namespace

// A semiring (plus-times) whose multiply throws on the failing rank. Outside the unnamed namespace:
// only the templates below use it, and where they are not instantiated nvcc warns (#177-D) that the
// members of an internal-linkage class are never referenced.
namespace user_callables_test {
struct throwing_semiring {
  int me = 0;
  double add(const double& a, const double& b) const { return a + b; }
  double multiply(const double& a, const double& b) const {
    if (me == failing_rank()) fail();
    return a * b;
  }
};
}  // namespace user_callables_test

namespace {

using user_callables_test::throwing_semiring;

// Every rank has rows, and every row has entries, at 1-4 ranks.
dist_matrix<double, P> operand(std::uint64_t seed) {
  return generate::uniform_random<double, P>(test::world(), 24, 24, 4, seed);
}

}  // namespace

// The cases whose callables throw inside kernels are templates instantiated only where kernels may
// throw: nvcc cannot compile a throwing callable into a device kernel, and a discarded branch of a
// template is not instantiated.
template <bool Enabled = kernels_may_throw>
void semiring_that_throws() {
  if constexpr (Enabled) {
    const auto& comm = test::world();
    const auto a = operand(1), b = operand(2);
    const auto before = gather_to_all(spgemm(a, b));
    for (const auto kernel : {spgemm_kernel::gustavson, spgemm_kernel::esc, spgemm_kernel::automatic}) {
      INFO("kernel " << static_cast<int>(kernel));
      spgemm_options<std::conditional_t<Enabled, throwing_semiring, throwing_semiring>> options;
      options.ring.me = comm.rank();
      options.kernel = kernel;
      require_raised_everywhere([&] { (void)spgemm(a, b, options); });
    }
    // Batches (the memory budget) and masks take the expand-sort-compress path.
    spgemm_options<std::conditional_t<Enabled, throwing_semiring, throwing_semiring>> batched;
    batched.ring.me = comm.rank();
    batched.memory_budget_bytes = 256;
    require_raised_everywhere([&] { (void)spgemm(a, b, batched); });
    spgemm_options<std::conditional_t<Enabled, throwing_semiring, throwing_semiring>> masked;
    masked.ring.me = comm.rank();
    require_raised_everywhere([&] { (void)spgemm_masked(a, a, b, masked); });
    // The product still works afterwards, with the same windows (B's workspace), and gives what it gave before.
    test::require_equal(spgemm(a, b), before);
  }
}

TEST_CASE("a semiring that throws on one rank: spgemm raises it everywhere, with every kernel" * doctest::skip(!kernels_may_throw)) {
  semiring_that_throws();
}

template <bool Enabled = kernels_may_throw>
void apply_drop_zeros_functor_that_throws() {
  if constexpr (Enabled) {
    const auto& comm = test::world();
    const auto a = operand(3);
    const int me = comm.rank();
    require_raised_everywhere([&] {
      (void)apply_drop_zeros(a, [me](double v) {
        if (me == failing_rank()) fail();
        return v;
      });
    });
  }
}

TEST_CASE("an apply_drop_zeros functor that throws on one rank is raised everywhere" * doctest::skip(!kernels_may_throw)) {
  apply_drop_zeros_functor_that_throws();
}

// prune runs its predicate in the execution space (csr storage), as apply_drop_zeros does.
template <bool Enabled = kernels_may_throw>
void prune_predicate_that_throws() {
  if constexpr (Enabled) {
    const auto& comm = test::world();
    const auto a = operand(4);
    const int me = comm.rank();
    require_raised_everywhere([&] {
      (void)prune(a, [me](double v) {
        if (me == failing_rank()) fail();
        return v < 0.5;
      });
    });
  }
}

TEST_CASE("a prune predicate that throws on one rank is raised everywhere" * doctest::skip(!kernels_may_throw)) {
  prune_predicate_that_throws();
}

// reduce_columns folds each rank's columns in the execution space (csr storage), so its operation
// may throw only where kernels run on the calling thread.
template <bool Enabled = kernels_may_throw>
void reduce_columns_operation_that_throws() {
  if constexpr (Enabled) {
    const auto& comm = test::world();
    // 12 x 4 with 3 entries per row: every rank folds two entries of some column.
    const auto a = generate::uniform_random<double, P>(comm, 12, 4, 3, 5);
    const int me = comm.rank();
    require_raised_everywhere([&] {
      (void)reduce_columns(a, [me](double x, double y) {
        if (me == failing_rank()) fail();
        return x + y;
      });
    });
    // Only the owner's fold (partial results of several ranks) throws: still everywhere.
    if (comm.size() > 1) {
      const auto spread = generate::uniform_random<double, P>(comm, 40, 1, 1, 6);  // one column, owned by rank 0
      try {
        (void)reduce_columns(spread, [me](double x, double y) {
          if (me == 0) throw std::runtime_error("owner fold failed");
          return x + y;
        });
        FAIL("no exception");
      } catch (const error& e) {
        CHECK(e.origin_rank() == 0);
        CHECK(e.message() == "owner fold failed");
      }
    }
  }
}

TEST_CASE("a reduce_columns operation that throws on one rank is raised everywhere" * doctest::skip(!kernels_may_throw)) {
  reduce_columns_operation_that_throws();
}

template <bool Enabled = kernels_may_throw>
void combine_that_throws() {
  if constexpr (Enabled) {
    const auto& comm = test::world();
    struct throwing_combine {
      double operator()(double x, double y) const {
        if (x < 0) throw std::runtime_error(failure_text());
        return x + y;
      }
    };
    // Duplicates only in the failing rank's rows, with a negative value that makes combine throw.
    const row_block::mapping rows(comm.size(), 8, 8);
    triplets<double> t;
    const auto first = rows.row_begin(failing_rank());
    if (comm.rank() == 0) {
      t.push_back(first, 0, -1.0);
      t.push_back(first, 0, -2.0);
    }
    build_options<P, throwing_combine> options;
    require_raised_everywhere([&] { (void)build_from_triplets<double, P>(comm, 8, 8, t, options); });
  }
}

TEST_CASE("a combine that throws on one rank fails build_from_triplets everywhere" * doctest::skip(!kernels_may_throw)) {
  combine_that_throws();
}

TEST_CASE("a mailbox handler that throws on one rank is raised at drain on every rank, after every record") {
  const auto& comm = test::world();
  const int me = comm.rank(), p = comm.size();
  auto check = [&](auto& ctx) {
    // Counted apart: the aggregator serves records inside any collective, so the next round's
    // records may be handled here before this rank starts that round.
    int first_round = 0, second_round = 0;
    mailbox<int> box(ctx.messages(), [&](int, const int& value) {
      if (value == 7) {
        ++second_round;
        return;
      }
      ++first_round;
      if (me == failing_rank() && value == 3) fail();
    });
    for (int d = 0; d < p; ++d)
      for (int v = 0; v < 5; ++v) box.push(d, v);
    require_raised_everywhere([&] { box.drain(); });
    CHECK(first_round == 5 * p);  // the failure did not stop delivery
    // The next round drains normally.
    for (int d = 0; d < p; ++d) box.push(d, 7);
    box.drain();
    CHECK(second_round == p);
  };
  SUBCASE("mpi_rma") {
    mpi_rma::context ctx(comm);
    check(ctx);
  }
  SUBCASE("aggregator") {
    aggregator::context ctx(comm);
    check(ctx);
  }
}

}  // namespace user_callables_tests
