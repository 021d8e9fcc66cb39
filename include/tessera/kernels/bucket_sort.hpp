#pragma once
/// @file
/// Node-local kernels that group entries by a primary key (a row or a column),
/// sort them by a secondary key within each group, and combine duplicates.
///
/// These three kernels are the whole of local assembly and of every storage
/// conversion (COO -> CSR: group by row; CSR -> CSC: group by column), so they
/// are written once, for any execution space.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_BUCKET_SORT_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../core/device_algorithms.hpp"
#include "../core/index_types.hpp"
#include "sort_rows.hpp"
#include "sorted_search.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace tessera::kernels {

/// Entries grouped by primary key: group g holds keys/values [ptr(g), ptr(g+1)).
template <class Key, class Value, class MemorySpace>
struct grouped_entries {
  Kokkos::View<offset_type*, MemorySpace> ptr;
  Kokkos::View<Key*, MemorySpace> keys;
  Kokkos::View<Value*, MemorySpace> values;
};

namespace detail {
/// A secondary key tagged with the entry's input position: unique, so sorting by it gives one
/// order whatever order the parallel scatter wrote the group in.
template <class Key>
struct tagged_key {
  Key key;
  offset_type origin;
  KOKKOS_INLINE_FUNCTION bool operator<(const tagged_key& other) const {
    return key < other.key || (key == other.key && origin < other.origin);
  }
};

/// The host scatter of group_and_sort: a stable counting sort in chunks (see there). Fills ptr
/// (zero on entry) with the group pointers and tags/vals with the entries, each group in input order.
template <class ExecSpace, class Key, class Value, class MemorySpace>
void stable_host_scatter(const ExecSpace& exec, local_index num_groups, const Kokkos::View<const local_index*, MemorySpace>& primary,
                         const Kokkos::View<const Key*, MemorySpace>& secondary,
                         const Kokkos::View<const Value*, MemorySpace>& values,
                         const Kokkos::View<offset_type*, MemorySpace>& ptr, const Kokkos::View<tagged_key<Key>*, MemorySpace>& tags,
                         const Kokkos::View<Value*, MemorySpace>& vals) {
  using range = Kokkos::RangePolicy<ExecSpace>;
  const auto n = static_cast<std::size_t>(primary.extent(0));
  const auto groups = static_cast<std::size_t>(num_groups);
  // One chunk per thread, at least 4096 entries each, and counters (chunks x groups) no larger
  // than the entries (plus a little): a rank with many groups and few entries uses one chunk.
  std::size_t chunks = std::min<std::size_t>(static_cast<std::size_t>(exec.concurrency()), n / 4096 + 1);
  while (chunks > 1 && chunks * groups > 2 * n + 65536) --chunks;
  // first(c, g): entries of chunk c in group g, then the first slot chunk c writes in group g.
  Kokkos::View<offset_type**, Kokkos::LayoutRight, MemorySpace> first(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::group_chunk_slots"), chunks, groups);
  const auto begin_of = [=](std::size_t c) { return n * c / chunks; };
  Kokkos::parallel_for("tessera::group_count", range(exec, 0, chunks), [=](const std::size_t c) {
    offset_type* count = &first(c, 0);
    for (std::size_t g = 0; g < groups; ++g) count[g] = 0;
    for (std::size_t i = begin_of(c); i < begin_of(c + 1); ++i) ++count[primary(i)];
  });
  Kokkos::parallel_for("tessera::group_total", range(exec, 0, groups), [=](const std::size_t g) {
    offset_type total = 0;
    for (std::size_t c = 0; c < chunks; ++c) total += first(c, g);
    ptr(g + 1) = total;
  });
  Kokkos::parallel_scan("tessera::group_scan", range(exec, 0, groups + 1),
                        [=](const std::size_t g, offset_type& partial, const bool final) {
                          partial += ptr(g);
                          if (final) ptr(g) = partial;
                        });
  Kokkos::parallel_for("tessera::group_slots", range(exec, 0, groups), [=](const std::size_t g) {
    offset_type slot = ptr(g);
    for (std::size_t c = 0; c < chunks; ++c) {
      const offset_type count = first(c, g);
      first(c, g) = slot;
      slot += count;
    }
  });
  Kokkos::parallel_for("tessera::group_scatter", range(exec, 0, chunks), [=](const std::size_t c) {
    offset_type* cursor = &first(c, 0);
    for (std::size_t i = begin_of(c); i < begin_of(c + 1); ++i) {
      const offset_type slot = cursor[primary(i)]++;
      tags(slot) = tagged_key<Key>{secondary(i), static_cast<offset_type>(i)};
      vals(slot) = values(i);
    }
  });
}

/// The device scatter of group_and_sort: counts and slots by atomics, so each group's order is the
/// scheduler's (group_and_sort then sorts by input position).
template <class ExecSpace, class Key, class Value, class MemorySpace>
void atomic_scatter(const ExecSpace& exec, local_index num_groups, const Kokkos::View<const local_index*, MemorySpace>& primary,
                    const Kokkos::View<const Key*, MemorySpace>& secondary, const Kokkos::View<const Value*, MemorySpace>& values,
                    const Kokkos::View<offset_type*, MemorySpace>& ptr, const Kokkos::View<tagged_key<Key>*, MemorySpace>& tags,
                    const Kokkos::View<Value*, MemorySpace>& vals) {
  using range = Kokkos::RangePolicy<ExecSpace>;
  const auto n = static_cast<offset_type>(primary.extent(0));
  Kokkos::parallel_for("tessera::group_count", range(exec, 0, n), KOKKOS_LAMBDA(const offset_type i) {
    Kokkos::atomic_fetch_add(&ptr(primary(i) + 1), offset_type{1});
  });
  Kokkos::parallel_scan("tessera::group_scan", range(exec, 0, static_cast<offset_type>(num_groups) + 1),
                        KOKKOS_LAMBDA(const offset_type g, offset_type& partial, const bool final) {
                          partial += ptr(g);
                          if (final) ptr(g) = partial;
                        });
  Kokkos::View<offset_type*, MemorySpace> cursor(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::group_cursor"),
                                                 static_cast<std::size_t>(num_groups));
  tessera::detail::deep_copy(exec, cursor, Kokkos::subview(ptr, std::make_pair(std::size_t{0}, static_cast<std::size_t>(num_groups))));
  Kokkos::parallel_for("tessera::group_scatter", range(exec, 0, n), KOKKOS_LAMBDA(const offset_type i) {
    const offset_type slot = Kokkos::atomic_fetch_add(&cursor(primary(i)), offset_type{1});
    tags(slot) = tagged_key<Key>{secondary(i), i};
    vals(slot) = values(i);
  });
}
}  // namespace detail

namespace detail {

/// group_and_sort's sort of the groups longer than `by_thread`: one team per group
/// (team_bitonic_sort), keys copied out of the tags.
template <class ExecSpace, class Key, class Value, class MemorySpace>
void sort_long_groups(const ExecSpace& exec, std::int64_t by_thread, const Kokkos::View<offset_type*, MemorySpace>& ptr,
                      const Kokkos::View<tagged_key<Key>*, MemorySpace>& tags, const Kokkos::View<Value*, MemorySpace>& vals,
                      const Kokkos::View<Key*, MemorySpace>& keys) {
  const auto long_groups = list_long_rows(exec, ptr, by_thread);
  if (long_groups.extent(0) == 0) return;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for("tessera::group_sort_by_team",
                       team_policy(exec, static_cast<int>(long_groups.extent(0)), row_sort_team<ExecSpace>),
                       KOKKOS_LAMBDA(const typename team_policy::member_type& m) {
                         const std::int64_t g = long_groups(m.league_rank());
                         const offset_type begin = ptr(g);
                         const auto length = static_cast<std::int64_t>(ptr(g + 1) - begin);
                         team_bitonic_sort(m, tags.data() + begin, vals.data() + begin, length);
                         m.team_barrier();
                         Kokkos::parallel_for(Kokkos::TeamThreadRange(m, length),
                                              [&](const std::int64_t k) { keys(begin + k) = tags(begin + k).key; });
                       });
}
}  // namespace detail

/// Counting sort by `primary` (each in [0, num_groups)), then by `secondary` within each group,
/// entries with equal (primary, secondary) in input order: the same result on every execution
/// space and thread count, so duplicates are combined in input order everywhere.
///
/// The scatter into groups:
///  - on host spaces, a stable counting sort: the input is cut into one chunk per thread, each
///    chunk counts its groups and scatters its own entries in order into slots reserved for it
///    (no atomics, no shared cursors, so it scales with threads; the chunks' counters cost
///    chunks x groups offsets, and fewer chunks are used when that would exceed the entries);
///  - on devices, atomics (its order is the scheduler's).
/// Either way each entry carries its input position and every group is sorted by (secondary,
/// position): insertion sort for short groups and for groups already in order (linear: the host
/// scatter keeps input order, and input that comes sorted stays sorted), heap sort otherwise
/// (n log n, no extra memory, no recursion, on any device).
template <class ExecSpace, class Key, class Value, class MemorySpace>
grouped_entries<Key, Value, MemorySpace> group_and_sort(const ExecSpace& exec, local_index num_groups,
                                                        Kokkos::View<const local_index*, MemorySpace> primary,
                                                        Kokkos::View<const Key*, MemorySpace> secondary,
                                                        Kokkos::View<const Value*, MemorySpace> values) {
  using range = Kokkos::RangePolicy<ExecSpace>;
  using tagged = detail::tagged_key<Key>;
  const auto n = static_cast<offset_type>(primary.extent(0));
  grouped_entries<Key, Value, MemorySpace> out;
  out.ptr = Kokkos::View<offset_type*, MemorySpace>("tessera::group_ptr", static_cast<std::size_t>(num_groups) + 1);
  out.keys = Kokkos::View<Key*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::group_keys"), n);
  out.values = Kokkos::View<Value*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::group_values"), n);
  Kokkos::View<tagged*, MemorySpace> tags(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::group_tags"), n);
  auto ptr = out.ptr;
  auto keys = out.keys;
  auto vals = out.values;

  // Two functions, not two branches with kernels: nvcc refuses a device lambda's first capture
  // inside `if constexpr`.
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible)
    detail::stable_host_scatter(exec, num_groups, primary, secondary, values, ptr, tags, vals);
  else
    detail::atomic_scatter(exec, num_groups, primary, secondary, values, ptr, tags, vals);
  // Groups longer than this are sorted by a team where the device algorithms run (a power-law
  // column of thousands of entries took one GPU thread tens of milliseconds), by their own thread
  // elsewhere.
  const std::int64_t by_thread = uses_device_algorithms<ExecSpace> ? team_sorted_row : INT64_MAX;
  Kokkos::parallel_for("tessera::group_sort", range(exec, 0, num_groups), KOKKOS_LAMBDA(const local_index g) {
    const offset_type begin = ptr(g);
    const auto length = static_cast<std::int64_t>(ptr(g + 1) - begin);
    if (length > by_thread) return;
    bool in_order = true;
    for (std::int64_t k = 1; k < length && in_order; ++k) in_order = tags(begin + k - 1) < tags(begin + k);
    if (!in_order) {
      if (length <= insertion_sort_limit) insertion_sort(tags.data() + begin, vals.data() + begin, length);
      else heap_sort(tags.data() + begin, vals.data() + begin, length);
    }
    for (std::int64_t k = 0; k < length; ++k) keys(begin + k) = tags(begin + k).key;
  });
  if constexpr (uses_device_algorithms<ExecSpace>) detail::sort_long_groups(exec, by_thread, ptr, tags, vals, keys);
  return out;
}

namespace detail {
// The kernels of combine_duplicates that run no user code live in functions not templated on the
// combine, and the one kernel that calls it is a named functor: the combine's type is never a
// template argument of a function holding an extended lambda. On CUDA the combine must still be
// declared at namespace or class scope: a kernel whose template arguments name a type local to a
// function cannot be launched (docs/gpu.md, "Rules nvcc imposes").

/// How many entries repeat the key before them, over all groups.
template <class ExecSpace, class Key, class Value, class MemorySpace>
offset_type count_duplicates(const ExecSpace& exec, const grouped_entries<Key, Value, MemorySpace>& in) {
  const auto num_groups = static_cast<offset_type>(in.ptr.extent(0)) - 1;
  const auto in_ptr = in.ptr;
  const auto in_keys = in.keys;
  offset_type duplicates = 0;
  Kokkos::parallel_reduce("tessera::count_duplicates", Kokkos::RangePolicy<ExecSpace>(exec, 0, num_groups),
                          KOKKOS_LAMBDA(const offset_type g, offset_type& acc) {
                            for (offset_type k = in_ptr(g) + 1; k < in_ptr(g + 1); ++k)
                              if (in_keys(k) == in_keys(k - 1)) ++acc;
                          },
                          duplicates);
  return duplicates;
}

/// Group pointers after combining: each group keeps one entry per distinct key.
template <class ExecSpace, class Key, class Value, class MemorySpace>
Kokkos::View<offset_type*, MemorySpace> merged_pointers(const ExecSpace& exec,
                                                        const grouped_entries<Key, Value, MemorySpace>& in) {
  using range = Kokkos::RangePolicy<ExecSpace>;
  const auto num_groups = static_cast<offset_type>(in.ptr.extent(0)) - 1;
  const auto in_ptr = in.ptr;
  const auto in_keys = in.keys;
  Kokkos::View<offset_type*, MemorySpace> ptr("tessera::merged_ptr", static_cast<std::size_t>(num_groups) + 1);
  Kokkos::parallel_for("tessera::count_unique", range(exec, 0, num_groups), KOKKOS_LAMBDA(const offset_type g) {
    offset_type unique = 0;
    for (offset_type k = in_ptr(g); k < in_ptr(g + 1); ++k)
      if (k == in_ptr(g) || in_keys(k) != in_keys(k - 1)) ++unique;
    ptr(g + 1) = unique;
  });
  Kokkos::parallel_scan("tessera::merged_scan", range(exec, 0, num_groups + 1),
                        KOKKOS_LAMBDA(const offset_type g, offset_type& partial, const bool final) {
                          partial += ptr(g);
                          if (final) ptr(g) = partial;
                        });
  return ptr;
}

/// One group's entries, equal keys combined left to right (in input order after group_and_sort).
template <class Key, class Value, class MemorySpace, class Combine>
struct merge_duplicates {
  Kokkos::View<const offset_type*, MemorySpace> in_ptr;
  Kokkos::View<const Key*, MemorySpace> in_keys;
  Kokkos::View<const Value*, MemorySpace> in_vals;
  Kokkos::View<const offset_type*, MemorySpace> ptr;
  Kokkos::View<Key*, MemorySpace> keys;
  Kokkos::View<Value*, MemorySpace> vals;
  Combine combine;

