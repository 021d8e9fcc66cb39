#pragma once
// Shared by tessera's benchmarks: the command line of the brief's conventions,
// input matrices, timing (median over reps after a warm-up, max over ranks)
// and one JSON line per measurement.
#include <tessera/tessera.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <optional>
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::bench {

struct args {
  std::string matrix_path;
  int rmat_scale = -1;
  int edge_factor = 16;
  /// --hubs-first: R-MAT without its vertex relabelling (rmat_options::permute_vertices = false):
  /// vertex 0 is the largest hub and the first rows hold most entries, as in a graph sorted by degree.
  bool rmat_hubs_first = false;
  global_index laplacian_n = -1;
  /// --scramble: the input's vertices relabelled at random (one permutation of its rows and columns,
  /// the same on every rank, rows redistributed): a mesh numbered in no useful order.
  bool scramble = false;
  global_index random_n = -1;
  int nnz_per_row = 8;
  std::uint64_t seed = 1;
  int reps = 5;
  std::string backend = "rma";
  /// --distribution row_block|block_cyclic_2d|replicated_columns [--grid PxQ] [--layers C] [--block B]:
  /// the operation runs on the input redistributed to this distribution (built as row_block first).
  std::string distribution = "row_block";
  std::optional<process_grid> grid;
  int layers = 1;
  global_index block = 64;
  /// --stages S [--prefetch on|off]: grid SpGEMM's stages, and whether the next one is started
  /// before the current one multiplies (spgemm_options::prefetch_next_stage).
  int stages = 1;
  bool prefetch = true;
  /// --vectors row_block|grid_aligned: X and Y of the 2-D SpMM by row blocks, or laid out along
  /// A's grid (grid_aligned_rows: X fetched within grid columns, Y reduced within grid rows).
  std::string vectors = "row_block";
};

[[noreturn]] inline void usage(const char* program, int code) {
  fmt::print(code == 0 ? stdout : stderr,
             "usage: {} (--matrix FILE.mtx | --rmat SCALE [--edge-factor 16] [--hubs-first] | --laplacian N | --random N "
             "[--nnz-per-row K]) [--scramble] [--seed S] [--reps N] [--backend rma|progress|aggregator] "
             "[--distribution row_block|block_cyclic_2d|replicated_columns] [--grid PxQ] [--layers C] [--block B] "
             "[--stages S] [--prefetch on|off] [--vectors row_block|grid_aligned]\n",
             program);
  std::exit(code);
}

inline args parse(int argc, char** argv) {
  args a;
  for (int k = 1; k < argc; ++k) {
    const std::string_view arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) usage(argv[0], 2);
      return argv[++k];
    };
    if (arg == "--matrix") a.matrix_path = value();
    else if (arg == "--rmat") a.rmat_scale = std::stoi(value());
    else if (arg == "--edge-factor") a.edge_factor = std::stoi(value());
    else if (arg == "--hubs-first") a.rmat_hubs_first = true;
    else if (arg == "--scramble") a.scramble = true;
    else if (arg == "--laplacian") a.laplacian_n = std::stoll(value());
    else if (arg == "--random") a.random_n = std::stoll(value());
    else if (arg == "--nnz-per-row") a.nnz_per_row = std::stoi(value());
    else if (arg == "--seed") a.seed = std::stoull(value());
    else if (arg == "--reps") a.reps = std::max(1, std::stoi(value()));
    else if (arg == "--backend") a.backend = value();
    else if (arg == "--distribution") a.distribution = value();
    else if (arg == "--layers") a.layers = std::max(1, std::stoi(value()));
    else if (arg == "--stages") a.stages = std::max(1, std::stoi(value()));
    else if (arg == "--prefetch") a.prefetch = value() != "off";
    else if (arg == "--vectors") a.vectors = value();
    else if (arg == "--block") a.block = std::max<global_index>(1, std::stoll(value()));
    else if (arg == "--grid") {
      const std::string g = value();
      const auto x = g.find('x');
      if (x == std::string::npos) usage(argv[0], 2);
      a.grid = process_grid{std::stoi(g.substr(0, x)), std::stoi(g.substr(x + 1))};
    }
    else if (arg == "--help" || arg == "-h") usage(argv[0], 0);
    else usage(argv[0], 2);
  }
  if (a.matrix_path.empty() && a.rmat_scale < 0 && a.laplacian_n < 0 && a.random_n < 0) a.rmat_scale = 14;
  return a;
}

