#pragma once
/// @file
/// A synthetic quasi-one-dimensional molecule for block-sparse tensor
/// contractions (the ABCD term of coupled cluster, seed 004 §5.2):
/// orbitals placed along a chain, clustered into tiles of irregular size,
/// and tile pairs coupled only when their clusters' centres are close.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_MOLECULAR_CHAIN_HPP
#endif

#include "../core/error.hpp"
#include "../core/index_types.hpp"
#include "../distribution/tiled_range.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace tessera::generate {

/// One kind of orbitals (occupied or unoccupied) along the chain, clustered.
struct orbital_clusters {
  tiled_range tiles;            ///< clusters of consecutive orbitals (irregular sizes)
  std::vector<double> centre;   ///< position of each cluster's centre along the chain
};

/// `n` orbitals spread uniformly at random over [0, length), sorted, cut into
/// clusters of sizes uniform in [min_tile, max_tile] (the last one shorter).
[[nodiscard]] inline orbital_clusters chain_orbitals(global_index n, double length, global_index min_tile,
                                                     global_index max_tile, std::uint64_t seed) {
  TESSERA_REQUIRE(n >= 0 && length > 0, invalid_argument, "chain_orbitals: {} orbitals on a chain of length {}", n,
                  length);
  TESSERA_REQUIRE(min_tile > 0 && max_tile >= min_tile, invalid_argument,
                  "chain_orbitals: tile sizes must satisfy 0 < min <= max (got [{}, {}])", min_tile, max_tile);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> where(0.0, length);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = where(rng);
  std::sort(x.begin(), x.end());
  std::uniform_int_distribution<global_index> size(min_tile, max_tile);
  orbital_clusters out;
  std::vector<global_index> sizes;
  for (global_index at = 0; at < n;) {
    const global_index s = std::min(size(rng), n - at);
    double sum = 0;
    for (global_index k = at; k < at + s; ++k) sum += x[static_cast<std::size_t>(k)];
    out.centre.push_back(sum / static_cast<double>(s));
    sizes.push_back(s);
    at += s;
  }
  out.tiles = tiled_range::from_sizes(sizes);
  return out;
}

/// The tiling of a fused index pair (p, q) in row-major pair order: pair tile
/// (P, Q) has |P| * |Q| elements, and element (p, q) is at fused position
/// offset(P, Q) + (p - begin(P)) * |Q| + (q - begin(Q)).
[[nodiscard]] inline tiled_range fused_tiles(const tiled_range& first, const tiled_range& second) {
  std::vector<global_index> sizes;
  for (std::size_t a = 0; a < first.num_tiles(); ++a)
    for (std::size_t b = 0; b < second.num_tiles(); ++b) sizes.push_back(first.size(a) * second.size(b));
  return tiled_range::from_sizes(sizes);
}

/// A smooth pseudo-random value in [-1, 1] for element (i, j) of a named tensor, decaying with distance.
[[nodiscard]] inline double tensor_value(global_index i, global_index j, std::uint64_t salt) {
  std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull ^
                    (static_cast<std::uint64_t>(j) + 0x632BE59BD9B4E019ull + (salt << 7)) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<double>(h >> 11) / static_cast<double>(1ull << 53) * 2.0 - 1.0;
}

/// The ABCD term R(ij, ab) = sum_cd T(ij, cd) V(cd, ab), matricized: T and R are
/// (O*O) x (U*U), V is (U*U) x (U*U); fused indices are tiled by cluster pairs.
/// T's tile ((I, J), (C, D)) is nonzero when cluster I is within `cutoff` of C
/// and J of D; V's tile ((C, D), (A, B)) when C is near A and D near B.
struct abcd_problem {
  orbital_clusters occupied, unoccupied;
  tiled_range ij, ab;  ///< fused tilings: occupied pairs, unoccupied pairs
  double cutoff = 0;

  abcd_problem(global_index o, global_index u, global_index min_tile, global_index max_tile, double cutoff_,
               double length, std::uint64_t seed)
      : occupied(chain_orbitals(o, length, min_tile, max_tile, seed)),
        unoccupied(chain_orbitals(u, length, min_tile, max_tile, seed + 1)),
        ij(fused_tiles(occupied.tiles, occupied.tiles)),
        ab(fused_tiles(unoccupied.tiles, unoccupied.tiles)),
        cutoff(cutoff_) {}

  [[nodiscard]] bool near(double x, double y) const noexcept { return std::abs(x - y) <= cutoff; }
  /// Is T's tile (pair tile of ij, pair tile of cd) nonzero?
  [[nodiscard]] bool t_nonzero(std::size_t ij_tile, std::size_t cd_tile) const noexcept {
    const std::size_t no = occupied.tiles.num_tiles(), nu = unoccupied.tiles.num_tiles();
    return near(occupied.centre[ij_tile / no], unoccupied.centre[cd_tile / nu]) &&
           near(occupied.centre[ij_tile % no], unoccupied.centre[cd_tile % nu]);
  }
  /// Is V's tile (pair tile of cd, pair tile of ab) nonzero?
  [[nodiscard]] bool v_nonzero(std::size_t cd_tile, std::size_t ab_tile) const noexcept {
    const std::size_t nu = unoccupied.tiles.num_tiles();
    return near(unoccupied.centre[cd_tile / nu], unoccupied.centre[ab_tile / nu]) &&
           near(unoccupied.centre[cd_tile % nu], unoccupied.centre[ab_tile % nu]);
  }
};

}  // namespace tessera::generate

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_MOLECULAR_CHAIN_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_MOLECULAR_CHAIN_HPP
#endif