  KOKKOS_INLINE_FUNCTION void operator()(const offset_type g) const {
    offset_type w = ptr(g) - 1;
    for (offset_type k = in_ptr(g); k < in_ptr(g + 1); ++k) {
      if (k == in_ptr(g) || in_keys(k) != in_keys(k - 1)) {
        ++w;
        keys(w) = in_keys(k);
        vals(w) = in_vals(k);
      } else {
        vals(w) = combine(vals(w), in_vals(k));
      }
    }
  }
};
}  // namespace detail

/// Combine entries with equal keys inside each group (groups must be sorted by key), left to
/// right: after group_and_sort, in input order.
template <class ExecSpace, class Key, class Value, class MemorySpace, class Combine>
grouped_entries<Key, Value, MemorySpace> combine_duplicates(const ExecSpace& exec,
                                                            const grouped_entries<Key, Value, MemorySpace>& in,
                                                            Combine combine) {
  const offset_type duplicates = detail::count_duplicates(exec, in);
  if (duplicates == 0) return in;
  grouped_entries<Key, Value, MemorySpace> out;
  out.ptr = detail::merged_pointers(exec, in);
  const offset_type n = static_cast<offset_type>(in.keys.extent(0)) - duplicates;
  out.keys = Kokkos::View<Key*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::merged_keys"), n);
  out.values = Kokkos::View<Value*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::merged_values"), n);
  const auto num_groups = static_cast<offset_type>(in.ptr.extent(0)) - 1;
  Kokkos::parallel_for("tessera::merge", Kokkos::RangePolicy<ExecSpace>(exec, 0, num_groups),
                       detail::merge_duplicates<Key, Value, MemorySpace, Combine>{
                           in.ptr, in.keys, in.values, out.ptr, out.keys, out.values, combine});
  return out;
}

/// Groups longer than this make the device algorithms expand by a search per entry instead of a
/// work item per group (on short, even groups, such as a Laplacian's rows, the latter is faster).
inline constexpr offset_type expand_by_search_beyond = 64;

namespace detail {
template <class ExecSpace, class MemorySpace>
offset_type longest_group(const ExecSpace& exec, const Kokkos::View<const offset_type*, MemorySpace>& ptr) {
  offset_type longest = 0;
  Kokkos::parallel_reduce(
      "tessera::longest_group", Kokkos::RangePolicy<ExecSpace>(exec, 0, ptr.extent(0) - 1),
      KOKKOS_LAMBDA(const std::size_t g, offset_type& most) {
        if (ptr(g + 1) - ptr(g) > most) most = ptr(g + 1) - ptr(g);
      },
      Kokkos::Max<offset_type>(longest));
  return longest;
}

/// A work item per entry, finding its group by binary search: a work item per group wrote a
/// skewed group (an R-MAT row of thousands of entries) one entry at a time, holding the launch.
template <class ExecSpace, class MemorySpace>
void expand_by_search(const ExecSpace& exec, const Kokkos::View<const offset_type*, MemorySpace>& ptr,
                      const Kokkos::View<local_index*, MemorySpace>& group) {
  const auto ends = static_cast<offset_type>(ptr.extent(0));
  Kokkos::parallel_for("tessera::expand_groups_by_search", Kokkos::RangePolicy<ExecSpace>(exec, 0, group.extent(0)),
                       KOKKOS_LAMBDA(const std::size_t k) {
                         const auto entry = static_cast<offset_type>(k);
                         group(k) = static_cast<local_index>(lower_bound_in(ptr, offset_type{0}, ends, entry + 1) - 1);
                       });
}
}  // namespace detail

/// The group index of every entry into `group` (ptr's last offset long): the inverse of a pointer
/// array.
template <class ExecSpace, class MemorySpace, class GroupView>
void expand_groups_into(const ExecSpace& exec, const Kokkos::View<const offset_type*, MemorySpace>& ptr, const GroupView& group) {
  const auto num_groups = static_cast<offset_type>(ptr.extent(0)) - 1;
  const Kokkos::View<local_index*, MemorySpace> out = group;
  if constexpr (uses_device_algorithms<ExecSpace>) {
    if (detail::longest_group(exec, ptr) > expand_by_search_beyond) {
      detail::expand_by_search(exec, ptr, out);
      return;
    }
  }
  Kokkos::parallel_for("tessera::expand_groups", Kokkos::RangePolicy<ExecSpace>(exec, 0, num_groups),
                       KOKKOS_LAMBDA(const offset_type g) {
                         for (offset_type k = ptr(g); k < ptr(g + 1); ++k) out(k) = static_cast<local_index>(g);
                       });
}

/// The number of entries ptr delimits (its last offset; fences `exec`).
template <class ExecSpace, class MemorySpace>
offset_type grouped_entries_count(const ExecSpace& exec, const Kokkos::View<const offset_type*, MemorySpace>& ptr) {
  offset_type n = 0;
  exec.fence();
  tessera::detail::deep_copy(n, Kokkos::subview(ptr, ptr.extent(0) - 1));
  return n;
}

/// The group index of every entry: the inverse of a pointer array.
template <class ExecSpace, class MemorySpace>
Kokkos::View<local_index*, MemorySpace> expand_groups(const ExecSpace& exec, Kokkos::View<const offset_type*, MemorySpace> ptr) {
  Kokkos::View<local_index*, MemorySpace> group(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::group_index"),
                                                grouped_entries_count(exec, ptr));
  expand_groups_into(exec, ptr, group);
  return group;
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_BUCKET_SORT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_BUCKET_SORT_HPP
#endif