/// Host threads of this rank (OpenMP: OMP_NUM_THREADS; Serial: 1; not a GPU's thread count), reported
/// on every line so that 1 rank x 2 threads and 2 ranks x 1 thread can be told apart.
inline int threads() { return static_cast<int>(Kokkos::DefaultHostExecutionSpace().concurrency()); }

/// Environment options a backend needs (progress ranks for "progress": launch one extra rank per node).
inline environment_options environment_for(const std::string& backend) {
  auto options = environment_options::from_environment_variables();
  if (backend == "progress") options.progress_ranks = true;
  return options;
}

/// Call `run.template operator()<Backend>()` for the backend named on the command line; 2 if unknown.
template <class F>
int with_backend(const std::string& backend, F&& run) {
  if (backend == "rma") run.template operator()<mpi_rma>();
  else if (backend == "aggregator") run.template operator()<aggregator>();
  else if (backend == "progress") run.template operator()<progress_rank>();
  else {
    fmt::print(stderr, "unknown backend '{}' (rma, progress or aggregator)\n", backend);
    return 2;
  }
  return 0;
}

/// Call `run.template operator()<Distribution>(distribution)` for --distribution; 2 if unknown.
template <class F>
int with_distribution(const args& a, F&& run) {
  if (a.distribution == "row_block") run.template operator()<row_block>(row_block{});
  else if (a.distribution == "block_cyclic_2d")
    run.template operator()<block_cyclic_2d>(block_cyclic_2d{.grid = a.grid, .block_rows = a.block, .block_cols = a.block});
  else if (a.distribution == "replicated_columns")
    run.template operator()<replicated_columns>(replicated_columns{.grid = a.grid, .block_cols = a.block});
  else {
    fmt::print(stderr, "unknown distribution '{}' (row_block, block_cyclic_2d or replicated_columns)\n", a.distribution);
    return 2;
  }
  return 0;
}

/// The grid of a distributed matrix ("1xP" for row distributions) for the JSON line.
template <class Mapping>
std::string grid_name(const Mapping& m) {
  if constexpr (grid_mapping<Mapping>)
    return fmt::format("{}x{}", m.grid().p, m.grid().q);
  else
    return fmt::format("{}x1", m.num_ranks());
}

/// A short name of the input for the JSON line.
inline std::string matrix_name(const args& a) {
  if (a.scramble) {
    args plain = a;
    plain.scramble = false;
    return matrix_name(plain) + "-scrambled";
  }
  if (!a.matrix_path.empty()) return a.matrix_path;
  if (a.rmat_scale >= 0) return fmt::format("rmat{}-ef{}{}", a.rmat_scale, a.edge_factor, a.rmat_hubs_first ? "-hubs-first" : "");
  if (a.laplacian_n >= 0) return fmt::format("laplacian{}", a.laplacian_n);
  return fmt::format("random{}-k{}", a.random_n, a.nnz_per_row);
}

template <class T, class Policy>
dist_matrix<T, Policy> input_matrix(const communicator& comm, const args& a);

/// `m` with its vertices relabelled by a random permutation (seeded: the same on every rank) and
/// its rows redistributed as the policy's default distribution splits them (square m).
template <class T, class Policy>
dist_matrix<T, Policy> scrambled(const communicator& comm, const dist_matrix<T, Policy>& m, std::uint64_t seed) {
  std::vector<global_index> label(static_cast<std::size_t>(m.num_rows()));
  std::iota(label.begin(), label.end(), global_index{0});
  std::shuffle(label.begin(), label.end(), std::mt19937_64(seed ^ 0x5c4a3b1eULL));
  auto entries = local_triplets(m);
  for (auto& i : entries.rows) i = label[static_cast<std::size_t>(i)];
  for (auto& j : entries.cols) j = label[static_cast<std::size_t>(j)];
  return build_from_triplets<T, Policy>(comm, m.num_rows(), m.num_cols(), entries);
}

