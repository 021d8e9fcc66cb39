// bench_tile_kernel: the packed tile kernel alone (kernels::pack_a + kernels::packed_gemm), on
// the products bsgemm runs, without the distribution around them: groups of one A tile packed once
// and multiplied by 8 B tiles, every dimension uniform in the tile range. B is either warm (the same
// few B tiles again and again, in cache) or cold (each product's B at a random place of a large
// array per rank, as in a block-sparse product, where most B tiles come from memory). Every rank
// runs its own products at once, so 2 ranks load the machine as bsgemm at 2 ranks does. One JSON
// line per tile range, B residency and value type, GFLOP/s summed over ranks; divide by bench_peak's
// FMA rate of the same run for the fraction of the peak.
//
//   mpiexec -n 2 bench_tile_kernel [--tiles 128:512,32:128] [--b warm,cold] [--types double,float]
//                                  [--groups 0 (auto)] [--pool-mb 1024] [--seed 1]
#include "support/bench_common.hpp"
#include "support/block_sparse_problems.hpp"

#include <tessera/kernels/packed_tile_gemm.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>

namespace {

struct tile_range {
  int lo = 0, hi = 0;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

struct measurement {
  double seconds = 0, flops = 0, checksum = 0;
};

// Groups of products on this rank; B from `pool` at random places (cold) or from its start (warm:
// the first products' B tiles, reused by every group).
template <class T>
measurement run_groups(tile_range range, bool cold, int groups, std::size_t pool_elements, std::uint64_t seed) {
  constexpr int products_per_a = 8;
  using host = Kokkos::DefaultHostExecutionSpace;
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> size(range.lo, range.hi);
  const std::size_t largest = static_cast<std::size_t>(range.hi) * static_cast<std::size_t>(range.hi);
  // Warm: 8 B tiles side by side; cold: the whole pool.
  const std::size_t pool_size = cold ? std::max(pool_elements, 4 * largest) : products_per_a * largest;
  std::vector<T> pool(pool_size);
  std::uniform_real_distribution<double> value(-1, 1);
  for (std::size_t i = 0; i < pool.size(); ++i) pool[i] = static_cast<T>(static_cast<double>(i % 7) * 0.25 - 0.75);
  std::uniform_int_distribution<std::size_t> place(0, pool_size - largest);
  std::vector<T> a(largest), packed(tessera::kernels::packed_shape<T>::a_elements(range.hi, range.hi));
  std::vector<std::vector<T>> c(products_per_a, std::vector<T>(largest));
  measurement out;
  for (int g = 0; g < groups; ++g) {
    const int m = size(gen), k = size(gen);
    for (std::size_t i = 0; i < static_cast<std::size_t>(m) * static_cast<std::size_t>(k); ++i)
      a[i] = static_cast<T>(value(gen));
    std::array<const T*, products_per_a> b{};
    std::array<int, products_per_a> n{};
    for (int j = 0; j < products_per_a; ++j) {
      n[j] = size(gen);
      // Cold B starts anywhere (aligned to a cache line, as tile storage is not); warm B is one of 8 fixed places.
      b[j] = pool.data() + (cold ? place(gen) / 8 * 8 : static_cast<std::size_t>(j) * largest);
      out.flops += 2.0 * m * n[j] * k;
    }
    const auto start = std::chrono::steady_clock::now();
    tessera::kernels::pack_a<host>(a.data(), m, k, packed.data());
    for (int j = 0; j < products_per_a; ++j) {
      const tessera::kernels::following_product<T> following =
          j + 1 < products_per_a ? tessera::kernels::following_product<T>{b[j + 1], n[j + 1], k}
                                 : tessera::kernels::following_product<T>{};
      tessera::kernels::packed_gemm<host>(m, n[j], k, T{1}, packed.data(), b[j], c[j].data(), false, following);
    }
    out.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.checksum += static_cast<double>(c[g % products_per_a][0]);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<tile_range> ranges{{128, 512}, {32, 128}};
  std::vector<std::string> residencies{"warm", "cold"}, types{"double", "float"};
  int groups = 0;
  std::size_t pool_mb = 1024;
  std::uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--tiles" && has_value) {
      const auto parsed = tessera::bench::parse_tile_ranges(argv[++i]);
      ranges.clear();
      if (parsed)
        for (const auto& [lo, hi] : *parsed) ranges.push_back({static_cast<int>(lo), static_cast<int>(hi)});
      if (ranges.empty() ||
          !std::all_of(ranges.begin(), ranges.end(), [](tile_range r) { return r.lo >= 1 && r.hi >= r.lo; })) {
        fmt::print(stderr, "--tiles takes LO:HI[,LO:HI...] with 1 <= LO <= HI, not '{}'\n", argv[i]);
        return 2;
      }
    } else if (arg == "--b" && has_value) residencies = split(argv[++i]);
    else if (arg == "--types" && has_value) types = split(argv[++i]);
    else if (arg == "--groups" && has_value) groups = std::stoi(argv[++i]);
    else if (arg == "--pool-mb" && has_value) pool_mb = std::stoull(argv[++i]);
    else if (arg == "--seed" && has_value) seed = std::stoull(argv[++i]);
    else {
      fmt::print(arg == "--help" ? stdout : stderr,
                 "usage: {} [--tiles LO:HI,...] [--b warm,cold] [--types double,float] [--groups N] [--pool-mb MB] "
                 "[--seed S]\n",
                 argv[0]);
      return arg == "--help" ? 0 : 2;
    }
  }
  for (const auto& r : residencies)
    if (r != "warm" && r != "cold") {
      fmt::print(stderr, "--b takes warm and/or cold, not '{}'\n", r);
      return 2;
    }
  for (const auto& t : types)
    if (t != "double" && t != "float") {
      fmt::print(stderr, "--types takes double and/or float, not '{}'\n", t);
      return 2;
    }
  tessera::environment env(argc, argv);
  const auto& comm = env.world();
  for (const auto& range : ranges)
    for (const auto& type : types)
      for (const auto& residency : residencies) {
        const bool cold = residency == "cold";
        // About 10 GFLOP per rank and line unless told: a steady rate in a second or two.
        const double mean = (range.lo + range.hi) / 2.0;
        const int group_count = groups > 0 ? groups : std::max(20, static_cast<int>(1e10 / (16.0 * mean * mean * mean)));
        const std::uint64_t rank_seed = seed * 1000003 + static_cast<std::uint64_t>(comm.rank());
        comm.barrier();
        const auto run = [&]<class T>() {
          return run_groups<T>(range, cold, group_count, pool_mb * 1024 * 1024 / sizeof(T), rank_seed);
        };
        const measurement mine = type == "double" ? run.template operator()<double>() : run.template operator()<float>();
        const double flops = comm.sum(mine.flops);
        const double slowest = comm.max(mine.seconds);
        const double rate = comm.sum(mine.flops / mine.seconds);  // each rank's own rate, summed
        const double checksum = comm.sum(mine.checksum);
        if (comm.rank() == 0)
          fmt::print("{{\"bench\": \"tile_kernel\", \"matrix\": \"tiles{}-{}\", \"np\": {}, \"backend\": \"none\", "
                     "\"type\": \"{}\", \"b\": \"{}\", \"simd\": {}, \"groups_per_rank\": {}, \"products_per_rank\": {}, "
                     "\"flops\": {:.6g}, \"seconds\": {:.6f}, \"gflops\": {:.3f}, \"gflops_per_rank\": {:.3f}, "
                     "\"checksum\": {:.6g}}}\n",
                     range.lo, range.hi, comm.size(), type, residency,
                     type == "double" ? tessera::kernels::has_simd_tile_kernel<double> : tessera::kernels::has_simd_tile_kernel<float>,
                     group_count, 8 * group_count, flops, slowest, rate / 1e9, rate / 1e9 / comm.size(), checksum);
      }
  return 0;
}
