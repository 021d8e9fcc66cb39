#pragma once
/// @file
/// Which host BLAS this process calls, and whether it runs below what the CPU can do.
///
/// Why this exists: OpenBLAS chooses its kernels for the CPU once, when the library is loaded,
/// and a release older than the CPU falls back to its oldest x86-64 kernels ("Prescott", SSE3)
/// without a word. Debian 12's OpenBLAS 0.3.21 does that on a Xeon of family 6 model 207
/// (AVX-512): one-core DGEMM ran at 14 GFLOP/s instead of 57-67 with `OPENBLAS_CORETYPE=SkylakeX`,
/// and bsgemm's `blas` tile kernel 3.9x slower. The choice cannot be changed once the library is
/// loaded, so tessera can only say so; the cure is the variable in every rank's environment
/// before the program starts. bsgemm says so once per process when its tile products go to a
/// host BLAS that runs below the CPU (ops/bsgemm.hpp).
///
/// The inspection looks the library up among the symbols the process already has (`dlsym`):
/// nothing is linked or loaded for it, and a program without OpenBLAS gets an empty `library`.
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#if __has_include(<dlfcn.h>)
#include <dlfcn.h>
#endif

namespace tessera::kernels {

/// The widest vector instructions a CPU has, or a BLAS kernel uses, as far as dense products
/// care: each step doubles the doubles per instruction (AVX2 also brings FMA).
enum class vector_isa { unknown, sse, avx, avx2, avx512 };

/// "sse", "avx", "avx2", "avx512" or "unknown".
[[nodiscard]] inline std::string_view to_string(vector_isa isa) noexcept {
  switch (isa) {
    case vector_isa::sse: return "sse";
    case vector_isa::avx: return "avx";
    case vector_isa::avx2: return "avx2";
    case vector_isa::avx512: return "avx512";
    default: return "unknown";
  }
}

/// The vector instructions named in a `/proc/cpuinfo` flags line: avx512 needs the four
/// extensions OpenBLAS's SkylakeX kernels use (F, DQ, BW, VL), avx2 needs FMA too.
[[nodiscard]] inline vector_isa vector_isa_of_cpu_flags(std::string_view flags) {
  const auto has = [&](std::string_view flag) {
    for (std::size_t at = flags.find(flag); at != std::string_view::npos; at = flags.find(flag, at + 1)) {
      const bool starts = at == 0 || std::isspace(static_cast<unsigned char>(flags[at - 1]));
      const bool ends = at + flag.size() == flags.size() ||
                        std::isspace(static_cast<unsigned char>(flags[at + flag.size()]));
      if (starts && ends) return true;
    }
    return false;
  };
  if (has("avx512f") && has("avx512dq") && has("avx512bw") && has("avx512vl")) return vector_isa::avx512;
  if (has("avx2") && has("fma")) return vector_isa::avx2;
  if (has("avx")) return vector_isa::avx;
  if (has("sse2")) return vector_isa::sse;
  return vector_isa::unknown;
}

/// This host's CPU, from the first flags line of `/proc/cpuinfo` (Linux on x86); unknown elsewhere.
[[nodiscard]] inline vector_isa host_cpu_vector_isa() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0) return vector_isa_of_cpu_flags(line.substr(std::min(line.find(':'), line.size())));
  return vector_isa::unknown;
}

/// The vector instructions of the OpenBLAS kernels named `core` (`openblas_get_corename()`, any
/// case: its x86-64 DYNAMIC_ARCH targets up to 0.3.2x); unknown for names it does not list
/// (other architectures, later targets).
[[nodiscard]] inline vector_isa openblas_core_vector_isa(std::string_view core) {
  std::string name(core);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  struct entry {
    std::string_view name;
    vector_isa isa;
  };
  static constexpr std::array<entry, 27> cores{{
      {"skylakex", vector_isa::avx512},    {"cooperlake", vector_isa::avx512}, {"sapphirerapids", vector_isa::avx512},
      {"haswell", vector_isa::avx2},       {"zen", vector_isa::avx2},          {"excavator", vector_isa::avx2},
      {"sandybridge", vector_isa::avx},    {"bulldozer", vector_isa::avx},     {"piledriver", vector_isa::avx},
      {"steamroller", vector_isa::avx},    {"prescott", vector_isa::sse},      {"core2", vector_isa::sse},
      {"penryn", vector_isa::sse},         {"dunnington", vector_isa::sse},    {"nehalem", vector_isa::sse},
      {"atom", vector_isa::sse},           {"nano", vector_isa::sse},          {"opteron", vector_isa::sse},
      {"opteron(sse3)", vector_isa::sse},  {"barcelona", vector_isa::sse},     {"bobcat", vector_isa::sse},
      {"athlon", vector_isa::sse},         {"katmai", vector_isa::sse},        {"coppermine", vector_isa::sse},
      {"northwood", vector_isa::sse},      {"banias", vector_isa::sse},        {"generic", vector_isa::sse},
  }};
  for (const auto& c : cores)
    if (c.name == name) return c.isa;
  return vector_isa::unknown;
}

