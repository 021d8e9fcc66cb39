// bench_peak: the physical peaks of the machine, the figures every efficiency in docs/ is stated
// against. Two measurements, every rank at once, one core per rank:
//
//   fma     a register-resident loop of independent fused multiply-adds per core, for double and
//           float, at every SIMD width this build can issue (scalar, 128, 256, 512 bits); the widest
//           is the FMA peak. Nothing touches memory, so the rate is the core's arithmetic limit.
//   stream  STREAM triad (a = b + 3 c, 24 bytes per element) and copy (a = b, 16 bytes per element)
//           on arrays far larger than any cache: the memory-bandwidth ceiling of SpMM's roofline.
//   gather  rows of --gather-width (8, 16, 32) doubles read at uniformly random places of an array of 1 to 64
//           MiB per rank, summed, the next rows prefetched 16 ahead as SpMM's host kernel does: the
//           ceiling of SpMM's reads of X on a power-law matrix, whose rows of X come in no order.
//           STREAM's bandwidth holds only while the array fits the caches; beyond, each row costs
//           a miss's latency, which the prefetches overlap only as far as the core tracks misses.
//
// Every figure is the best of --reps timed runs after one warm-up (a peak, not a typical rate; each
// run's time is the slowest rank's), and each line carries the 1-minute load average. An FMA run is
// short (2^20 trips, about 2 ms) so that on a shared machine the best of a few dozen is a run the
// scheduler did not interrupt: the core's rate, not its share of the machine.
//
//   mpiexec -n 2 bench_peak [--reps 20] [--n 33554432] [--iterations 1048576] [--gather-width 32]
//                           [--only fma|stream|gather]
#include "support/bench_common.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace {

// Independent accumulators per loop: FMA latency x FMA pipes must be covered or the loop measures
// latency, not throughput. 4 cycles x 2 pipes = 8 on current x86 cores; 16 leaves room for a core
// with more of either and still fits AVX-512's 32 registers; AVX2 has 16, so 12 (plus the two
// operands) there.
#if defined(__AVX512F__)
constexpr int accumulators = 16;
#else
constexpr int accumulators = 12;
#endif

