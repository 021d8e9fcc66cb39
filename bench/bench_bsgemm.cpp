// bench_bsgemm: block-sparse GEMM C = A * B with M much smaller than N = K (seed 004 §5.1, scaled to
// this machine), and the ABCD tensor contraction; one JSON line per measurement, plus a dgemm_reference
// line with the system BLAS's one-core DGEMM rate (every rank running it at once).
//
//   mpiexec -n 2 bench_bsgemm [--tiles 32:128,128:512] [--densities 1,0.3,0.1,0.03] [--m 1024] [--n N]
//                             [--memory-mb 1024] [--grid-rows 1] [--contract] [--reps 3] [--backend rma]
//                             [--tile-kernel auto|blas|packed] [--a-memory shared|private]
//
// GFLOP/s count the flops of nonzero tile products only (what the plan executes). "efficiency" is
// the median over reps of (GFLOP/s) / (ranks x one-core DGEMM rate), each product timed right after
// a DGEMM run on every rank, so that the host's drift cancels.
#include "support/bench_common.hpp"
#include "support/block_sparse_problems.hpp"
#include "tessera/kernels/host_blas.hpp"

#include <KokkosBlas3_gemm.hpp>

#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

namespace {

using namespace tessera;

// share_on_node's precondition: node-shared memory is host memory. Where the default execution space
// is a device (a CUDA build), A stays private and --a-memory shared is refused.
constexpr bool a_can_be_node_shared =
    std::is_same_v<Kokkos::DefaultExecutionSpace::memory_space, Kokkos::HostSpace>;

struct options : bench::synthetic_options {
  double memory_mb = 1024;
  bool contract = true;
  bool synthetic = true;
  bsgemm_tile_kernel tile_kernel = bsgemm_tile_kernel::automatic;
  std::string backend = "rma";
  bool shared_a = a_can_be_node_shared;  // A in node-shared memory (share_on_node): read in place on one node
};

[[noreturn]] void usage(int code) {
  fmt::print(code == 0 ? stdout : stderr,
             "usage: bench_bsgemm [--tiles LO:HI,...] [--densities D,...] [--m M] [--n N] [--memory-mb MB]\n"
             "                    [--grid-rows p] [--no-contract] [--contract-only] [--seed S] [--reps N]\n"
             "                    [--backend rma|progress|aggregator] [--tile-kernel auto|blas|packed]\n"
             "                    [--a-memory shared|private]\n");
  std::exit(code);
}

options parse(int argc, char** argv) {
  options o;
  for (int k = 1; k < argc; ++k) {
    const std::string_view arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) usage(2);
      return argv[++k];
    };
    const auto taken = o.parse(arg, value);
    if (!taken) usage(2);
    if (*taken) continue;
    if (arg == "--memory-mb") o.memory_mb = std::stod(value());
    else if (arg == "--no-contract") o.contract = false;
    else if (arg == "--contract-only") o.synthetic = false;
    else if (arg == "--tile-kernel") {
      const std::string k = value();
      if (k == "auto") o.tile_kernel = bsgemm_tile_kernel::automatic;
      else if (k == "blas") o.tile_kernel = bsgemm_tile_kernel::blas;
      else if (k == "packed") o.tile_kernel = bsgemm_tile_kernel::packed;
      else usage(2);
    }
    else if (arg == "--backend") o.backend = value();
    else if (arg == "--a-memory") {
      const std::string m = value();
      if (m != "shared" && m != "private") usage(2);
      if (m == "shared" && !a_can_be_node_shared) {
        fmt::print(stderr, "bench_bsgemm: --a-memory shared needs a host default execution space "
                           "(node-shared memory is host memory)\n");
        std::exit(2);
      }
      o.shared_a = m == "shared";
    }
    else if (arg == "--help" || arg == "-h") usage(0);
    else usage(2);
  }
  return o;
}

/// The host BLAS and the kernels it runs ("OpenBLAS SkylakeX"; "other" when it is not OpenBLAS): an
/// OpenBLAS older than the CPU runs its SSE3 kernels, 4x slower (kernels/host_blas.hpp).
std::string host_blas_name() {
  const auto blas = tessera::kernels::host_blas();
  return blas.library.empty() ? "other" : blas.library + " " + blas.core;
}

