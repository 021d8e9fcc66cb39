#pragma once
/// @file
/// Counter-based random numbers: the value for (seed, stream, index) is a pure
/// function of those three, so a generator gives the same matrix whichever
/// rank computes which entry, at any rank count.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/generators/detail/counter_rng.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include <cstdint>
#include <type_traits>

namespace tessera::detail {

[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A 64-bit random word for (seed, stream, index).
[[nodiscard]] constexpr std::uint64_t random_word(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) noexcept {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ index);
}

/// Uniform in [0, 1).
[[nodiscard]] constexpr double random_unit(std::uint64_t word) noexcept {
  return static_cast<double>(word >> 11) * 0x1.0p-53;
}

/// A value for a generated entry: uniform in (0, 1] for floating types, 1..9 for integers.
template <class T>
[[nodiscard]] constexpr T random_value(std::uint64_t word) noexcept {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(1.0 - random_unit(word));
  else return static_cast<T>(1 + word % 9);
}

/// A pseudo-random bijection of [0, 2^bits): multiply by an odd number, xor-shift,
/// add, all modulo 2^bits, each step invertible. Needs no table, so each rank
/// relabels its own vertices without holding a permutation of all of them.
[[nodiscard]] constexpr std::uint64_t permute_bits(std::uint64_t x, int bits, std::uint64_t key) noexcept {
  if (bits <= 0) return 0;
  const std::uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  const int shift = bits / 2 + 1;
  for (int round = 0; round < 4; ++round) {
    const std::uint64_t k = splitmix64(key + static_cast<std::uint64_t>(round));
    x = (x * (k | 1ull)) & mask;
    x ^= x >> shift;
    x = (x + (k >> 7)) & mask;
  }
  return x;
}

}  // namespace tessera::detail