// One SIMD register type: its width, lanes in use, a broadcast and a fused multiply-add, so one
// loop serves all widths.
#if defined(__FMA__)
// Scalar FMAs as vfmadd*sd/ss on the low lane of an SSE register: a loop of std::fma on doubles
// would be packed into vector FMAs by g++'s SLP vectoriser and measure the wrong width.
struct scalar_double {
  using reg = __m128d;
  static constexpr int bits = 64, lanes = 1;
  static constexpr const char* name = "scalar";
  static reg set1(double x) { return _mm_set1_pd(x); }
  static reg fma(reg a, reg b, reg c) { return _mm_fmadd_sd(a, b, c); }
};
struct scalar_float {
  using reg = __m128;
  static constexpr int bits = 32, lanes = 1;
  static constexpr const char* name = "scalar";
  static reg set1(float x) { return _mm_set1_ps(x); }
  static reg fma(reg a, reg b, reg c) { return _mm_fmadd_ss(a, b, c); }
};
struct sse_double {
  using reg = __m128d;
  static constexpr int bits = 128, lanes = 2;
  static constexpr const char* name = "sse";
  static reg set1(double x) { return _mm_set1_pd(x); }
  static reg fma(reg a, reg b, reg c) { return _mm_fmadd_pd(a, b, c); }
};
struct sse_float {
  using reg = __m128;
  static constexpr int bits = 128, lanes = 4;
  static constexpr const char* name = "sse";
  static reg set1(float x) { return _mm_set1_ps(x); }
  static reg fma(reg a, reg b, reg c) { return _mm_fmadd_ps(a, b, c); }
};
struct avx_double {
  using reg = __m256d;
  static constexpr int bits = 256, lanes = 4;
  static constexpr const char* name = "avx2";
  static reg set1(double x) { return _mm256_set1_pd(x); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_pd(a, b, c); }
};
struct avx_float {
  using reg = __m256;
  static constexpr int bits = 256, lanes = 8;
  static constexpr const char* name = "avx2";
  static reg set1(float x) { return _mm256_set1_ps(x); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
};
#else
// Without FMA instructions (not x86 with FMA3): plain std::fma, whatever the compiler makes of it.
template <class T>
struct scalar_lanes {
  using reg = T;
  static constexpr int bits = 8 * sizeof(T), lanes = 1;
  static constexpr const char* name = "scalar";
  static reg set1(T x) { return x; }
  static reg fma(reg a, reg b, reg c) { return std::fma(a, b, c); }
};
#endif
#if defined(__AVX512F__)
struct avx512_double {
  using reg = __m512d;
  static constexpr int bits = 512, lanes = 8;
  static constexpr const char* name = "avx512";
  static reg set1(double x) { return _mm512_set1_pd(x); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_pd(a, b, c); }
};
struct avx512_float {
  using reg = __m512;
  static constexpr int bits = 512, lanes = 16;
  static constexpr const char* name = "avx512";
  static reg set1(float x) { return _mm512_set1_ps(x); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
};
#endif

struct fma_result {
  double seconds_best;
  double seconds_median;
  double checksum;
};

// acc = acc * mul + add converges to add / (1 - mul) = 1 from any start, so the values stay normal
// (no denormal slow path, no overflow) for any iteration count, and the compiler must keep every
// step: a floating-point recurrence cannot be folded without -ffast-math. The accumulators are a
// parameter pack, not an array: g++ keeps an array of 16 vectors (1 KiB) in memory, a store and a
// load per FMA, which would measure the load/store ports instead of the FMA pipes.
// Not inlined: inlined into its caller (MPI calls, timers around it) g++ 12 spilled the accumulators.
// The volatile store makes the call a side effect: a pure function of `iterations` would be computed
// once and reused across reps, or moved out from between the timer's two reads.
volatile double fma_sink = 0;
template <class Lanes, class T, std::size_t... J>
[[gnu::noinline]] double fma_kernel(std::int64_t iterations, std::index_sequence<J...>) {
  using reg = typename Lanes::reg;
  const reg mul = Lanes::set1(static_cast<T>(1.0 - 1.0 / 1024));
  const reg add = Lanes::set1(static_cast<T>(1.0 / 1024));
  auto loop = [&](auto... acc) {
    for (std::int64_t it = 0; it < iterations; ++it) ((acc = Lanes::fma(acc, mul, add)), ...);
    const reg out[] = {acc...};  // a copy, so that no accumulator's address is taken
    constexpr std::size_t per_reg = sizeof(reg) / sizeof(T);
    T values[sizeof...(acc) * per_reg];
    std::memcpy(values, out, sizeof(out));
    T total = 0;
    for (std::size_t k = 0; k < sizeof...(acc) * per_reg; ++k)
      if (k % per_reg < static_cast<std::size_t>(Lanes::lanes)) total += values[k];
    fma_sink = static_cast<double>(total);
    return static_cast<double>(total);
  };
  return loop(Lanes::set1(static_cast<T>(J + 2))...);
}

template <class Lanes, class T>
fma_result fma_loop(const tessera::communicator& comm, std::int64_t iterations, int reps) {
  double checksum = 0;
  std::vector<double> times;
  for (int r = 0; r < reps + 1; ++r) {  // run 0 is the warm-up (clock ramp, page-in)
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    checksum = fma_kernel<Lanes, T>(iterations, std::make_index_sequence<accumulators>{});
    const double seconds = comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r > 0) times.push_back(seconds);
  }
  return {*std::min_element(times.begin(), times.end()), tessera::bench::median(times), checksum};
}

/// "model name" from /proc/cpuinfo (what the plots' titles call the machine), "unknown" elsewhere.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

double load_average() {
  double load[1] = {-1};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

struct line_context {
  const tessera::communicator& comm;
  std::string cpu;
  unsigned cores;  // of the host: with np, says whether ranks had a core each
  int reps;
};

template <class Lanes, class T>
void measure_fma(const line_context& ctx, std::int64_t iterations, bool widest) {
  const auto r = fma_loop<Lanes, T>(ctx.comm, iterations, ctx.reps);
  constexpr int lanes = Lanes::lanes;
  const double flops = 2.0 * lanes * accumulators * static_cast<double>(iterations) * ctx.comm.size();
  const double load = load_average();
  const double rss = tessera::bench::peak_rss_mb(ctx.comm);
  if (ctx.comm.rank() == 0)
    fmt::print("{{\"bench\": \"peak\", \"op\": \"fma\", \"type\": \"{}\", \"simd\": \"{}\", \"simd_bits\": {}, "
               "\"lanes\": {}, \"accumulators\": {}, \"widest\": {}, \"matrix\": \"none\", \"np\": {}, "
               "\"backend\": \"none\", \"iterations\": {}, \"flops\": {:.6g}, \"seconds\": {:.6f}, "
               "\"seconds_median\": {:.6f}, \"reps\": {}, \"gflops\": {:.3f}, \"gflops_per_core\": {:.3f}, "
               "\"checksum\": {:.6g}, \"cpu\": \"{}\", \"cores\": {}, \"load_average\": {:.2f}, \"peak_rss_mb\": {:.1f}}}\n",
               sizeof(T) == 8 ? "double" : "float", Lanes::name, Lanes::bits, lanes, accumulators, widest,
               ctx.comm.size(), iterations, flops, r.seconds_best, r.seconds_median, ctx.reps,
               flops / r.seconds_best / 1e9, flops / r.seconds_best / 1e9 / ctx.comm.size(), r.checksum, ctx.cpu,
               ctx.cores, load, rss);
}

template <class T>
void measure_fma_all_widths(const line_context& ctx, std::int64_t iterations) {
#if defined(__FMA__)
  constexpr bool is_double = sizeof(T) == 8;
#if defined(__AVX512F__)
  constexpr bool has_avx512 = true;
#else
  constexpr bool has_avx512 = false;
#endif
  measure_fma<std::conditional_t<is_double, scalar_double, scalar_float>, T>(ctx, iterations, false);
  measure_fma<std::conditional_t<is_double, sse_double, sse_float>, T>(ctx, iterations, false);
  measure_fma<std::conditional_t<is_double, avx_double, avx_float>, T>(ctx, iterations, !has_avx512);
#if defined(__AVX512F__)
  measure_fma<std::conditional_t<is_double, avx512_double, avx512_float>, T>(ctx, iterations, true);
#endif
#else
  measure_fma<scalar_lanes<T>, T>(ctx, iterations, true);
#endif
}

/// STREAM copy (a = b), counted as STREAM counts it: 16 bytes per element (the write-allocate read
/// of a is not counted). Best of reps, each run's time the slowest rank's; bytes/s summed over ranks.
double stream_copy_bytes_per_second(const tessera::communicator& comm, std::size_t n, int reps) {
  std::vector<double> a(n, 0.0), b(n, 1.0);  // first touch by this rank
  double best = 0;
  for (int r = 0; r < reps + 1; ++r) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    double* __restrict pa = a.data();
    const double* __restrict pb = b.data();
    for (std::size_t i = 0; i < n; ++i) pa[i] = pb[i];
    const double seconds = comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r > 0 && (best == 0 || seconds < best)) best = seconds;
  }
  if (comm.sum(a[n / 2]) != comm.size()) fmt::print(stderr, "stream: wrong copy result\n");
  return 2.0 * 8.0 * static_cast<double>(n) * comm.size() / best;
}