/// The system BLAS's one-core DGEMM on 1536 x 1536 operands, in GFLOP/s.
class dgemm_reference {
 public:
  dgemm_reference() : a_("a", n, n), b_("b", n, n), c_("c", n, n) {
    Kokkos::deep_copy(a_, 0.5);
    Kokkos::deep_copy(b_, 0.25);
  }
  /// One run's rate.
  double once() {
    const auto start = std::chrono::steady_clock::now();
    KokkosBlas::gemm("N", "N", 1.0, a_, b_, 0.0, c_);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return 2.0 * static_cast<double>(n * n * n) / seconds * 1e-9;
  }
  /// The best of three runs.
  double best() {
    double rate = 0;
    for (int r = 0; r < 3; ++r) rate = std::max(rate, once());
    return rate;
  }

 private:
  static constexpr std::size_t n = 1536;
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> a_, b_, c_;
};

template <class T, class D, class B, class E>
double checksum(const dist_matrix<T, policy<D, tiles, B, E>>& c) {
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.local().values);
  double s = 0;
  for (std::size_t e = 0; e < host.extent(0); ++e) s += static_cast<double>(host(e));
  return c.comm().sum(s);
}

template <class Backend>
void measure(const communicator& comm, const options& opt, const std::string& problem,
             const dist_matrix<double, policy<block_cyclic_2d, tiles, Backend>>& private_a,
             const dist_matrix<double, policy<replicated_columns, tiles, Backend>>& b) {
  const auto a = [&] {
    if constexpr (a_can_be_node_shared) return opt.shared_a ? share_on_node(private_a) : private_a;
    else return private_a;
  }();
  const bsgemm_options bo{.memory_bytes = static_cast<std::size_t>(opt.memory_mb * 1024 * 1024),
                          .screening_threshold = 0.0,
                          .tile_kernel = opt.tile_kernel};
  bsgemm_plan plan(a, b, bo);
  auto c = plan.make_c();
  // This machine's one-core rate drifts by several percent within a run (turbo, other tenants of
  // the host), so every timed product is paired with a one-core DGEMM run just before it (every
  // rank at once): the efficiency is the median of the pairs' ratios, and the reference rate and
  // the time are the medians of their own runs.
  dgemm_reference reference;
  comm.stats().reset();
  plan.apply(1.0, a, b, 0.0, c);  // warm-up (counted by traffic_per_run)
  std::vector<double> rates, times, ratios;
  for (int r = 0; r < opt.reps; ++r) {
    comm.barrier();
    rates.push_back(comm.sum(reference.once()) / comm.size());
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    plan.apply(1.0, a, b, 0.0, c);
    times.push_back(comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
    ratios.push_back(plan.flops() / times.back() * 1e-9 / (rates.back() * comm.size()));
  }
  const double per_core = bench::median(rates), seconds = bench::median(times), efficiency = bench::median(ratios);
  const auto traffic = bench::traffic_per_run(comm, "bsgemm", opt.reps);
  const double sum = checksum(c);
  const double rss = bench::peak_rss_mb(comm);
  const std::size_t blocks = comm.max(plan.num_blocks()), chunks = comm.max(plan.num_chunks());
  const double gflops = plan.flops() / seconds * 1e-9;
  if (comm.rank() == 0)
    fmt::print("{{\"bench\": \"bsgemm\", \"matrix\": \"{}\", \"m\": {}, \"n\": {}, \"k\": {}, \"np\": {}, \"threads\": {}, "
               "\"grid\": \"{}x{}\", \"backend\": \"{}\", \"tile_kernel\": \"{}\", \"a_read\": \"{}\", \"density_a\": {:.4f}, \"density_b\": {:.4f}, "
               "\"density_c\": {:.4f}, \"flops\": {:.6g}, \"seconds\": {:.6f}, \"reps\": {}, \"gflops\": {:.3f}, "
               "\"dgemm_gflops_per_core\": {:.3f}, \"host_blas\": \"{}\", \"efficiency\": {:.3f}, \"blocks\": {}, \"chunks\": {}, \"checksum\": {:.10g}, \"bytes_sent\": {}, "
               "\"messages_sent\": {}, \"peak_rss_mb\": {:.1f}}}\n",
               problem, a.num_rows(), b.num_cols(), a.num_cols(), comm.size(), tessera::bench::threads(), a.mapping().grid().p,
               a.mapping().grid().q, Backend::name(), plan.packed_tiles() ? "packed" : "blas",
               plan.read_a_in_place() ? "in_place" : "fetched", a.density(), b.density(), c.density(), plan.flops(), seconds,
               opt.reps, gflops, per_core, host_blas_name(), efficiency, blocks, chunks, sum, traffic.total.bytes,
               traffic.total.messages, rss);
}

template <class Backend>
void run(const communicator& comm, const options& opt) {
  TESSERA_REQUIRE(opt.grid_rows > 0 && comm.size() % opt.grid_rows == 0, invalid_argument,
                  "--grid-rows {} does not divide the {} ranks", opt.grid_rows, comm.size());
  const process_grid grid{opt.grid_rows, comm.size() / opt.grid_rows};

  // The physical reference: every rank runs one-core DGEMM at once. A BLAS that runs below the CPU
  // would make it (and every efficiency below) a quarter of what it is: say so first.
  if (comm.rank() == 0) tessera::kernels::host_blas_warning("bench_bsgemm's one-core DGEMM reference");
  comm.barrier();
  const double per_core = comm.sum(dgemm_reference{}.best()) / comm.size();
  if (comm.rank() == 0)
    fmt::print("{{\"bench\": \"dgemm_reference\", \"matrix\": \"dense1536\", \"np\": {}, \"backend\": \"blas\", "
               "\"host_blas\": \"{}\", \"gflops_per_core\": {:.3f}, \"target_gflops\": {:.3f}}}\n",
               comm.size(), host_blas_name(), per_core, 0.8 * per_core * comm.size());

  if (opt.synthetic)
    for (const auto& [lo, hi] : opt.tiles)
      for (double density : opt.densities) {
        // Sparser problems are wider, so that B holds about as many nonzeros and there are enough tiles.
        const bench::synthetic_problem pr(opt.m, bench::default_n(opt.n, density), lo, hi, density, opt.seed);
        const auto& mt = pr.m_tiles;
        const auto& kt = pr.k_tiles;
        const auto& nt = pr.n_tiles;
        auto a_pattern = [&](std::size_t i, std::size_t j) { return pr.a_nonzero(i, j); };
        auto b_pattern = [&](std::size_t i, std::size_t j) { return pr.b_nonzero(i, j); };
        const auto a_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), mt, kt);
        auto a = make_block_sparse<double, policy<block_cyclic_2d, tiles, Backend>>(
            comm, a_map, a_pattern, [](global_index i, global_index j) { return generate::tensor_value(i, j, 1); });
        const auto owners = bsgemm_column_owners(a.shape(), pattern_shape(kt, nt, b_pattern), grid.q);
        const auto b_map = replicated_columns{.grid = grid}.make_tile_mapping(comm.size(), kt, nt, owners);
        auto b = make_block_sparse<double, policy<replicated_columns, tiles, Backend>>(
            comm, b_map, b_pattern, [](global_index i, global_index j) { return generate::tensor_value(i, j, 2); });
        measure(comm, opt, fmt::format("synthetic-tiles{}-{}-density{}", lo, hi, density), a, b);
      }

  if (opt.contract) {
    // The ABCD term on a molecular chain: O = 16, U = 64 on a chain of length 32, clusters of 6..16
    // orbitals (pair tiles of 36..256 elements per side), cutoff 5.
    const generate::abcd_problem mol(16, 64, 6, 16, 5.0, 32.0, opt.seed);
    auto t_pattern = [&](std::size_t x, std::size_t y) { return mol.t_nonzero(x, y); };
    auto v_pattern = [&](std::size_t x, std::size_t y) { return mol.v_nonzero(x, y); };
    const auto t_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), mol.ij, mol.ab);
    auto t = make_block_sparse<double, policy<block_cyclic_2d, tiles, Backend>>(
        comm, t_map, t_pattern, [](global_index i, global_index j) { return generate::tensor_value(i, j, 1); });
    const auto owners = bsgemm_column_owners(t.shape(), pattern_shape(mol.ab, mol.ab, v_pattern), grid.q);
    const auto v_map = replicated_columns{.grid = grid}.make_tile_mapping(comm.size(), mol.ab, mol.ab, owners);
    auto v = make_block_sparse<double, policy<replicated_columns, tiles, Backend>>(
        comm, v_map, v_pattern, [](global_index i, global_index j) { return 0.1 * generate::tensor_value(i, j, 2); });
    measure(comm, opt, "contract-O16-U64-tiles6-16-cutoff5", t, v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
  tessera::environment env(argc, argv, tessera::bench::environment_for(opt.backend));
  return tessera::bench::with_backend(opt.backend, [&]<class Backend>() { run<Backend>(env.world(), opt); });
}