template <class T, class Policy>
dist_matrix<T, Policy> input_matrix(const communicator& comm, const args& a) {
  if (a.scramble) {
    args plain = a;
    plain.scramble = false;
    const auto m = input_matrix<T, Policy>(comm, plain);
    if (m.num_rows() != m.num_cols()) {
      if (comm.rank() == 0) fmt::print(stderr, "--scramble relabels the vertices of a square matrix, not {} x {}\n", m.num_rows(), m.num_cols());
      std::exit(2);
    }
    return scrambled(comm, m, a.seed);
  }
  if (!a.matrix_path.empty()) return read_matrix_market<T, Policy>(comm, a.matrix_path);
  if (a.rmat_scale >= 0)
    return generate::rmat<T, Policy>(comm, a.rmat_scale, a.edge_factor, a.seed,
                                     generate::rmat_options{.permute_vertices = !a.rmat_hubs_first});
  if (a.laplacian_n >= 0) return generate::laplacian_2d<T, Policy>(comm, a.laplacian_n);
  return generate::uniform_random<T, Policy>(comm, a.random_n, a.random_n, a.nnz_per_row, a.seed);
}

/// The median of `values` (not empty).
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// Median over `reps` timed runs after one warm-up; each run's time is the slowest rank's.
template <class F>
double median_seconds(const communicator& comm, int reps, F&& run) {
  run();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  }
  return median(std::move(times));
}

/// Traffic of one timed run: a scope's counters over all ranks, divided by the reps + 1 runs
/// median_seconds made (collective).
inline traffic_summary traffic_per_run(const communicator& comm, const std::string& scope, int reps) {
  auto t = reduce_traffic(comm, scope);
  const auto runs = static_cast<std::uint64_t>(reps + 1);
  t.total.bytes /= runs;
  t.total.messages /= runs;
  t.max_per_rank.bytes /= runs;
  t.max_per_rank.messages /= runs;
  return t;
}

/// Sum of all stored values of a matrix (collective). Straight from the local values where the
/// storage keeps them in one array (no copy: a copy would count in peak_rss_mb), else through
/// local_triplets.
template <class T, class Policy>
double checksum(const dist_matrix<T, Policy>& a) {
  double local = 0;
  if constexpr (requires { a.local().values.extent(0); }) {
    const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.local().values);
    for (std::size_t k = 0; k < values.extent(0); ++k) local += static_cast<double>(values(k));
  } else {
    for (T v : local_triplets(a).values) local += static_cast<double>(v);
  }
  return a.comm().sum(local);
}

/// Sum of all entries of a dense block (collective).
template <class T, class Policy>
double checksum(const dist_dense<T, Policy>& y) {
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local());
  double local = 0;
  for (std::size_t i = 0; i < host.extent(0); ++i)
    for (std::size_t j = 0; j < host.extent(1); ++j) local += static_cast<double>(host(i, j));
  return y.comm().sum(local);
}

/// STREAM triad (a = b + s * c) on `n` doubles per array, one core per rank, all ranks at once:
/// the best of `reps` runs (each run's time is the slowest rank's), as bytes per second summed
/// over ranks, counting 3 * n * 8 bytes per rank and run as STREAM does (collective).
inline double stream_triad_bytes_per_second(const communicator& comm, std::size_t n, int reps) {
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);  // first touch by this rank
  const double scalar = 3.0;
  double best = 0;
  for (int r = 0; r < std::max(1, reps) + 1; ++r) {  // run 0 is the warm-up
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    double* __restrict pa = a.data();
    const double* __restrict pb = b.data();
    const double* __restrict pc = c.data();
    for (std::size_t i = 0; i < n; ++i) pa[i] = pb[i] + scalar * pc[i];
    const double seconds = comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r > 0 && (best == 0 || seconds < best)) best = seconds;
  }
  if (comm.sum(a[n / 2]) != 7.0 * comm.size()) fmt::print(stderr, "stream: wrong triad result\n");
  return 3.0 * 8.0 * static_cast<double>(n) * comm.size() / best;
}

