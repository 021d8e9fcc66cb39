// comm/mpi_memory.hpp: where the windows and buffers MPI touches live. Built twice: as configured,
// and with TESSERA_DEVICE_AWARE_MPI=1 (test_mpi_memory_device_aware), where mpi_rma makes real
// windows even on one rank. On host execution spaces both must move exactly the same data.
#include "test_support.hpp"

#include <tessera/comm/mpi_memory.hpp>

#include <numeric>

namespace mpi_memory_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

using host_space = Kokkos::DefaultHostExecutionSpace::memory_space;

static_assert(mpi_reaches<Kokkos::HostSpace, mpi_rma> && mpi_reaches<Kokkos::HostSpace, aggregator> &&
                  mpi_reaches<Kokkos::HostSpace, progress_rank>,
              "MPI reaches host memory through every backend");
static_assert(std::is_same_v<mpi_memory_space<host_space, aggregator>, host_space>);
static_assert(transfers_device_memory<mpi_rma>, "mpi_rma hands buffers straight to MPI");
static_assert(!transfers_device_memory<aggregator> && !transfers_device_memory<progress_rank>,
              "the aggregator and progress ranks copy requests through host memory");
static_assert(!staging_window<double, Kokkos::HostSpace, mpi_rma>::exposes_device_memory);

double code(int rank, std::size_t i) { return rank * 1000.0 + static_cast<double>(i) + 0.25; }

// Every rank stages its part in a window, then reads its right neighbour's part into an
// mpi_buffer_for landing and copies it to the kernels' View: exact values (and on mpi_rma one
// counted message per get).
template <class Backend>
void check_window_roundtrip(const communicator& comm, typename Backend::options options = {}) {
  typename Backend::context ctx(comm, options);
  const int p = comm.size(), me = comm.rank();
  const auto extent = [](int rank) { return std::size_t{5} + 3 * static_cast<std::size_t>(rank); };
  staging_window<double, host_space, Backend> window(ctx, extent(me));
  REQUIRE(window.valid());
  REQUIRE(window.local().extent(0) == extent(me));
  Kokkos::View<double*, host_space> mine("mine", extent(me));
  Kokkos::parallel_for(Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, extent(me)),
                       [=](std::size_t i) { mine(i) = code(me, i); });
  Kokkos::deep_copy(window.local(), mine);
  fence_before_mpi(Kokkos::DefaultHostExecutionSpace());
  ctx.barrier();

  const int right = (me + 1) % p;
  Kokkos::View<double*, host_space> halo("halo", extent(right));
  const auto landing = mpi_buffer_for<Backend>(halo);
  CHECK(landing.data() == halo.data());  // host memory: no mirror, no copy
  const std::string scope = fmt::format("mpi_memory-{}-{}", Backend::name(), comm.size());
  {
    stats_scope counting(comm, scope);
    auto pending = ctx.get_nb(window.segment_handle(), right, 0, std::span<double>(landing.data(), landing.extent(0)));
    pending.wait();
  }
  copy_from_mpi(halo, landing);
  for (std::size_t i = 0; i < extent(right); ++i) REQUIRE(halo(i) == code(right, i));
  if constexpr (std::is_same_v<Backend, mpi_rma>) {  // the other backends' request/reply counts: test_backends
    const traffic counted = comm.stats().of(scope);
    CHECK(counted.messages == (right == me ? 0u : 1u));
    CHECK(counted.bytes == (right == me ? 0u : extent(right) * sizeof(double)));
  }
  ctx.barrier();  // nobody still reads my window when it closes

  // Replacing a window (what SpMM's workspace does when it grows) keeps it usable.
  window = staging_window<double, host_space, Backend>(ctx, 2 * extent(me));
  Kokkos::deep_copy(window.local(), 7.0);
  ctx.barrier();
  std::vector<double> two(2, 0.0);
  ctx.get(window.segment_handle(), right, 2 * extent(right) - 2, std::span<double>(two));
  CHECK(two == std::vector<double>{7.0, 7.0});
  ctx.barrier();
}

}  // namespace

TEST_CASE("staging windows and landing buffers move exact data on mpi_rma") {
  check_window_roundtrip<mpi_rma>(test::world());
}

TEST_CASE("staging windows and landing buffers move exact data on the aggregator") {
  check_window_roundtrip<aggregator>(test::world());
}

TEST_CASE("staging windows work on progress ranks" * doctest::skip(!test::progress_ranks_requested())) {
  check_window_roundtrip<progress_rank>(test::world());
}

TEST_CASE("mpi_rma on a one-rank communicator: local copies, or real windows in a device-aware build") {
  const auto self = communicator::duplicate(MPI_COMM_SELF);
  check_window_roundtrip<mpi_rma>(self);
}

}  // namespace mpi_memory_tests
