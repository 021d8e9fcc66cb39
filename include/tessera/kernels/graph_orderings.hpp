#pragma once
/// @file
/// Orderings of a symmetric graph that give a sparse matrix locality: reverse Cuthill-McKee
/// (neighbours get nearby numbers: a band) and by degree (the most connected vertices first: a
/// power-law graph's hubs on a few pages). Host algorithms, sequential and deterministic: one
/// graph gives one order on every run, execution space and thread count. reorder
/// (ops/reorder.hpp) runs them on each rank's diagonal block.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_GRAPH_ORDERINGS_HPP
#endif

#include "../core/index_types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace tessera::kernels {

/// An undirected graph: the neighbours of vertex v are neighbours[offsets[v], offsets[v + 1]),
/// sorted, without v itself and without repeats.
struct symmetric_graph {
  std::vector<std::size_t> offsets{0};
  std::vector<local_index> neighbours;

  [[nodiscard]] std::size_t vertices() const noexcept { return offsets.size() - 1; }
  [[nodiscard]] std::size_t degree(std::size_t v) const noexcept { return offsets[v + 1] - offsets[v]; }
  [[nodiscard]] std::span<const local_index> neighbours_of(std::size_t v) const noexcept {
    return {neighbours.data() + offsets[v], degree(v)};
  }
};

/// The graph on `vertices` vertices with an edge for each pair (from[e], to[e]) in both
/// directions: the structure of A + A^T without its diagonal. Indices must lie in [0, vertices).
[[nodiscard]] inline symmetric_graph symmetric_graph_of(std::size_t vertices, std::span<const local_index> from,
                                                        std::span<const local_index> to) {
  symmetric_graph g;
  g.offsets.assign(vertices + 1, 0);
  for (std::size_t e = 0; e < from.size(); ++e) {
    if (from[e] == to[e]) continue;
    ++g.offsets[static_cast<std::size_t>(from[e]) + 1];
    ++g.offsets[static_cast<std::size_t>(to[e]) + 1];
  }
  std::partial_sum(g.offsets.begin(), g.offsets.end(), g.offsets.begin());
  g.neighbours.resize(g.offsets.back());
  std::vector<std::size_t> cursor(g.offsets.begin(), g.offsets.end() - 1);
  for (std::size_t e = 0; e < from.size(); ++e) {
    if (from[e] == to[e]) continue;
    g.neighbours[cursor[static_cast<std::size_t>(from[e])]++] = to[e];
    g.neighbours[cursor[static_cast<std::size_t>(to[e])]++] = from[e];
  }
  // Sort and drop repeats (an entry and its transpose both present), compacting in place: a
  // vertex's list moves only towards the front.
  std::size_t written = 0;
  for (std::size_t v = 0; v < vertices; ++v) {
    const auto begin = g.neighbours.begin() + static_cast<std::ptrdiff_t>(g.offsets[v]);
    const auto end = g.neighbours.begin() + static_cast<std::ptrdiff_t>(g.offsets[v + 1]);
    std::sort(begin, end);
    const auto last = std::unique(begin, end);
    g.offsets[v] = written;
    written = static_cast<std::size_t>(std::move(begin, last, g.neighbours.begin() + static_cast<std::ptrdiff_t>(written)) -
                                       g.neighbours.begin());
  }
  g.offsets[vertices] = written;
  g.neighbours.resize(written);
  return g;
}

namespace detail {
/// The vertices of v's component level by level (breadth first, neighbours in index order) into
/// `levels`, marking them with `stamp` in `seen`; returns the number of levels.
inline std::size_t level_structure(const symmetric_graph& g, local_index root, std::vector<std::uint32_t>& seen,
                                   std::uint32_t stamp, std::vector<local_index>& levels, std::size_t& last_level_begin) {
  levels.clear();
  levels.push_back(root);
  seen[static_cast<std::size_t>(root)] = stamp;
  std::size_t begin = 0, depth = 0;
  last_level_begin = 0;
  while (begin < levels.size()) {
    const std::size_t end = levels.size();
    last_level_begin = begin;
    ++depth;
    for (std::size_t i = begin; i < end; ++i)
      for (const local_index w : g.neighbours_of(static_cast<std::size_t>(levels[i])))
        if (seen[static_cast<std::size_t>(w)] != stamp) {
          seen[static_cast<std::size_t>(w)] = stamp;
          levels.push_back(w);
        }
    begin = end;
  }
  return depth;
}
}  // namespace detail

