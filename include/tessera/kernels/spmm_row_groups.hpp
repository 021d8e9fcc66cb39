#pragma once
/// @file
/// SpMM on host cores for rows that share their pattern: Y(G, :) = A(G, P) * X(P, :) for a group
/// G of rows whose entries read the same rows P of X, in the same order.
///
/// Such rows are common: a PDE with several unknowns per mesh node (each node's rows have one
/// pattern: PETSc's "inodes"), and the Graph Challenge's RadiX-Net layers, where every 16 rows of
/// W' read the same 32 rows of Y'. Row by row, each row reads its rows of X from wherever they are
/// (L3 or memory, at random places); a group copies its pattern's rows of X, a block of columns at
/// a time, next to each other in L1 and every row of the group reads them there: a small dense
/// product with the rows of Y in registers, a tile of rows at a time. Each row of X is read about
/// twice per product instead of once per entry of A that names it (32 times in RadiX-Net).
///
/// Measured (bench: one rank, RadiX-Net layers of 4,096 neurons, 2026-11-28, Zen 3 AVX2, against
/// the row kernel in the same run): floats 1.3-2.0x faster at k = 16-128 (20-26 GFMA/s against
/// 12-15), 1.5x at k = 512-1,024 (a layer with a random permutation, as 112 of SpDNN's 120 are);
/// doubles 1.2-2x. bench/results/HISTORY.md ("Twelfth stop").
///
/// The sums are the row kernel's register-row sums (spmm_rows_pass, spmm_rows_panel): from zero,
/// one FMA per entry, in entry order, so at k = 16, 32 and 64 a product gives the same bits with
/// and without groups (and to rounding at other widths, whose row-kernel tails add differently).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_ROW_GROUPS_HPP
#endif

#include "../core/index_types.hpp"
#include "host_simd.hpp"
#include "spmm_rows.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// Full unrolling of the register tiles' loops (GCC's pragma; other compilers unroll them anyway
// or ignore it, and nvcc's front end would warn about it).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define TESSERA_IMPL_UNROLL _Pragma("GCC unroll 16")
#else
#define TESSERA_IMPL_UNROLL
#endif

namespace tessera::kernels {

namespace detail {
/// Columns of Y per panel of a group: two SIMD registers (16 floats or 8 doubles with AVX2).
template <class T>
inline constexpr int group_panel_width = 2 * host_vector<T>::lanes;

/// Rows of Y per register tile: two registers each, leaving registers for X's two and the
/// broadcast weight (16 with AVX2: 6 rows, 32 with AVX-512: 12).
template <class T>
inline constexpr int group_tile_rows = host_vector<T>::lanes * static_cast<int>(sizeof(T)) >= 64 ? 12 : 6;

/// Columns of X a group copies at once: four panels (a cache line per panel and row with AVX2
/// floats).
template <class T>
inline constexpr int group_block_width = 4 * group_panel_width<T>;

/// Longest pattern grouped: a group copies its rows of X's block next to each other (at most
/// 32 KiB with AVX2, 64 KiB with AVX-512, on the stack of the thread that runs it), because in
/// place, rows a multiple of 64 apart (RadiX-Net's patterns: every 256th or 1,024th row) share one
/// set of L1 and evicted each other between the tiles.
inline constexpr offset_type group_copied_pattern = 128;

/// Fewest rows that share a pattern for their group to pay: the copy of X's rows is shared by the
/// group's rows, and with 2 or 3 of them it is a large part of the work (not measured: SpDNN's
/// groups have 16 rows).
inline constexpr std::size_t group_min_rows = 4;

/// Most rows of one work item: a larger group is split, so that one pattern shared by many rows
/// still spreads over threads (each piece copies X's rows again: one part in 48).
inline constexpr std::size_t group_max_rows = 48;
}  // namespace detail

/// The rows of one row list of A that share their pattern, in groups, and the others. Made once
/// per row list (an SpMM plan keeps it with the list) on host memory.
template <class MemorySpace>
struct spmm_row_groups {
  Kokkos::View<local_index*, MemorySpace> group_start;  ///< groups + 1 offsets into grouped_rows
  Kokkos::View<local_index*, MemorySpace> grouped_rows;  ///< row ids, group after group
  Kokkos::View<local_index*, MemorySpace> other_rows;  ///< the list's rows in no group, in list order
  std::size_t groups = 0;
  bool made = false;