/// Four doubles as one GCC/Clang vector: the gather's sums stay in registers.
using four_doubles = double __attribute__((vector_size(32)));

/// The sum of Vectors consecutive groups of four doubles at `in`, as a tree of independent adds.
template <int Vectors>
four_doubles row_sum(const double* in) {
  if constexpr (Vectors == 1) {
    four_doubles v;
    std::memcpy(&v, in, sizeof v);
    return v;
  } else {
    return row_sum<Vectors / 2>(in) + row_sum<Vectors - Vectors / 2>(in + 4 * (Vectors / 2));
  }
}

/// A random-row gather: `seconds` (the slowest rank's, best of reps) to read `reads` rows at
/// uniformly random places, and the sum of what was read (so that the reads are not optimised away).
struct gather_timing {
  double seconds = 0, checksum = 0;
};

/// Every rank at once reads `reads` rows of Width doubles at uniformly random rows (the same
/// sequence on every rank) of its own array of `rows` rows, allocated as tessera allocates X (huge
/// pages from 4 MiB on), and sums them, prefetching the rows 16 reads ahead as SpMM's host kernel
/// does. The ceiling of SpMM's reads of X where the columns of A come in no order (a power-law
/// matrix): STREAM's bandwidth holds only while the array fits the caches; beyond, each row costs
/// a miss's latency, overlapped only as far as the core tracks misses.
template <int Width>
gather_timing random_row_gather(const communicator& comm, std::size_t rows, std::size_t reads, int reps) {
  static_assert(Width % 4 == 0, "random_row_gather reads rows of whole groups of four doubles");
  rows = std::max<std::size_t>(rows, 1);
  reads = std::max<std::size_t>(reads, 1);
  const std::size_t elements = rows * Width;
  const std::unique_ptr<double[]> storage(new double[elements]);  // untouched until advised
  double* const x = storage.get();
  advise_huge_pages(x, elements * sizeof(double));
  for (std::size_t i = 0; i < elements; ++i) x[i] = 1.0 / static_cast<double>(i % 1024 + 1);
  std::vector<std::uint32_t> index(reads);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (auto& i : index) {  // xorshift64*: the index stream, not its generator, is what is timed
    state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
    i = static_cast<std::uint32_t>((state * 0x2545F4914F6CDD1Dull >> 32) % rows);
  }
  constexpr std::size_t ahead = 16;
  gather_timing out;
  for (int r = 0; r < std::max(1, reps) + 1; ++r) {  // run 0 is the warm-up
    // One accumulator and each row summed as a tree: an array of accumulators was kept on the
    // stack by g++ (a store and a reload per row), which timed store forwarding, not the reads.
    four_doubles sum{};
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t e = 0; e < reads; ++e) {
      if (e + ahead < reads)
        for (int t = 0; t < Width; t += 8) __builtin_prefetch(x + index[e + ahead] * std::size_t{Width} + t);
      sum += row_sum<Width / 4>(x + index[e] * std::size_t{Width});
    }
    const double seconds = comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r > 0 && (out.seconds == 0 || seconds < out.seconds)) out.seconds = seconds;
    out.checksum = comm.sum(sum[0] + sum[1] + sum[2] + sum[3]);
  }
  return out;
}

/// random_row_gather for rows of `width` doubles: 8, 16 or 32 (SpMM's k); nullopt for others.
inline std::optional<gather_timing> random_row_gather(const communicator& comm, std::size_t rows, int width,
                                                      std::size_t reads, int reps) {
  switch (width) {
    case 8: return random_row_gather<8>(comm, rows, reads, reps);
    case 16: return random_row_gather<16>(comm, rows, reads, reps);
    case 32: return random_row_gather<32>(comm, rows, reads, reps);
    default: return std::nullopt;
  }
}

/// Peak resident memory of the largest rank, in MiB (collective).
inline double peak_rss_mb(const communicator& comm) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return comm.max(static_cast<double>(usage.ru_maxrss) / 1024.0);
}

}  // namespace tessera::bench