/// Reverse Cuthill-McKee: position -> vertex. Each connected component starts from a
/// pseudo-peripheral vertex (George and Liu's search, from the component's vertex of least
/// degree), is numbered breadth first with each vertex's new neighbours by increasing degree (then
/// index), and the whole sequence is reversed (isolated vertices, components of their own, end up last).
[[nodiscard]] inline std::vector<local_index> reverse_cuthill_mckee(const symmetric_graph& g) {
  const std::size_t n = g.vertices();
  std::vector<local_index> by_degree(n);
  std::iota(by_degree.begin(), by_degree.end(), local_index{0});
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](local_index a, local_index b) {
    return g.degree(static_cast<std::size_t>(a)) < g.degree(static_cast<std::size_t>(b));
  });
  std::vector<local_index> order;
  order.reserve(n);
  std::vector<char> placed(n, 0);
  std::vector<std::uint32_t> seen(n, 0);
  std::uint32_t stamp = 0;
  std::vector<local_index> levels, fresh;
  const auto less_connected = [&](local_index a, local_index b) {
    const auto da = g.degree(static_cast<std::size_t>(a)), db = g.degree(static_cast<std::size_t>(b));
    return da < db || (da == db && a < b);
  };
  for (const local_index start : by_degree) {
    if (placed[static_cast<std::size_t>(start)]) continue;
    // Pseudo-peripheral root: move to the least connected vertex of the last level while that
    // deepens the level structure (a few rounds suffice; bounded so that the search stays linear).
    local_index root = start;
    std::size_t last_begin = 0;
    std::size_t depth = detail::level_structure(g, root, seen, ++stamp, levels, last_begin);
    for (int round = 0; round < 8; ++round) {
      const local_index candidate = *std::min_element(levels.begin() + static_cast<std::ptrdiff_t>(last_begin),
                                                      levels.end(), less_connected);
      std::size_t candidate_last_begin = 0;
      std::vector<local_index> candidate_levels;
      const std::size_t candidate_depth =
          detail::level_structure(g, candidate, seen, ++stamp, candidate_levels, candidate_last_begin);
      if (candidate_depth <= depth) break;
      root = candidate;
      depth = candidate_depth;
      levels.swap(candidate_levels);
      last_begin = candidate_last_begin;
    }
    std::size_t head = order.size();
    order.push_back(root);
    placed[static_cast<std::size_t>(root)] = 1;
    while (head < order.size()) {
      const local_index u = order[head++];
      fresh.clear();
      for (const local_index w : g.neighbours_of(static_cast<std::size_t>(u)))
        if (!placed[static_cast<std::size_t>(w)]) {
          placed[static_cast<std::size_t>(w)] = 1;
          fresh.push_back(w);
        }
      std::sort(fresh.begin(), fresh.end(), less_connected);
      order.insert(order.end(), fresh.begin(), fresh.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

/// Vertices by decreasing degree, ties in index order: position -> vertex.
[[nodiscard]] inline std::vector<local_index> by_decreasing_degree(const symmetric_graph& g) {
  std::vector<local_index> order(g.vertices());
  std::iota(order.begin(), order.end(), local_index{0});
  std::stable_sort(order.begin(), order.end(), [&](local_index a, local_index b) {
    return g.degree(static_cast<std::size_t>(a)) > g.degree(static_cast<std::size_t>(b));
  });
  return order;
}

/// The bandwidth of `g` numbered by `position` (vertex -> position): the largest distance between
/// the numbers of two neighbours (0 without edges).
[[nodiscard]] inline std::size_t bandwidth_under(const symmetric_graph& g, std::span<const local_index> position) {
  std::size_t widest = 0;
  for (std::size_t v = 0; v < g.vertices(); ++v)
    for (const local_index w : g.neighbours_of(v)) {
      const auto a = position[v], b = position[static_cast<std::size_t>(w)];
      widest = std::max(widest, static_cast<std::size_t>(a > b ? a - b : b - a));
    }
  return widest;
}

/// The inverse of an order (position -> vertex): vertex -> position.
[[nodiscard]] inline std::vector<local_index> positions_of(std::span<const local_index> order) {
  std::vector<local_index> position(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) position[static_cast<std::size_t>(order[k])] = static_cast<local_index>(k);
  return position;
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_GRAPH_ORDERINGS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_GRAPH_ORDERINGS_HPP
#endif