/// The `OPENBLAS_CORETYPE` that would use a CPU with `cpu`'s instructions when OpenBLAS chose the
/// kernels `core` and they stop short of AVX2 where the CPU has it (a fourth of the doubles per
/// instruction, or less); empty when the choice is fine or either side is unknown. A CPU with
/// AVX-512 whose OpenBLAS chose AVX2 kernels (Zen on a Zen 4) is left alone: those run at
/// nearly the same rate there.
[[nodiscard]] inline std::string openblas_coretype_for(std::string_view core, vector_isa cpu) {
  const vector_isa chosen = openblas_core_vector_isa(core);
  if (chosen == vector_isa::unknown || cpu == vector_isa::unknown || chosen >= vector_isa::avx2 ||
      cpu < vector_isa::avx2)
    return {};
  return cpu == vector_isa::avx512 ? "SkylakeX" : "Haswell";
}

/// What host_blas() found.
struct host_blas_info {
  std::string library;  ///< "OpenBLAS", or empty: no OpenBLAS in this process (another BLAS, or none)
  std::string config;   ///< `openblas_get_config()`: its version and build options
  std::string core;     ///< the kernels OpenBLAS chose (`openblas_get_corename()`)
  vector_isa cpu = vector_isa::unknown;  ///< this host's CPU (host_cpu_vector_isa)
  /// The `OPENBLAS_CORETYPE` to start the program with (openblas_coretype_for); empty when
  /// the library's choice uses the CPU.
  std::string suggested_coretype;

  /// Whether the BLAS runs kernels narrower than the CPU's.
  [[nodiscard]] bool below_cpu() const noexcept { return !suggested_coretype.empty(); }
};

/// The host BLAS of this process as it runs now: OpenBLAS's kernels if the process has
/// OpenBLAS loaded (through libblas.so.3 or linked directly), and whether they use the CPU.
[[nodiscard]] inline host_blas_info host_blas() {
  host_blas_info info;
  info.cpu = host_cpu_vector_isa();
#if __has_include(<dlfcn.h>) && defined(RTLD_DEFAULT)
  using name_function = char* (*)();
  const auto corename = reinterpret_cast<name_function>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (corename == nullptr) return info;
  info.library = "OpenBLAS";
  if (const char* core = corename()) info.core = core;
  if (const auto config = reinterpret_cast<name_function>(dlsym(RTLD_DEFAULT, "openblas_get_config")))
    if (const char* text = config()) info.config = text;
  info.suggested_coretype = openblas_coretype_for(info.core, info.cpu);
#endif
  return info;
}

/// The sentence host_blas_warning() prints for `info` (empty when its BLAS uses the CPU), `who`
/// naming what calls the BLAS.
[[nodiscard]] inline std::string host_blas_advice(const host_blas_info& info, std::string_view who) {
  if (!info.below_cpu()) return {};
  std::ostringstream text;
  text << "tessera: " << who << " calls " << info.library << (info.config.empty() ? "" : " (" + info.config + ")")
       << ", which chose its " << info.core << " kernels (" << to_string(openblas_core_vector_isa(info.core))
       << ") on this CPU (" << to_string(info.cpu)
       << "): dense products run several times slower than they can. Start every rank with OPENBLAS_CORETYPE="
       << info.suggested_coretype << " in its environment.";
  return text.str();
}

/// Prints host_blas_advice() to stderr if this process's BLAS runs below the CPU, on the first
/// call of the process only (the BLAS's choice cannot change); returns whether it printed.
/// Callers on several ranks print from one of them.
inline bool host_blas_warning(std::string_view who) {
  static std::atomic<bool> looked{false};
  if (looked.exchange(true)) return false;
  const std::string advice = host_blas_advice(host_blas(), who);
  if (advice.empty()) return false;
  std::fprintf(stderr, "%s\n", advice.c_str());
  return true;
}

}  // namespace tessera::kernels
