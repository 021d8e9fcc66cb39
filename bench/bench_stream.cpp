// bench_stream: STREAM triad (a[i] = b[i] + 3 c[i]) on every rank at once, one core per rank,
// arrays far larger than the caches; the best of --reps runs. One JSON line with
// bytes_per_second summed over ranks (3 * n * 8 bytes per rank and run, as STREAM counts): the
// memory-bandwidth bound that bench_spmm's --stream-gbs compares SpMM against.
//
//   mpiexec -n 2 bench_stream [--n 33554432] [--reps 10]
#include "support/bench_common.hpp"

int main(int argc, char** argv) {
  std::size_t n = std::size_t{1} << 25;  // 256 MiB per array: three arrays far exceed any cache
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--n" && i + 1 < argc) n = std::stoull(argv[++i]);
    else if (arg == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else {
      fmt::print(arg == "--help" ? stdout : stderr, "usage: {} [--n DOUBLES_PER_ARRAY] [--reps N]\n", argv[0]);
      return arg == "--help" ? 0 : 2;
    }
  }
  tessera::environment env(argc, argv);
  const auto& comm = env.world();
  const double bps = tessera::bench::stream_triad_bytes_per_second(comm, n, reps);
  const double rss = tessera::bench::peak_rss_mb(comm);
  if (comm.rank() == 0)
    fmt::print("{{\"bench\": \"stream\", \"op\": \"triad\", \"matrix\": \"none\", \"np\": {}, \"backend\": \"none\", "
               "\"n\": {}, \"seconds\": {:.6f}, \"reps\": {}, \"bytes_per_second\": {:.6g}, \"gbs\": {:.3f}, "
               "\"gbs_per_rank\": {:.3f}, \"peak_rss_mb\": {:.1f}}}\n",
               comm.size(), n, 3.0 * 8.0 * static_cast<double>(n) * comm.size() / bps, reps, bps, bps / 1e9,
               bps / 1e9 / comm.size(), rss);
  return 0;
}
