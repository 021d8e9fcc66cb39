// tessera-rmat-summary: generate an R-MAT graph on every rank, build it as a
// distributed CSR matrix, and print how it landed on the ranks.
//
//   mpirun -n 2 tessera-rmat-summary --scale 14 --edge-factor 16 --balance nonzeros
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/distribution/row_block.hpp>
#include <tessera/environment.hpp>
#include <tessera/generators/rmat.hpp>
#include <tessera/matrix/local_triplets.hpp>
#include <tessera/matrix/matrix_market.hpp>
#include <tessera/matrix/redistribute.hpp>
#include <tessera/storage/csr.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

struct options {
  int scale = 14;
  int edge_factor = 16;
  std::uint64_t seed = 1;
  bool balance_nonzeros = false;
  std::string write_path;
};

[[noreturn]] void usage(int code) {
  fmt::print(code == 0 ? stdout : stderr,
             "usage: tessera-rmat-summary [--scale S] [--edge-factor E] [--seed N] [--balance rows|nonzeros] "
             "[--write FILE.mtx]\n");
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
    if (arg == "--scale") o.scale = std::stoi(value());
    else if (arg == "--edge-factor") o.edge_factor = std::stoi(value());
    else if (arg == "--seed") o.seed = std::stoull(value());
    else if (arg == "--balance") {
      const auto b = value();
      if (b != "rows" && b != "nonzeros") usage(2);
      o.balance_nonzeros = b == "nonzeros";
    } else if (arg == "--write") o.write_path = value();
    else if (arg == "--help" || arg == "-h") usage(0);
    else usage(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  const auto& comm = env.world();
  const options opt = parse(argc, argv);
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;

  int status = 0;
  {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    auto a = tessera::generate::rmat<std::int64_t, P>(comm, opt.scale, opt.edge_factor, opt.seed);
    if (opt.balance_nonzeros) {
      const auto row_nnz = tessera::local_row_counts(a);
      if (auto better = tessera::row_block{tessera::row_block::balance::nonzeros}.rebalance(comm, a.mapping(), row_nnz))
        a = tessera::redistribute(a, *better);
    }
    const double seconds = comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

    // Validation: every generated edge is counted exactly once in the values.
    const auto mine = tessera::local_triplets(a);
    std::int64_t local_edges = 0;
    for (auto v : mine.values) local_edges += v;
    const std::int64_t edges = comm.sum(local_edges);
    const std::int64_t expected = (std::int64_t{1} << opt.scale) * opt.edge_factor;

    const auto rows = comm.allgather(static_cast<tessera::global_index>(a.local_rows()));
    const auto nnz = comm.allgather(a.local_nnz());
    const auto traffic = tessera::reduce_traffic(comm);
    if (comm.rank() == 0) {
      fmt::print("R-MAT scale {} edge factor {} seed {} on {} ranks: {} x {}, {} nonzeros ({} edges), built in {:.3f} s\n",
                 opt.scale, opt.edge_factor, opt.seed, comm.size(), a.num_rows(), a.num_cols(), a.global_nnz(), edges,
                 seconds);
      for (int r = 0; r < comm.size(); ++r)
        fmt::print("  rank {}: {} rows, {} nonzeros\n", r, rows[static_cast<std::size_t>(r)], nnz[static_cast<std::size_t>(r)]);
      fmt::print("  traffic over all ranks: {}\n", traffic.total);
      fmt::print("  rank 0 traffic by scope: {}\n", comm.stats());
      fmt::print("validation: {}\n", edges == expected ? "PASSED" : "FAILED");
    }
    if (!opt.write_path.empty()) tessera::write_matrix_market(a, opt.write_path);
    status = edges == expected ? 0 : 1;
  }
  return status;
}
