#pragma once
/// @file
/// Sorting the entries of CSR rows by column, values alongside, on Kokkos, in place. Rows of up
/// to insertion_sort_limit entries use insertion sort (fast on the short rows of most products,
/// linear on rows already nearly in order); longer rows are radix-sorted where the execution
/// space runs on the host (linear time, a buffer per long row), else heap-sorted (no extra memory,
/// no recursion: fine on any device).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SORT_ROWS_HPP
#endif

#include "../core/index_types.hpp"

#include "../core/device_algorithms.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessera::kernels {

/// Rows at most this long are insertion-sorted; longer ones heap-sorted.
inline constexpr std::int64_t insertion_sort_limit = 32;

namespace detail {
/// The values a sort moves alongside its keys: an array, or nothing (keys-only sorts).
template <class V>
struct carried_values {
  V* values;
  KOKKOS_INLINE_FUNCTION V get(std::int64_t i) const { return values[i]; }
  KOKKOS_INLINE_FUNCTION void set(std::int64_t i, const V& v) const { values[i] = v; }
};
struct no_values {
  struct nothing {};
  KOKKOS_INLINE_FUNCTION nothing get(std::int64_t) const { return {}; }
  KOKKOS_INLINE_FUNCTION void set(std::int64_t, nothing) const {}
};

template <class K, class Carried>
KOKKOS_INLINE_FUNCTION void heap_sort(K* keys, const Carried& carried, std::int64_t n) {
  auto exchange = [&](std::int64_t a, std::int64_t b) {
    const K k = keys[a];
    keys[a] = keys[b];
    keys[b] = k;
    const auto v = carried.get(a);
    carried.set(a, carried.get(b));
    carried.set(b, v);
  };
  auto sift = [&](std::int64_t root, std::int64_t end) {
    while (2 * root + 1 < end) {
      std::int64_t child = 2 * root + 1;
      if (child + 1 < end && keys[child] < keys[child + 1]) ++child;
      if (!(keys[root] < keys[child])) return;
      exchange(root, child);
      root = child;
    }
  };
  for (std::int64_t start = n / 2 - 1; start >= 0; --start) sift(start, n);
  for (std::int64_t end = n - 1; end > 0; --end) {
    exchange(0, end);
    sift(0, end);
  }
}

template <class K, class Carried>
KOKKOS_INLINE_FUNCTION void insertion_sort(K* keys, const Carried& carried, std::int64_t n) {
  for (std::int64_t i = 1; i < n; ++i) {
    const K k = keys[i];
    // In place already: no value read, nothing written (a sorted row, such as a vendor product's,
    // costs one read of its keys; writing every entry back made checking cuSPARSE's 55 M-entry
    // Laplacian product a quarter of the SpGEMM on an H100).
    if (!(k < keys[i - 1])) continue;
    const auto v = carried.get(i);
    std::int64_t j = i;
    for (; j > 0 && k < keys[j - 1]; --j) {
      keys[j] = keys[j - 1];
      carried.set(j, carried.get(j - 1));
    }
    keys[j] = k;
    carried.set(j, v);
  }
}
}  // namespace detail

/// Sort keys[0, n) ascending, moving values alongside (heap sort: no extra memory, no recursion).
template <class K, class V>
KOKKOS_INLINE_FUNCTION void heap_sort(K* keys, V* values, std::int64_t n) {
  detail::heap_sort(keys, detail::carried_values<V>{values}, n);
}

/// Sort keys[0, n) ascending, moving values alongside (insertion sort: for short runs).
template <class K, class V>
KOKKOS_INLINE_FUNCTION void insertion_sort(K* keys, V* values, std::int64_t n) {
  detail::insertion_sort(keys, detail::carried_values<V>{values}, n);
}

/// Sort keys[0, n) ascending, no values: insertion sort for short runs, else heap sort (no extra
/// memory, no recursion: fine on any device).
template <class K>
KOKKOS_INLINE_FUNCTION void sort_keys(K* keys, std::int64_t n) {
  if (n <= insertion_sort_limit) detail::insertion_sort(keys, detail::no_values{}, n);
  else detail::heap_sort(keys, detail::no_values{}, n);
}

