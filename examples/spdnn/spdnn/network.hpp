#pragma once
// The Graph Challenge sparse DNN: its constants, the RadiX-Net weights and
// MNIST-like synthetic input features, all deterministic from a seed.
//
// Conventions (0-based here; the challenge's files are 1-based):
//   row-vector form  Y(l) = clamp(Y(l-1) * W(l) (+ b on nonzeros), 0, ymax)
//   Y is images x neurons; W(i, j) is the edge from neuron i to neuron j.

#include <tessera/core/error.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace spdnn {

/// The challenge's sizes and the constant bias of each.
inline double challenge_bias(int neurons) {
  switch (neurons) {
    case 1024: return -0.30;
    case 4096: return -0.35;
    case 16384: return -0.40;
    case 65536: return -0.45;
    default:
      TESSERA_THROW(invalid_argument, "spdnn: {} neurons; the challenge has 1024, 4096, 16384 or 65536", neurons);
  }
}

inline constexpr double challenge_ymax = 32.0;
inline constexpr double challenge_weight = 1.0 / 16.0;
inline constexpr int challenge_max_layers = 1920;
inline constexpr int edges_per_neuron = 32;

/// A small, portable generator (splitmix64): the same network on every
/// platform and standard library, which std::shuffle does not promise.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (n > 0; the tiny modulo bias is irrelevant here).
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

inline std::uint64_t mix(std::uint64_t seed, std::uint64_t stream) {
  return splitmix64(seed ^ (stream * 0xd1b54a32d192ed03ULL)).next();
}

/// RadiX-Net weights: with M = N/16 and D = log2(M), layer l = D*k + m
/// (1-based, m in 1..D) has W(i, j) = 1/16 iff (rho_k(i) - j) mod M is 0 or
/// 2^(m-1), where rho_0(i) = i mod M and rho_k(i) = pi_k(i) mod M for a random
/// permutation pi_k of the neurons shared by the D layers of block k.
/// Every row and every column has exactly 32 entries.
class radixnet {
 public:
  radixnet(int neurons, std::uint64_t seed) : neurons_(neurons), seed_(seed) {
    TESSERA_REQUIRE(neurons >= 32 && std::has_single_bit(static_cast<unsigned>(neurons)), invalid_argument,
                    "spdnn: RadiX-Net needs a power-of-two neuron count of at least 32, not {}", neurons);
    m_ = neurons / 16;
    d_ = std::countr_zero(static_cast<unsigned>(m_));
  }

  [[nodiscard]] int neurons() const noexcept { return neurons_; }

  /// The 32 columns of row i of layer l (1-based), ascending.
  [[nodiscard]] std::vector<int> row_columns(int layer, int i) const {
    const int k = (layer - 1) / d_, m = (layer - 1) % d_ + 1;
    const int rho = (k == 0 ? i : permutation(k)[static_cast<std::size_t>(i)]) % m_;
    const int shift = 1 << (m - 1);
    std::vector<int> cols;
    cols.reserve(edges_per_neuron);
    for (int base : {rho, ((rho - shift) % m_ + m_) % m_})
      for (int t = 0; t < 16; ++t) cols.push_back(base + t * m_);
    std::sort(cols.begin(), cols.end());
    return cols;
  }

 private:
  const std::vector<int>& permutation(int block) const {
    if (block_ != block) {
      perm_.resize(static_cast<std::size_t>(neurons_));
      std::iota(perm_.begin(), perm_.end(), 0);
      splitmix64 rng(mix(seed_, 0x5eed0000ULL + static_cast<std::uint64_t>(block)));
      for (std::size_t n = perm_.size(); n > 1; --n) std::swap(perm_[n - 1], perm_[rng.below(n)]);
      block_ = block;
    }
    return perm_;
  }

  int neurons_, m_ = 0, d_ = 0;
  std::uint64_t seed_;
  mutable int block_ = -1;
  mutable std::vector<int> perm_;
};

/// Binary input features like the challenge's (MNIST strokes drawn on a
/// sqrt(N) x sqrt(N) canvas, about 10% of the pixels on): image r depends only
/// on (seed, r), so any rank can draw any image.
class feature_generator {
 public:
  static constexpr double density = 0.104;  // 6,374,505 / (60000 * 1024) in the challenge's N = 1024 file

  feature_generator(int neurons, std::uint64_t seed) : neurons_(neurons), seed_(seed) {
    side_ = 1;
    while (side_ * side_ < neurons) ++side_;
    height_ = (neurons + side_ - 1) / side_;
  }

  /// The neurons that are on in image r, ascending.
  [[nodiscard]] std::vector<int> image(std::int64_t r) const {
    splitmix64 rng(mix(seed_, 0x1a6e0000ULL + static_cast<std::uint64_t>(r)));
    std::vector<char> on(static_cast<std::size_t>(neurons_), 0);
    const auto target = static_cast<int>(density * neurons_ * (0.6 + 0.8 * rng.uniform()));
    int count = 0;
    // Strokes: straight segments two pixels wide, vertical, horizontal or diagonal.
    for (int strokes = 0; count < target && strokes < 64; ++strokes) {
      const int dir = static_cast<int>(rng.below(4));
      const int dx[] = {0, 1, 1, 1}, dy[] = {1, 0, 1, -1};
      int x = static_cast<int>(rng.below(static_cast<std::uint64_t>(side_)));
      int y = static_cast<int>(rng.below(static_cast<std::uint64_t>(height_)));
      const int length = side_ / 3 + static_cast<int>(rng.below(static_cast<std::uint64_t>(side_ / 2 + 1)));
      for (int s = 0; s < length && count < target; ++s, x += dx[dir], y += dy[dir]) {
        for (int w = 0; w < 2; ++w) {
          const int px = dir == 0 ? x + w : x, py = dir == 0 ? y : y + w;
          if (px < 0 || py < 0 || px >= side_ || py >= height_) continue;
          const int n = py * side_ + px;
          if (n < neurons_ && !on[static_cast<std::size_t>(n)]) {
            on[static_cast<std::size_t>(n)] = 1;
            ++count;
          }
        }
      }
    }
    std::vector<int> neurons;
    neurons.reserve(static_cast<std::size_t>(count));
    for (int n = 0; n < neurons_; ++n)
      if (on[static_cast<std::size_t>(n)]) neurons.push_back(n);
    return neurons;
  }

 private:
  int neurons_, side_, height_;
  std::uint64_t seed_;
};

}  // namespace spdnn
