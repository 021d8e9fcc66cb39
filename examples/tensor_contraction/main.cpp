// tessera-contract: the coupled-cluster ABCD term R(ij,ab) = sum_cd T(ij,cd) V(cd,ab)
// as a block-sparse GEMM on a synthetic quasi-one-dimensional molecule.
//
//   mpirun -n 2 tessera-contract --occupied 12 --unoccupied 60 --tile-min 4 --tile-max 12 --cutoff 6 --iterations 5
//   mpirun -n 2 tessera-contract --occupied 6 --unoccupied 20 --check      # validate against a dense product
#include <tessera/comm/aggregator.hpp>  // the three backends: --backend picks one at run time
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/comm/progress_rank.hpp>
#include <tessera/distribution/block_cyclic_2d.hpp>
#include <tessera/distribution/replicated_columns.hpp>
#include <tessera/environment.hpp>
#include <tessera/generators/molecular_chain.hpp>
#include <tessera/matrix/make_block_sparse.hpp>
#include <tessera/matrix/share_on_node.hpp>
#include <tessera/ops/bsgemm.hpp>
#include <tessera/storage/tiles.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

struct options {
  tessera::global_index occupied = 12, unoccupied = 60;
  tessera::global_index tile_min = 4, tile_max = 12;
  double cutoff = 6.0;
  double length = 0;  // 0: one unit of chain per unoccupied orbital / 2
  int iterations = 5;
  int grid_rows = 1;
  double memory_mb = 1024;
  double screening = 0;
  std::uint64_t seed = 1;
  std::string backend = "rma";
  bool check = false;
  bool shared_t = true;  // T in node-shared memory: ranks on one node read each other's tiles in place
};

[[noreturn]] void usage(int code) {
  fmt::print(code == 0 ? stdout : stderr,
             "usage: tessera-contract [--occupied O] [--unoccupied U] [--tile-min N] [--tile-max N] [--cutoff D]\n"
             "                        [--length L] [--iterations K] [--grid-rows p] [--memory-mb M]\n"
             "                        [--screening THRESHOLD] [--seed S] [--backend rma|aggregator|progress] [--check]\n"
             "                        [--t-memory shared|private]\n"
             "R(ij,ab) = sum_cd T(ij,cd) V(cd,ab): T is (O*O) x (U*U), V is (U*U) x (U*U). Orbitals lie on a chain of\n"
             "length L (default U/2), clustered into tiles of [tile-min, tile-max] orbitals; a tile pair is nonzero\n"
             "when the clusters' centres are within the cutoff. The plan is made once and reused by every\n"
             "iteration; --check compares R with a dense product (exit code 1 on mismatch).\n");
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
    if (arg == "--occupied") o.occupied = std::stoll(value());
    else if (arg == "--unoccupied") o.unoccupied = std::stoll(value());
    else if (arg == "--tile-min") o.tile_min = std::stoll(value());
    else if (arg == "--tile-max") o.tile_max = std::stoll(value());
    else if (arg == "--cutoff") o.cutoff = std::stod(value());
    else if (arg == "--length") o.length = std::stod(value());
    else if (arg == "--iterations") o.iterations = std::max(1, std::stoi(value()));
    else if (arg == "--grid-rows") o.grid_rows = std::stoi(value());
    else if (arg == "--memory-mb") o.memory_mb = std::stod(value());
    else if (arg == "--screening") o.screening = std::stod(value());
    else if (arg == "--seed") o.seed = std::stoull(value());
    else if (arg == "--backend") o.backend = value();
    else if (arg == "--t-memory") {
      const std::string m = value();
      if (m != "shared" && m != "private") usage(2);
      o.shared_t = m == "shared";
    }
    else if (arg == "--check") o.check = true;
    else if (arg == "--help" || arg == "-h") usage(0);
    else usage(2);
  }
  if (o.length <= 0) o.length = std::max(1.0, static_cast<double>(o.unoccupied) / 2.0);
  return o;
}