/// Sort keys[0, n) ascending, values alongside, by all threads of a team: a bitonic network
/// (n log^2 n compare-exchanges, n / 2 of them at once between team barriers), for the long runs
/// that one device thread would sort serially at memory latency per step. Positions past n act
/// as +infinity, so n need not be a power of two. Keys must be distinct for a unique result.
template <class Member, class K, class V>
KOKKOS_INLINE_FUNCTION void team_bitonic_sort(const Member& team, K* keys, V* values, std::int64_t n) {
  std::int64_t padded = 1;
  int levels = 0;
  while (padded < n) {
    padded <<= 1;
    ++levels;
  }
  for (int i = 0; i < levels; ++i)
    for (int j = 0; j <= i; ++j) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, padded / 2), [&](const std::int64_t k) {
        const int shift = i - j;
        const std::int64_t box = std::int64_t{2} << shift;
        const std::int64_t box_start = (k >> shift) << (1 + shift);
        const std::int64_t offset = k - (box_start >> 1);
        const std::int64_t first = box_start + offset;
        // The first stage of each level compares mirror positions in a box, later ones a fixed distance.
        const std::int64_t second = j == 0 ? box_start + box - 1 - offset : first + box / 2;
        if (second < n && keys[second] < keys[first]) {
          const K key = keys[first];
          keys[first] = keys[second];
          keys[second] = key;
          const V value = values[first];
          values[first] = values[second];
          values[second] = value;
        }
      });
      team.team_barrier();
    }
}

/// Sort keys[0, n) ascending, values alongside: insertion sort for short runs, else heap sort.
template <class K, class V>
KOKKOS_INLINE_FUNCTION void sort_by_key(K* keys, V* values, std::int64_t n) {
  if (n <= insertion_sort_limit) {
    insertion_sort(keys, values, n);
    return;
  }
  bool sorted = true;  // heap sort rewrites a sorted run; one look first
  for (std::int64_t i = 1; i < n && sorted; ++i) sorted = !(keys[i] < keys[i - 1]);
  if (!sorted) heap_sort(keys, values, n);
}

/// Sort keys[0, n) ascending (non-negative integers), values alongside, on the host: insertion
/// sort for short runs, else a least-significant-digit radix sort by bytes through a buffer, with only as many passes as the largest key has bytes (linear time: rows of thousands
/// of entries sort several times faster than by comparison).
template <class K, class V>
void host_sort_by_key(K* keys, V* values, std::int64_t n) {
  static_assert(std::is_integral_v<K>, "host_sort_by_key: integer keys");
  if (n <= insertion_sort_limit) {
    insertion_sort(keys, values, n);
    return;
  }
  K largest = 0;
  bool sorted = true;
  for (std::int64_t i = 0; i < n; ++i) {
    largest = keys[i] > largest ? keys[i] : largest;
    sorted = sorted && (i == 0 || !(keys[i] < keys[i - 1]));
  }
  if (sorted) return;
  // A buffer per call, not per thread: no state survives the call (thread_local containers in a
  // kernel outlive it on pooled threads and are not portable across back-ends). Rows here are
  // longer than insertion_sort_limit, so the allocation is amortised over the row's passes.
  std::vector<K> key_buffer(static_cast<std::size_t>(n));
  std::vector<V> value_buffer(static_cast<std::size_t>(n));
  K* from_keys = keys;
  V* from_values = values;
  K* to_keys = key_buffer.data();
  V* to_values = value_buffer.data();
  using U = std::make_unsigned_t<K>;
  for (unsigned shift = 0; shift < 8 * sizeof(K) && (static_cast<U>(largest) >> shift) != 0; shift += 8) {
    std::int64_t start[257] = {};
    for (std::int64_t i = 0; i < n; ++i) ++start[((static_cast<U>(from_keys[i]) >> shift) & 0xff) + 1];
    for (int d = 0; d < 256; ++d) start[d + 1] += start[d];
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t at = start[(static_cast<U>(from_keys[i]) >> shift) & 0xff]++;
      to_keys[at] = from_keys[i];
      to_values[at] = from_values[i];
    }
    std::swap(from_keys, to_keys);
    std::swap(from_values, to_values);
  }
  if (from_keys != keys) {
    std::copy(from_keys, from_keys + n, keys);
    std::copy(from_values, from_values + n, values);
  }
}