  /// Group `rows` (row ids into row_ptr) by their entries' rows of X (x_source: entry_sources).
  /// Row order within a group and the groups' order follow the list, so the result is the same
  /// on every run.
  static spmm_row_groups make(const Kokkos::View<const local_index*, MemorySpace>& rows,
                              const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                              const Kokkos::View<const local_index*, MemorySpace>& x_source) {
    static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible,
                  "spmm_row_groups is made and run on host memory");
    spmm_row_groups g;
    g.made = true;
    const std::size_t n = rows.extent(0);
    // (hash of the pattern, position in the list): equal patterns sort next to each other.
    std::vector<std::pair<std::uint64_t, std::size_t>> keyed;
    keyed.reserve(n);
    std::vector<char> grouped(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const local_index r = rows(i);
      const offset_type begin = row_ptr(r), end = row_ptr(r + 1);
      if (end == begin || end - begin > detail::group_copied_pattern) continue;
      std::uint64_t h = 0xcbf29ce484222325ULL ^ static_cast<std::uint64_t>(end - begin);
      for (offset_type e = begin; e < end; ++e) h = (h ^ static_cast<std::uint32_t>(x_source(e))) * 0x100000001b3ULL;
      keyed.emplace_back(h, i);
    }
    std::sort(keyed.begin(), keyed.end());
    const auto same_pattern = [&](std::size_t a, std::size_t b) {
      const offset_type ba = row_ptr(rows(a)), ea = row_ptr(rows(a) + 1), bb = row_ptr(rows(b));
      if (ea - ba != row_ptr(rows(b) + 1) - bb) return false;
      for (offset_type t = 0; t < ea - ba; ++t)
        if (x_source(ba + t) != x_source(bb + t)) return false;
      return true;
    };
    std::vector<std::vector<std::size_t>> found;  // each: list positions, ascending
    for (std::size_t run = 0; run < keyed.size();) {
      std::size_t run_end = run + 1;
      while (run_end < keyed.size() && keyed[run_end].first == keyed[run].first) ++run_end;
      // Within equal hashes, split by the patterns themselves (a collision is two groups).
      std::vector<std::vector<std::size_t>> classes;
      for (std::size_t t = run; t < run_end; ++t) {
        const std::size_t i = keyed[t].second;
        auto it = std::find_if(classes.begin(), classes.end(), [&](const auto& c) { return same_pattern(c.front(), i); });
        if (it == classes.end()) classes.push_back({i});
        else it->push_back(i);
      }
      for (auto& c : classes)
        if (c.size() >= detail::group_min_rows) found.push_back(std::move(c));
      run = run_end;
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
    std::vector<local_index> start{0}, members, others;
    for (const auto& c : found) {
      for (std::size_t t = 0; t < c.size(); t += detail::group_max_rows) {
        const std::size_t last = std::min(c.size(), t + detail::group_max_rows);
        for (std::size_t u = t; u < last; ++u) {
          members.push_back(rows(c[u]));
          grouped[c[u]] = 1;
        }
        start.push_back(static_cast<local_index>(members.size()));
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      if (!grouped[i]) others.push_back(rows(i));
    g.groups = start.size() - 1;
    const auto to_view = [](const std::vector<local_index>& v, const char* label) {
      Kokkos::View<local_index*, MemorySpace> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), v.size());
      std::copy(v.begin(), v.end(), out.data());
      return out;
    };
    g.group_start = to_view(start, "tessera::spmm::group_start");
    g.grouped_rows = to_view(members, "tessera::spmm::grouped_rows");
    g.other_rows = to_view(others, "tessera::spmm::other_rows");
    return g;
  }
};

/// Whether the grouped kernel exists for T on ExecSpace (host cores with SIMD registers) and
/// serves a product of width k (at least one panel).
template <class ExecSpace, class T>
constexpr bool has_row_groups_kernel(const std::size_t k) {
  return has_register_rows<detail::group_panel_width<T>, ExecSpace, T> &&
         k >= static_cast<std::size_t>(detail::group_panel_width<T>);
}

namespace detail {
/// Y(rows[0, Rows), panel) = out[r][0, panel_width) from X's rows of the pattern (`x_row(k)`: the
/// panel in row k of the pattern) and each row's weights `w[r][0, pattern)`. Stores whole
/// registers only: a partial store path kept GCC from holding the accumulators in registers.
template <int Rows, class T, class XRow>
inline void group_tile(const XRow& x_row, const offset_type pattern, const T* const* w, T* const* out) {
  using vec = host_vector<T>;
  constexpr int lanes = vec::lanes;
  typename vec::reg acc0[Rows], acc1[Rows];
TESSERA_IMPL_UNROLL
  for (int r = 0; r < Rows; ++r) acc0[r] = acc1[r] = vec::zero();
  for (offset_type k = 0; k < pattern; ++k) {
    const T* KOKKOS_RESTRICT in = x_row(k);
    const auto x0 = vec::load(in), x1 = vec::load(in + lanes);
TESSERA_IMPL_UNROLL
    for (int r = 0; r < Rows; ++r) {
      const auto a = vec::broadcast(w[r][k]);
      acc0[r] = vec::fma(a, x0, acc0[r]);
      acc1[r] = vec::fma(a, x1, acc1[r]);
    }
  }
TESSERA_IMPL_UNROLL
  for (int r = 0; r < Rows; ++r) {
    vec::store(out[r], acc0[r]);
    vec::store(out[r] + lanes, acc1[r]);
  }
}

/// The last tile of a group, of 1 to group_tile_rows - 1 rows (a switch, for registers).
template <int Rows, class T, class XRow>
inline void group_tile_of(const int rows, const XRow& x_row, const offset_type pattern, const T* const* w, T* const* out) {
  if constexpr (Rows > 0) {
    if (rows == Rows) return group_tile<Rows>(x_row, pattern, w, out);
    group_tile_of<Rows - 1>(rows, x_row, pattern, w, out);
  }
}
}  // namespace detail

/// Y(r, :) = A(r, :) * X for every row r of the groups (see the file's comment); the rows in no
/// group are the caller's (groups.other_rows). Requires has_row_groups_kernel<ExecSpace, T>(k).
///
/// Each group runs on one thread, a block of columns at a time: it copies its pattern's rows of
/// X's block next to each other (zero-padded to whole panels) and computes its rows' block panel
/// by panel, a tile of rows at a time, while the next block's lines of the same rows are fetched.
template <class ExecSpace, class T, class MemorySpace>
void spmm_row_groups_run(const ExecSpace& exec, const spmm_row_groups<MemorySpace>& groups,
                         const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                         const Kokkos::View<const local_index*, MemorySpace>& x_source,
                         const Kokkos::View<const T*, MemorySpace>& values,
                         const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                         const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
                         const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y) {
  if constexpr (has_register_rows<detail::group_panel_width<T>, ExecSpace, T>) {
    using vec = detail::host_vector<T>;
    constexpr int width = detail::group_panel_width<T>;
    constexpr int tile = detail::group_tile_rows<T>;
    constexpr int block_width = detail::group_block_width<T>;
    const auto k = static_cast<int>(y.extent(1));
    const auto start = groups.group_start;
    const auto members = groups.grouped_rows;
    const std::size_t groups_count = groups.groups;
    const detail::rows_of_x<T, MemorySpace> x_row{x_source, x_local, x_halo};
    Kokkos::parallel_for(
        "tessera::spmm_row_groups", Kokkos::RangePolicy<ExecSpace>(exec, 0, groups_count), KOKKOS_LAMBDA(const std::size_t g) {
          const local_index first_member = start(g), last_member = start(g + 1);
          const offset_type pattern_begin = row_ptr(members(first_member));
          const offset_type pattern = row_ptr(members(first_member) + 1) - pattern_begin;
          alignas(64) T copied[detail::group_copied_pattern * block_width];
          alignas(64) T tail[tile * width];  // a tile of the last panel when k is not whole panels
          const T* const copy = copied;  // (a lambda capturing the array would copy it)
          for (int first = 0; first < k; first += block_width) {
            const int columns = k - first < block_width ? k - first : block_width;
            const int padded = (columns + width - 1) / width * width;
            for (offset_type e = 0; e < pattern; ++e) {
              const T* from = x_row(pattern_begin + e) + first;
              T* to = copied + e * padded;
              int t = 0;
              if (columns == block_width) {
                // A constant trip count, unrolled: GCC made the variable loop a call to memmove
                // (4% of SpDNN's run for 256 bytes at a time).
TESSERA_IMPL_UNROLL
                for (int u = 0; u < block_width; u += vec::lanes) vec::store(to + u, vec::load(from + u));
                t = block_width;
              }
              for (; t + vec::lanes <= columns; t += vec::lanes) vec::store(to + t, vec::load(from + t));
              for (; t < columns; ++t) to[t] = from[t];
              for (; t < padded; ++t) to[t] = T{};
              // The next block of this row, or the next group's first block, on its way meanwhile.
              if (first + block_width < k) detail::prefetch_row<block_width>(from + block_width);
            }
            if (first + block_width >= k && g + 1 < groups_count) {
              const offset_type next_end = row_ptr(members(last_member) + 1);
              for (offset_type e = row_ptr(members(last_member)); e < next_end; ++e)
                detail::prefetch_row<block_width>(x_row(e));
            }
            for (int panel = 0; panel < padded; panel += width) {
              const int column = first + panel;
              const int n = k - column < width ? k - column : width;
              const auto in_copy = [copy, padded, panel](const offset_type e) { return copy + e * padded + panel; };
              for (local_index r = first_member; r < last_member; r += tile) {
                const int rows = last_member - r < tile ? static_cast<int>(last_member - r) : tile;
                const T* w[tile];
                T* out[tile];
                for (int t = 0; t < rows; ++t) {
                  const local_index row = members(r + t);
                  w[t] = &values(row_ptr(row));
                  out[t] = n == width ? &y(row, column) : tail + t * width;
                }
                if (rows == tile) detail::group_tile<tile>(in_copy, pattern, w, out);
                else detail::group_tile_of<tile - 1>(rows, in_copy, pattern, w, out);
                if (n < width)
                  for (int t = 0; t < rows; ++t)
                    for (int c = 0; c < n; ++c) y(members(r + t), column + c) = tail[t * width + c];
              }
            }
          }
        });
  }
}

}  // namespace tessera::kernels

#undef TESSERA_IMPL_UNROLL

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_ROW_GROUPS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_ROW_GROUPS_HPP
#endif