void print_stream(const line_context& ctx, const char* op, std::size_t n, double bytes_per_element, double bps) {
  const double bytes = bytes_per_element * static_cast<double>(n) * ctx.comm.size();
  const double load = load_average();
  const double rss = tessera::bench::peak_rss_mb(ctx.comm);
  if (ctx.comm.rank() == 0)
    fmt::print("{{\"bench\": \"peak\", \"op\": \"{}\", \"matrix\": \"none\", \"np\": {}, \"backend\": \"none\", "
               "\"n\": {}, \"bytes\": {:.6g}, \"seconds\": {:.6f}, \"reps\": {}, \"gb_s\": {:.3f}, "
               "\"gb_s_per_rank\": {:.3f}, \"cpu\": \"{}\", \"cores\": {}, \"load_average\": {:.2f}, \"peak_rss_mb\": {:.1f}}}\n",
               op, ctx.comm.size(), n, bytes, bytes / bps, ctx.reps, bps / 1e9, bps / 1e9 / ctx.comm.size(), ctx.cpu,
               ctx.cores, load, rss);
}

/// One line per array size: the random-row gather of bench_common.hpp, 2^20 rows per rank.
void measure_gathers(const line_context& ctx, int width) {
  constexpr std::size_t reads = std::size_t{1} << 20;
  const double row_bytes = 8.0 * width;
  for (const std::size_t mib : {1, 2, 4, 8, 16, 32, 64}) {
    const auto rows = static_cast<std::size_t>(static_cast<double>(mib << 20) / row_bytes);
    const auto timing = *tessera::bench::random_row_gather(ctx.comm, rows, width, reads, ctx.reps);
    const double rows_per_second = static_cast<double>(reads) * ctx.comm.size() / timing.seconds;
    const double load = load_average();
    const double rss = tessera::bench::peak_rss_mb(ctx.comm);
    if (ctx.comm.rank() == 0)
      fmt::print("{{\"bench\": \"peak\", \"op\": \"gather\", \"matrix\": \"none\", \"np\": {}, \"backend\": \"none\", "
                 "\"array_mib_per_rank\": {}, \"row_bytes\": {}, \"reads_per_rank\": {}, \"reps\": {}, "
                 "\"ns_per_row_per_rank\": {:.3f}, \"rows_per_second\": {:.6g}, \"gb_s\": {:.3f}, \"checksum\": {:.6g}, "
                 "\"cpu\": \"{}\", \"cores\": {}, \"load_average\": {:.2f}, \"peak_rss_mb\": {:.1f}}}\n",
                 ctx.comm.size(), mib, row_bytes, reads, ctx.reps, 1e9 * timing.seconds / static_cast<double>(reads),
                 rows_per_second, rows_per_second * row_bytes / 1e9, timing.checksum, ctx.cpu, ctx.cores, load, rss);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = std::size_t{1} << 25;  // 256 MiB per array: far beyond any cache
  // A run takes iterations x accumulators / (FMA pipes) cycles at any width: ~2 ms here
  std::int64_t iterations = std::int64_t{1} << 20;
  int reps = 20;
  int gather_width = 32;  // SpMM's k = 32: a row of X is four cache lines
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--n" && i + 1 < argc) n = std::stoull(argv[++i]);
    else if (arg == "--iterations" && i + 1 < argc) iterations = std::max(1LL, std::stoll(argv[++i]));
    else if (arg == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--gather-width" && i + 1 < argc) gather_width = std::stoi(argv[++i]);
    else if (arg == "--only" && i + 1 < argc) only = argv[++i];
    else {
      fmt::print(arg == "--help" ? stdout : stderr,
                 "usage: {} [--reps N] [--n DOUBLES_PER_ARRAY] [--iterations FMA_LOOP_TRIPS] [--gather-width 8|16|32]\n"
                 "       [--only fma|stream|gather]\n",
                 argv[0]);
      return arg == "--help" ? 0 : 2;
    }
  }
  if (gather_width != 8 && gather_width != 16 && gather_width != 32) {
    fmt::print(stderr, "--gather-width takes 8, 16 or 32 (doubles per row: SpMM's k)\n");
    return 2;
  }
  if (!only.empty() && only != "fma" && only != "stream" && only != "gather") {
    fmt::print(stderr, "--only takes fma, stream or gather\n");
    return 2;
  }
  tessera::environment env(argc, argv);
  const line_context ctx{env.world(), cpu_model(), std::thread::hardware_concurrency(), reps};
  if (only.empty() || only == "fma") {
    measure_fma_all_widths<double>(ctx, iterations);
    measure_fma_all_widths<float>(ctx, iterations);
  }
  if (only.empty() || only == "stream") {
    print_stream(ctx, "stream_triad", n, 24.0, tessera::bench::stream_triad_bytes_per_second(ctx.comm, n, reps));
    print_stream(ctx, "stream_copy", n, 16.0, stream_copy_bytes_per_second(ctx.comm, n, reps));
  }
  if (only.empty() || only == "gather") measure_gathers(ctx, gather_width);
  return 0;
}