/// The rows of `row_ptr` longer than `by_thread` entries, ascending, in the row pointers' memory space.
template <class ExecSpace, class RowPtr>
Kokkos::View<std::int64_t*, typename RowPtr::memory_space> list_long_rows(const ExecSpace& exec, const RowPtr& row_ptr,
                                                                          std::int64_t by_thread) {
  using range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  const auto rows = static_cast<std::int64_t>(row_ptr.extent(0)) - 1;
  std::int64_t count = 0;
  Kokkos::parallel_reduce("tessera::count_long_rows", range(exec, 0, rows > 0 ? rows : 0),
                          KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& acc) {
                            acc += static_cast<std::int64_t>(row_ptr(r + 1) - row_ptr(r)) > by_thread ? 1 : 0;
                          },
                          count);
  Kokkos::View<std::int64_t*, typename RowPtr::memory_space> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::long_rows"),
                                                                 static_cast<std::size_t>(count));
  if (count == 0) return out;
  Kokkos::parallel_scan("tessera::list_long_rows", range(exec, 0, rows),
                        KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& before, const bool final) {
                          if (static_cast<std::int64_t>(row_ptr(r + 1) - row_ptr(r)) > by_thread) {
                            if (final) out(before) = r;
                            ++before;
                          }
                        });
  return out;
}

/// Threads a team sorts one long row with (team_bitonic_sort): a GPU block; one on host spaces.
template <class ExecSpace>
inline constexpr int row_sort_team = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : 256;

/// Rows longer than this are sorted by a team where the device algorithms run.
inline constexpr std::int64_t team_sorted_row = 64;

namespace detail {
/// sort_rows' device path: rows up to team_sorted_row by their own thread, longer ones by a team.
template <class ExecSpace, class RowPtr, class Cols, class Values>
void sort_rows_on_device(const ExecSpace& exec, const RowPtr& row_ptr, const Cols& cols, const Values& values) {
  const auto rows = static_cast<std::int64_t>(row_ptr.extent(0)) - 1;
  const std::int64_t by_thread = team_sorted_row;
  Kokkos::parallel_for(
      "tessera::sort_rows", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, rows),
      KOKKOS_LAMBDA(const std::int64_t r) {
        const auto begin = row_ptr(r);
        const auto length = static_cast<std::int64_t>(row_ptr(r + 1) - begin);
        if (length <= by_thread) sort_by_key(cols.data() + begin, values.data() + begin, length);
      });
  const auto long_rows = list_long_rows(exec, row_ptr, by_thread);
  if (long_rows.extent(0) == 0) return;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for("tessera::sort_rows_by_team",
                       team_policy(exec, static_cast<int>(long_rows.extent(0)), row_sort_team<ExecSpace>),
                       KOKKOS_LAMBDA(const typename team_policy::member_type& m) {
                         const std::int64_t r = long_rows(m.league_rank());
                         const auto begin = row_ptr(r);
                         const auto length = static_cast<std::int64_t>(row_ptr(r + 1) - begin);
                         // Rows that come sorted (a vendor product's) cost one look, not log^2 n passes.
                         int descents = 0;
                         Kokkos::parallel_reduce(
                             Kokkos::TeamThreadRange(m, length - 1),
                             [&](const std::int64_t k, int& acc) { acc += cols(begin + k + 1) < cols(begin + k) ? 1 : 0; },
                             descents);
                         if (descents == 0) return;
                         team_bitonic_sort(m, cols.data() + begin, values.data() + begin, length);
                       });
}
}  // namespace detail

/// Sort every row of a CSR matrix by column, values alongside, in parallel over rows (in place).
/// `row_ptr` has rows + 1 entries; `cols` and `values` are the matrix's entries (non-negative
/// integer columns). On execution spaces that run on the host, long rows are radix-sorted;
/// elsewhere rows of up to team_sorted_row entries are sorted by their own thread and longer ones
/// by a team (columns are distinct within a row, so the result is unique).
template <class ExecSpace, class RowPtr, class Cols, class Values>
void sort_rows(const ExecSpace& exec, const RowPtr& row_ptr, const Cols& cols, const Values& values) {
  const auto rows = static_cast<std::int64_t>(row_ptr.extent(0)) - 1;
  if (rows <= 0) return;
  const Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>> policy(exec, 0, rows);
  if constexpr (!uses_device_algorithms<ExecSpace>) {
    Kokkos::parallel_for("tessera::sort_rows", policy, [=](const std::int64_t r) {
      const auto begin = row_ptr(r);
      host_sort_by_key(cols.data() + begin, values.data() + begin, static_cast<std::int64_t>(row_ptr(r + 1) - begin));
    });
  } else {
    (void)policy;
    detail::sort_rows_on_device(exec, row_ptr, cols, values);
  }
  exec.fence();
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SORT_ROWS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SORT_ROWS_HPP
#endif
