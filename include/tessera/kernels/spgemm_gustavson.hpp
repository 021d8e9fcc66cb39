#pragma once
/// @file
/// Node-local SpGEMM over any semiring by Gustavson's row-wise algorithm, on Kokkos: each row of
/// C is accumulated in a dense accumulator over a compressed column space (one per concurrent
/// thread, from a UniqueToken), in two passes: a symbolic one counts each row's distinct
/// columns (so C is allocated exactly, with no upper-bound buffer) and records which columns
/// occur at all, a numeric one fills the rows and sorts each row's columns (or, for rows long
/// against the column space, reads them back in order from a bitmap).
///
/// Why not Kokkos-Kernels here: its spgemm wants B as one CSR with local columns, so the
/// distributed product had to copy B's local rows next to the fetched ones, compress their
/// columns, and sort C's rows afterwards; half of a Laplacian product was that glue. This kernel
/// reads B's local rows in place (their columns shifted into the accumulator's space, or
/// translated once by the caller) and the fetched rows from their own arrays, and writes C's rows
/// sorted and already in C's compressed columns.
///
/// The dense accumulators cost (sizeof(T) + 4) bytes per column of the space per thread: on a GPU,
/// whose concurrency is tens of thousands of threads, they would exhaust its memory. The kernel is
/// therefore host-only (a static_assert; spgemm picks Kokkos-Kernels or expand-sort-compress on
/// device spaces), and its kernels are plain host lambdas: they may call host code (std::sort,
/// madvise, the bitmap's bit scan), and nvcc never compiles them for the device.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_GUSTAVSON_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../core/huge_pages.hpp"
#include "../core/index_types.hpp"
#include "sort_rows.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tessera::kernels {

/// The operands of a row-wise product C = A * B^, where row c of B^ (for A's local column c) is
/// either row `source(c)` of the local B (source(c) >= 0) or fetched row `-source(c) - 1`.
/// Columns of B^ are accumulator columns in [0, width), numbered in ascending global order:
/// the local B's column j is accumulator column `j + b_offset` (so B's own CSR serves as is when
/// no extra column of the fetched rows falls between two of B's, as for banded matrices; else the
/// caller passes B's columns translated); the fetched rows' columns are accumulator columns already.
template <class T, class MemorySpace>
struct gustavson_operands {
  Kokkos::View<const offset_type*, MemorySpace> a_ptr;
  Kokkos::View<const local_index*, MemorySpace> a_col;
  Kokkos::View<const T*, MemorySpace> a_val;
  /// Per A column: local B row (>= 0) or -(fetched row) - 1.
  Kokkos::View<const local_index*, MemorySpace> source;
  Kokkos::View<const offset_type*, MemorySpace> b_ptr;
  Kokkos::View<const local_index*, MemorySpace> b_col;
  Kokkos::View<const T*, MemorySpace> b_val;
  /// Added to `b_col` to give accumulator columns.
  local_index b_offset = 0;
  Kokkos::View<const offset_type*, MemorySpace> h_ptr;
  Kokkos::View<const local_index*, MemorySpace> h_col;
  Kokkos::View<const T*, MemorySpace> h_val;
  /// Number of accumulator columns.
  local_index width = 0;
};

/// C's rows: columns are positions among `used` (the accumulator columns C stores, ascending),
/// sorted within each row.
template <class T, class MemorySpace>
struct gustavson_result {
  Kokkos::View<offset_type*, MemorySpace> row_ptr;
  Kokkos::View<local_index*, MemorySpace> col_idx;
  Kokkos::View<T*, MemorySpace> values;
  Kokkos::View<local_index*, MemorySpace> used;
};

namespace detail {

/// Calls f(accumulator column, a, b) for every product of row i of A * B^, in A's entry order
/// (host code, as the whole kernel: f is a host lambda).
template <class T, class MemorySpace>
struct gustavson_products {
  gustavson_operands<T, MemorySpace> op;

  template <class F>
  void operator()(local_index i, F& f) const {
    // Loop bounds and the shift in registers: f's stores could alias them for the compiler.
    const local_index shift = op.b_offset;
    const offset_type end = op.a_ptr(i + 1);
    for (offset_type e = op.a_ptr(i); e < end; ++e) {
      const local_index s = op.source(op.a_col(e));
      const T a = op.a_val(e);
      if (s >= 0) {
        const offset_type last = op.b_ptr(s + 1);
        for (offset_type g = op.b_ptr(s); g < last; ++g) f(op.b_col(g) + shift, a, op.b_val(g));
      } else {
        const local_index h = -s - 1;
        const offset_type last = op.h_ptr(h + 1);
        for (offset_type g = op.h_ptr(h); g < last; ++g) f(op.h_col(g), a, op.h_val(g));
      }
    }
  }
};

/// Sort keys[0, n) ascending: insertion sort for short rows, std::sort for long ones.
template <class K>
void sort_row_keys(K* keys, std::int64_t n) {
  if (n > insertion_sort_limit) std::sort(keys, keys + n);
  else kernels::sort_keys(keys, n);
}

/// Index of the lowest set bit of a nonzero word.
inline int lowest_bit(std::uint64_t word) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_ctzll(word);
#else
  int b = 0;
  for (; (word & 1) == 0; word >>= 1) ++b;
  return b;
#endif
}

}  // namespace detail