template <class Backend>
int run(const tessera::communicator& comm, const options& opt) {
  using namespace tessera;
  const generate::abcd_problem mol(opt.occupied, opt.unoccupied, opt.tile_min, opt.tile_max, opt.cutoff, opt.length,
                                   opt.seed);
  TESSERA_REQUIRE(opt.grid_rows > 0 && comm.size() % opt.grid_rows == 0, invalid_argument,
                  "--grid-rows {} does not divide the {} ranks", opt.grid_rows, comm.size());
  const process_grid grid{opt.grid_rows, comm.size() / opt.grid_rows};
  auto t_pattern = [&](std::size_t a, std::size_t b) { return mol.t_nonzero(a, b); };
  auto v_pattern = [&](std::size_t a, std::size_t b) { return mol.v_nonzero(a, b); };

  const auto t_map = block_cyclic_2d{.grid = grid}.make_tile_mapping(comm.size(), mol.ij, mol.ab);
  auto t = make_block_sparse<double, policy<block_cyclic_2d, tiles, Backend>>(
      comm, t_map, t_pattern, [](global_index i, global_index j) { return generate::tensor_value(i, j, 1); });
  // T in memory the ranks of a node share (host memory only): the plan reads other ranks' tiles
  // where they lie, and the refinement below writes them in place, so T stays shared.
  if constexpr (std::is_same_v<typename decltype(t)::memory_space, Kokkos::HostSpace>)
    if (opt.shared_t) t = share_on_node(t);
  // V is stationary: its columns go to grid columns by flop count, replicated over grid rows.
  const auto owners = bsgemm_column_owners(t.shape(), pattern_shape(mol.ab, mol.ab, v_pattern), grid.q);
  const auto v_map = replicated_columns{.grid = grid}.make_tile_mapping(comm.size(), mol.ab, mol.ab, owners);
  auto v = make_block_sparse<double, policy<replicated_columns, tiles, Backend>>(
      comm, v_map, v_pattern, [](global_index i, global_index j) { return 0.1 * generate::tensor_value(i, j, 2); });

  const bsgemm_options bo{.memory_bytes = static_cast<std::size_t>(opt.memory_mb * 1024 * 1024),
                          .screening_threshold = opt.screening};
  const auto inspect_start = std::chrono::steady_clock::now();
  bsgemm_plan plan(t, v, bo);
  const double inspect_s = comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - inspect_start).count());
  auto r = plan.make_c();

  std::vector<double> times;
  const double t_scale = 0.5;
  for (int it = 0; it < opt.iterations; ++it) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    plan.apply(1.0, t, v, 0.0, r);
    times.push_back(comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
    if (it + 1 < opt.iterations) {
      // "Refine" T: new values, same shape, so the plan stays valid.
      auto values = t.local().values;
      Kokkos::parallel_for(
          "contract::refine", Kokkos::RangePolicy<typename decltype(t)::execution_space>(0, values.extent(0)),
          KOKKOS_LAMBDA(const std::size_t e) { values(e) *= t_scale; });
      Kokkos::fence();
    }
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const auto traffic = reduce_traffic(comm, "bsgemm");
  const std::size_t blocks = comm.max(plan.num_blocks()), chunks = comm.max(plan.num_chunks());

  int status = 0;
  if (opt.check) {
    // Dense R = T * V from the gathered operands (with T as it was in the last iteration).
    const auto td = gather_dense(t), vd = gather_dense(v), rd = gather_dense(r);
    const auto m = static_cast<std::size_t>(t.num_rows()), k = static_cast<std::size_t>(t.num_cols()),
               n = static_cast<std::size_t>(v.num_cols());
    double worst = 0, scale = 0;
    for (std::size_t j = 0; j < n && opt.screening <= 0; ++j)
      for (std::size_t i = 0; i < m; ++i) {
        double s = 0;
        for (std::size_t l = 0; l < k; ++l) s += td[i + l * m] * vd[l + j * k];
        worst = std::max(worst, std::abs(s - rd[i + j * m]));
        scale = std::max(scale, std::abs(s));
      }
    const bool ok = worst <= 1e-10 * (1.0 + scale);
    if (comm.rank() == 0)
      fmt::print("check: max |R - T*V| = {:.3e} (max |R| {:.3e}): {}\n", worst, scale,
                 opt.screening > 0 ? "skipped (screening on)" : ok ? "OK" : "MISMATCH");
    status = ok ? 0 : 1;
  }
  if (comm.rank() == 0) {
    fmt::print("ABCD term: O = {}, U = {}, {} occupied and {} unoccupied clusters, cutoff {}, chain length {}\n",
               opt.occupied, opt.unoccupied, mol.occupied.tiles.num_tiles(), mol.unoccupied.tiles.num_tiles(),
               opt.cutoff, opt.length);
    fmt::print("T: {} x {}, density {:.2f}%   V: {} x {}, density {:.2f}%   R: density {:.2f}%\n", t.num_rows(),
               t.num_cols(), 100 * t.density(), v.num_rows(), v.num_cols(), 100 * v.density(), 100 * r.density());
    fmt::print("grid {} x {} on {}: {} blocks, {} chunks per rank at most; inspection {:.3f} s\n", grid.p, grid.q,
               Backend::name(), blocks, chunks, inspect_s);
    fmt::print("flops of nonzero tile products: {:.4g}; {} iterations, median {:.4f} s, {:.2f} GFLOP/s\n",
               plan.flops(), opt.iterations, median, plan.flops() / median * 1e-9);
    fmt::print("T's tiles {}; traffic: {} messages, {} bytes over all iterations\n",
               plan.read_a_in_place() ? "read in place (node-shared memory)" : "fetched through the backend",
               traffic.total.messages, traffic.total.bytes);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
  auto env_options = tessera::environment_options::from_environment_variables();
  if (opt.backend == "progress") env_options.progress_ranks = true;
  tessera::environment env(argc, argv, env_options);
  const auto& comm = env.world();
  int status = 0;
  try {
    if (opt.backend == "rma") status = run<tessera::mpi_rma>(comm, opt);
    else if (opt.backend == "aggregator") status = run<tessera::aggregator>(comm, opt);
    else if (opt.backend == "progress") status = run<tessera::progress_rank>(comm, opt);
    else {
      if (comm.rank() == 0) fmt::print(stderr, "unknown backend '{}'\n", opt.backend);
      status = 2;
    }
  } catch (const tessera::error& e) {
    if (comm.rank() == 0) fmt::print(stderr, "{}\n", e.what());
    status = 1;
  }
  return comm.max(status);
}
