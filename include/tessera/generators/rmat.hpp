#pragma once
/// @file
/// R-MAT power-law matrices (Graph500 parameters by default).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_RMAT_HPP
#endif

#include "../core/error.hpp"
#include "../matrix/build.hpp"
#include "detail/counter_rng.hpp"
#include "share.hpp"

#include <cstdint>

namespace tessera::generate {

/// R-MAT recursion probabilities and options.
struct rmat_options {
  double a = 0.57;  ///< top-left quadrant
  double b = 0.19;  ///< top-right
  double c = 0.19;  ///< bottom-left (d = 1 - a - b - c)
  bool permute_vertices = true;  ///< relabel vertices pseudo-randomly, as Graph500 does
};

/// The vertex relabelling of rmat (rmat_options::permute_vertices): the new label of vertex `v`
/// of a 2^scale-vertex graph made with `seed`. A bijection of [0, 2^scale) computed without a
/// table, so each rank relabels its own vertices; public so that a user can map labels back to
/// the R-MAT recursion (e.g. to find the hubs) and check that it is a permutation.
[[nodiscard]] constexpr std::uint64_t rmat_vertex_label(std::uint64_t v, int scale, std::uint64_t seed) noexcept {
  return detail::permute_bits(v, scale, seed ^ 0x5eed);
}

/// A directed R-MAT graph with 2^scale vertices and edge_factor * 2^scale edges,
/// as a 2^scale x 2^scale matrix whose entry (u, v) counts the edges u -> v
/// (collective). Every rank generates 1/P of the edges; edge e depends only on
/// (seed, e), so the matrix is the same at every rank count.
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_matrix<T, Policy> rmat(const communicator& comm, int scale, int edge_factor = 16,
                                          std::uint64_t seed = 1, const rmat_options& options = {}) {
  comm.collectively([&] {
    TESSERA_REQUIRE(scale >= 0 && scale <= 40, invalid_argument, "rmat: scale {} is outside [0, 40]", scale);
    TESSERA_REQUIRE(edge_factor >= 0, invalid_argument, "rmat: negative edge factor {}", edge_factor);
    TESSERA_REQUIRE(options.a >= 0 && options.b >= 0 && options.c >= 0 && options.a + options.b + options.c <= 1.0,
                    invalid_argument, "rmat: probabilities a={} b={} c={} must be non-negative and sum to at most 1",
                    options.a, options.b, options.c);
  });
  const global_index n = global_index{1} << scale;
  const global_index edges = n * edge_factor;
  const auto mine = detail::own_share(comm, edges);
  triplets<T> entries;
  entries.reserve(static_cast<std::size_t>(mine.end - mine.begin));
  const double ab = options.a + options.b, abc = ab + options.c;
  for (global_index e = mine.begin; e < mine.end; ++e) {
    std::uint64_t u = 0, v = 0;
    for (int level = 0; level < scale; ++level) {
      const double x = detail::random_unit(detail::random_word(seed, static_cast<std::uint64_t>(level), static_cast<std::uint64_t>(e)));
      const std::uint64_t down = x >= ab ? 1u : 0u;
      const std::uint64_t right = (x >= options.a && x < ab) || x >= abc ? 1u : 0u;
      u = (u << 1) | down;
      v = (v << 1) | right;
    }
    if (options.permute_vertices) {
      u = rmat_vertex_label(u, scale, seed);
      v = rmat_vertex_label(v, scale, seed);
    }
    entries.push_back(static_cast<global_index>(u), static_cast<global_index>(v), T{1});
  }
  return build_from_triplets<T, Policy>(comm, n, n, entries);
}

}  // namespace tessera::generate

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_RMAT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_RMAT_HPP
#endif
