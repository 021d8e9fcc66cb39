#pragma once
// The synthetic block-sparse problems of seed 004 §5.1, shared by bench_bsgemm and the DBCSR peer:
// tile sizes uniform in [lo, hi]; tiles removed uniformly at random while the density stays at or
// above the target.
#include <tessera/distribution/tiled_range.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::bench {

/// "32:128,128:512" -> {{32, 128}, {128, 512}} (tile-size ranges of the synthetic problems); nothing if malformed.
inline std::optional<std::vector<std::pair<global_index, global_index>>> parse_tile_ranges(const std::string& text) {
  std::vector<std::pair<global_index, global_index>> ranges;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) return std::nullopt;
    ranges.emplace_back(std::stoll(item.substr(0, colon)), std::stoll(item.substr(colon + 1)));
  }
  return ranges;
}

/// "1,0.3,0.1" -> {1, 0.3, 0.1}.
inline std::vector<double> parse_densities(const std::string& text) {
  std::vector<double> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stod(item));
  return values;
}

/// The options every program over the synthetic problems takes (bench_bsgemm, the DBCSR peer).
struct synthetic_options {
  std::vector<std::pair<global_index, global_index>> tiles{{32, 128}, {128, 512}};
  std::vector<double> densities{1.0, 0.3, 0.1, 0.03};
  global_index m = 1024, n = 0;  // n = 0: 4096 / sqrt(density), so B keeps about 16M nonzero elements
  int grid_rows = 1;
  int reps = 3;
  std::uint64_t seed = 1;

  /// Take `arg` if it is one of these options (its value from `value()`); false if it is not one.
  /// Returns nothing for a malformed value.
  template <class Value>
  std::optional<bool> parse(std::string_view arg, Value&& value) {
    if (arg == "--tiles") {
      auto ranges = parse_tile_ranges(value());
      if (!ranges) return std::nullopt;
      tiles = std::move(*ranges);
    } else if (arg == "--densities") densities = parse_densities(value());
    else if (arg == "--m") m = std::stoll(value());
    else if (arg == "--n") n = std::stoll(value());
    else if (arg == "--grid-rows") grid_rows = std::stoi(value());
    else if (arg == "--seed") seed = std::stoull(value());
    else if (arg == "--reps") reps = std::max(1, std::stoi(value()));
    else return false;
    return true;
  }
};

// Tile sizes uniform in [lo, hi] covering n elements (the last tile shorter).
inline tiled_range random_tiles(global_index n, global_index lo, global_index hi, std::mt19937_64& rng) {
  std::uniform_int_distribution<global_index> size(lo, hi);
  std::vector<global_index> sizes;
  for (global_index at = 0; at < n;) {
    const global_index s = std::min(size(rng), n - at);
    sizes.push_back(s);
    at += s;
  }
  return tiled_range::from_sizes(sizes);
}

// The seed's pattern: remove uniformly chosen tiles while the element density stays at or above the target.
inline std::vector<char> random_pattern(const tiled_range& rows, const tiled_range& cols, double density, std::mt19937_64& rng) {
  const std::size_t nr = rows.num_tiles(), nc = cols.num_tiles();
  std::vector<char> keep(nr * nc, 1);
  const double total = static_cast<double>(rows.extent()) * static_cast<double>(cols.extent());
  double stored = total;
  std::vector<std::size_t> order(nr * nc);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t t : order) {
    const double size = static_cast<double>(rows.size(t / nc) * cols.size(t % nc));
    if ((stored - size) / total < density) continue;
    keep[t] = 0;
    stored -= size;
  }
  return keep;
}

/// The problem of one bench_bsgemm line: tilings and patterns of A (m x n) and B (n x n), from one seed.
struct synthetic_problem {
  tiled_range m_tiles, k_tiles, n_tiles;
  std::vector<char> a_keep, b_keep;
  synthetic_problem(global_index m, global_index n, global_index lo, global_index hi, double density,
                    std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    m_tiles = random_tiles(m, lo, hi, rng);
    k_tiles = random_tiles(n, lo, hi, rng);
    n_tiles = random_tiles(n, lo, hi, rng);
    a_keep = random_pattern(m_tiles, k_tiles, density, rng);
    b_keep = random_pattern(k_tiles, n_tiles, density, rng);
  }
  [[nodiscard]] bool a_nonzero(std::size_t i, std::size_t j) const { return a_keep[i * k_tiles.num_tiles() + j] != 0; }
  [[nodiscard]] bool b_nonzero(std::size_t i, std::size_t j) const { return b_keep[i * n_tiles.num_tiles() + j] != 0; }
};

/// n of a line: 4096 / sqrt(density) unless given, so B keeps about 16M nonzero elements.
inline global_index default_n(global_index n, double density) {
  return n > 0 ? n : static_cast<global_index>(4096.0 / std::sqrt(density));
}

}  // namespace tessera::bench