/// C = A * B^ over `ring` (see gustavson_operands). Rows of C are sorted by column.
template <class ExecSpace, class T, class MemorySpace, class Semiring>
gustavson_result<T, MemorySpace> gustavson(const ExecSpace& exec, const gustavson_operands<T, MemorySpace>& op,
                                           const Semiring& ring) {
  using detail::lowest_bit;
  using detail::sort_row_keys;
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible,
                "tessera::kernels::gustavson runs on host execution spaces only: its per-thread dense "
                "accumulators would exhaust a device's memory (use expand-sort-compress or Kokkos-Kernels)");
  const auto rows = static_cast<local_index>(op.a_ptr.extent(0) == 0 ? 0 : op.a_ptr.extent(0) - 1);
  const local_index width = op.width;
  const auto w = static_cast<std::size_t>(width);
  using policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<local_index>>;
  // The two passes over rows, scheduled dynamically: a row's work is its products, and a power-law
  // A whose hubs come first (a graph sorted by degree) gave the first thread most of them in equal
  // counts of rows. Each row is one work item either way: the same sums in the same order.
  using rows_policy = Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<local_index>>;

  gustavson_result<T, MemorySpace> out;
  out.row_ptr = Kokkos::View<offset_type*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::row_ptr")),
      static_cast<std::size_t>(rows) + 1);
  advise_huge_pages(out.row_ptr.data(), out.row_ptr.span() * sizeof(offset_type));

  // One accumulator per concurrent thread. marker(t, u) is the last row that thread t saw
  // column u in: row i in the symbolic pass, -(i + 2) in the numeric one, so neither pass
  // needs the markers cleared and -1 means "never".
  Kokkos::Experimental::UniqueToken<ExecSpace> token(exec);
  const auto threads = static_cast<std::size_t>(token.size());
  Kokkos::View<local_index*, MemorySpace> marker(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::marker")), threads * w);
  tessera::detail::deep_copy(exec, marker, local_index{-1});
  const detail::gustavson_products<T, MemorySpace> products{op};
  const auto row_ptr = out.row_ptr;

  // Symbolic: distinct columns per row, stored at row_ptr(i) and scanned in place below.
  Kokkos::parallel_for(
      "tessera::spgemm::symbolic", rows_policy(exec, 0, rows), [=](const local_index i) {
        const auto t = token.acquire();
        local_index* seen = marker.data() + static_cast<std::size_t>(t) * w;
        offset_type count = 0;
        auto visit = [&](local_index u, const T&, const T&) {
          // Branch-free: whether a column repeats is data-dependent, hence mispredicted on R-MAT rows.
          count += seen[u] != i ? 1 : 0;
          seen[u] = i;
        };
        products(i, visit);
        row_ptr(i) = count;
        token.release(t);
      });
  Kokkos::parallel_scan(
      "tessera::spgemm::row_ptr", policy(exec, 0, rows + 1),
      [=](const local_index i, offset_type& running, const bool final) {
        const offset_type count = i < rows ? row_ptr(i) : 0;
        if (final) row_ptr(i) = running;
        running += count;
      });

  // The columns C uses (any thread saw them) and their positions among them: C's column map
  // keeps global order because accumulator columns are numbered in it.
  Kokkos::View<local_index*, MemorySpace> position(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::position")), w + 1);
  Kokkos::parallel_scan(
      "tessera::spgemm::used", policy(exec, 0, width + 1),
      [=](const local_index u, local_index& running, const bool final) {
        bool seen = false;
        if (u < width)
          for (std::size_t t = 0; t < threads; ++t) seen = seen || marker(t * w + static_cast<std::size_t>(u)) >= 0;
        if (final) position(u) = seen ? running : -1 - running;
        running += seen ? 1 : 0;
      });
  offset_type nnz = 0;
  local_index used = 0;
  tessera::detail::deep_copy(exec, nnz, Kokkos::subview(row_ptr, static_cast<std::size_t>(rows)));
  exec.fence();
  {
    local_index tail = 0;
    tessera::detail::deep_copy(exec, tail, Kokkos::subview(position, w));
    exec.fence();
    used = tail < 0 ? -1 - tail : tail;  // u = width is never seen: -1 - (count of used columns)
  }
  out.used = Kokkos::View<local_index*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::used")),
      static_cast<std::size_t>(used));
  const auto used_cols = out.used;
  Kokkos::parallel_for(
      "tessera::spgemm::used_columns", policy(exec, 0, width), [=](const local_index u) {
        if (position(u) >= 0) used_cols(position(u)) = u;
      });

  // Numeric: accumulate each row, collect its columns where C's row goes, sort them there,
  // then write values and compressed columns.
  out.col_idx = Kokkos::View<local_index*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::col_idx")),
      static_cast<std::size_t>(nnz));
  out.values = Kokkos::View<T*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::values")),
      static_cast<std::size_t>(nnz));
  // C is written once, row by row: fault it in 2 MiB pages.
  advise_huge_pages(out.col_idx.data(), out.col_idx.span() * sizeof(local_index));
  advise_huge_pages(out.values.data(), out.values.span() * sizeof(T));
  // Where the semiring names its additive identity (semiring_with_identity), every accumulator
  // entry holds it between rows (each row puts it back as it reads its sums, where any row is
  // long), and the long rows add every product unconditionally: choosing per product between
  // "first" and "fold" cost R-MAT 16 products 40% of their time (same sums: add(identity, p) == p).
  // (semiring_with_identity's requirement, spelled here: ops/semiring.hpp is a layer above kernels/.)
  constexpr bool from_identity = requires(const Semiring& r) {
    { r.template identity<T>() } -> std::convertible_to<T>;
  };
  const T identity = [&] {
    if constexpr (from_identity) return static_cast<T>(ring.template identity<T>());
    else return T{};
  }();
  Kokkos::View<T*, MemorySpace> accumulator(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::accumulator")),
                                            threads * w);
  tessera::detail::deep_copy(exec, accumulator, identity);
  // Rows long against the column space (R-MAT's) are not sorted: a per-thread bitmap of the row's
  // columns is read back in order (a word per 64 columns, then one step per entry). Sorting them
  // took most of an R-MAT product.
  const std::size_t words = (w + 63) / 64;
  Kokkos::View<std::uint64_t*, MemorySpace> bitmap("tessera::spgemm::bitmap", threads * words);
  // Where C uses every accumulator column (banded products), positions are the columns themselves.
  const bool remap = used != width;
  // The rows that take the bitmap path.
  const auto long_row = [=](const offset_type expected) {
    return expected > insertion_sort_limit && static_cast<std::size_t>(expected) * 8 >= words;
  };
  // Whether any row takes it: only then must the short rows put the identity back (a Laplacian
  // product, all short rows, measured 4% slower doing so).
  std::int64_t long_rows = 0;
  if constexpr (from_identity)
    Kokkos::parallel_reduce(
        "tessera::spgemm::long_rows", policy(exec, 0, rows),
        [=](const local_index i, std::int64_t& n) { n += long_row(row_ptr(i + 1) - row_ptr(i)) ? 1 : 0; }, long_rows);
  const bool restore_identity = long_rows > 0;
  const auto col_idx = out.col_idx;
  const auto values = out.values;
  Kokkos::parallel_for(
      "tessera::spgemm::numeric", rows_policy(exec, 0, rows), [=](const local_index i) {
        const auto t = token.acquire();
        local_index* seen = marker.data() + static_cast<std::size_t>(t) * w;
        T* sum = accumulator.data() + static_cast<std::size_t>(t) * w;
        const local_index tag = -i - 2;
        local_index* columns = col_idx.data() + row_ptr(i);
        T* row_values = values.data() + row_ptr(i);
        const offset_type expected = row_ptr(i + 1) - row_ptr(i);
        // Long rows: the bitmap path.
        if (long_row(expected)) {
          std::uint64_t* bits = bitmap.data() + static_cast<std::size_t>(t) * words;
          // The bit says whether the column was seen in this row; branch-free, as above (the
          // accumulator is initialised once, so its stale entries are always determinate).
          auto visit = [&](local_index u, const T& a, const T& b) {
            std::uint64_t& word = bits[u >> 6];
            const std::uint64_t bit = std::uint64_t{1} << (u & 63);
            const T p = ring.multiply(a, b);
            if constexpr (from_identity) {
              sum[u] = ring.add(sum[u], p);
            } else {
              const T folded = ring.add(sum[u], p);
              sum[u] = (word & bit) != 0 ? folded : p;
            }
            word |= bit;
          };
          products(i, visit);
          std::int64_t j = 0;
          for (std::size_t word = 0; word < words; ++word) {
            std::uint64_t set = bits[word];
            if (set == 0) continue;
            bits[word] = 0;  // clear for the thread's next row
            for (; set != 0; set &= set - 1) {
              const auto u = static_cast<local_index>(word * 64 + static_cast<std::size_t>(lowest_bit(set)));
              row_values[j] = sum[u];
              if constexpr (from_identity) sum[u] = identity;
              columns[j] = remap ? position(u) : u;
              ++j;
            }
          }
          token.release(t);
          return;
        }
        std::int64_t count = 0;
        auto visit = [&](local_index u, const T& a, const T& b) {
          if (seen[u] != tag) {
            seen[u] = tag;
            sum[u] = ring.multiply(a, b);
            columns[count++] = u;
          } else {
            sum[u] = ring.add(sum[u], ring.multiply(a, b));
          }
        };
        products(i, visit);
        sort_row_keys(columns, count);
        for (std::int64_t j = 0; j < count; ++j) {
          const local_index u = columns[j];
          row_values[j] = sum[u];
          if constexpr (from_identity)
            if (restore_identity) sum[u] = identity;
          columns[j] = remap ? position(u) : u;
        }
        token.release(t);
      });
  exec.fence();
  return out;
}


}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_GUSTAVSON_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_GUSTAVSON_HPP
#endif
