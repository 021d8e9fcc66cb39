#pragma once
/// @file
/// The SpMM kernel for wide parallel devices (GPUs): Y(rows, :) = A(rows, :) * X with the
/// work split by nonzeros, not by rows, and the k columns spread over vector lanes.
///
/// A thread per row leaves a GPU idle on power-law matrices (a few rows of thousands of entries
/// hold the whole launch back) and reads X with a row-length stride (uncoalesced). Here every
/// row is cut into segments of at most `segment_entries` nonzeros; a group of vector lanes
/// multiplies one segment by one tile of X's columns (consecutive lanes read consecutive columns
/// of a row of X: coalesced), and the tiles are a second parallel dimension, so a batch of
/// 65,536 images of 1,024 neurons still fills the device. A row of one segment writes Y
/// directly; the segments of a longer row write partial rows that a second pass adds in segment
/// order. No atomics: every entry of Y is the same sum, in the same order, on every execution
/// space and every run.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_BALANCED_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../core/device_algorithms.hpp"
#include "../core/index_types.hpp"
#include "spmm_row_groups.hpp"
#include "spmm_rows.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tessera::kernels {

/// How the rows of one SpMM are cut into segments of nonzeros; made once per row list (an SpMM
/// plan keeps it) and reused by every product of any width.
template <class MemorySpace>
struct spmm_row_schedule {
  /// Largest segment: short enough that a power-law row is spread over many lane groups, long
  /// enough that the partial rows of split rows stay a small fraction of Y.
  static constexpr offset_type segment_entries = 128;

  Kokkos::View<local_index*, MemorySpace> segment_row;  ///< row of Y each segment computes (a row id, not a position)
  Kokkos::View<offset_type*, MemorySpace> segment_begin;  ///< first entry of A
  Kokkos::View<local_index*, MemorySpace> segment_slot;  ///< partial row it writes, or -1: it writes Y itself
  Kokkos::View<local_index*, MemorySpace> split_row;  ///< rows cut into several segments
  Kokkos::View<local_index*, MemorySpace> split_first_slot;  ///< their first partial row
  Kokkos::View<local_index*, MemorySpace> split_slots;  ///< and how many
  std::size_t segments = 0, slots = 0, splits = 0;
  bool made = false;

  /// Cut `rows` (row ids into row_ptr) into segments (fences `exec`).
  template <class ExecSpace>
  static spmm_row_schedule make(const ExecSpace& exec, const Kokkos::View<const local_index*, MemorySpace>& rows,
                                const Kokkos::View<const offset_type*, MemorySpace>& row_ptr) {
    spmm_row_schedule s;
    s.made = true;
    const std::size_t n = rows.extent(0);
    if (n == 0) return s;
    // One scan counts both the partial rows before each row (high 32 bits) and the split rows
    // before it (low 32 bits); a row's first segment is then i + slots - splits.
    Kokkos::View<std::uint64_t*, MemorySpace> before(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::schedule"),
                                                     n + 1);
    const offset_type limit = segment_entries;
    Kokkos::parallel_scan(
        "tessera::spmm_schedule_count", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
        KOKKOS_LAMBDA(const std::size_t i, std::uint64_t& sum, const bool final) {
          const local_index r = rows(i);
          const offset_type nnz = row_ptr(r + 1) - row_ptr(r);
          const std::uint64_t pieces = nnz > limit ? static_cast<std::uint64_t>((nnz + limit - 1) / limit) : 0;
          if (final) before(i) = sum;
          sum += (pieces << 32) | (pieces > 0 ? 1u : 0u);
          if (final && i + 1 == n) before(n) = sum;
        });
    std::uint64_t total = 0;
    tessera::detail::deep_copy(total, Kokkos::subview(before, n));
    s.slots = static_cast<std::size_t>(total >> 32);
    s.splits = static_cast<std::size_t>(total & 0xffffffffu);
    s.segments = n + s.slots - s.splits;
    s.segment_row = Kokkos::View<local_index*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::segment_row"), s.segments);
    s.segment_begin = Kokkos::View<offset_type*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::segment_begin"), s.segments);
    s.segment_slot = Kokkos::View<local_index*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::segment_slot"), s.segments);
    s.split_row = Kokkos::View<local_index*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::split_row"), s.splits);
    s.split_first_slot = Kokkos::View<local_index*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::split_slot"), s.splits);
    s.split_slots = Kokkos::View<local_index*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::split_slots"), s.splits);
    const auto segment_row = s.segment_row;
    const auto segment_begin = s.segment_begin;
    const auto segment_slot = s.segment_slot;
    const auto split_row = s.split_row;
    const auto split_first_slot = s.split_first_slot;
    const auto split_slots = s.split_slots;
    Kokkos::parallel_for(
        "tessera::spmm_schedule_fill", Kokkos::RangePolicy<ExecSpace>(exec, 0, n), KOKKOS_LAMBDA(const std::size_t i) {
          const local_index r = rows(i);
          const offset_type begin = row_ptr(r), nnz = row_ptr(r + 1) - begin;
          const std::uint64_t b = before(i);
          const auto slot = static_cast<local_index>(b >> 32);
          const auto split = static_cast<std::size_t>(b & 0xffffffffu);
          const std::size_t first = i + static_cast<std::size_t>(b >> 32) - split;
          if (nnz <= limit) {
            segment_row(first) = r;
            segment_begin(first) = begin;
            segment_slot(first) = -1;
            return;
          }
          const auto pieces = static_cast<local_index>((nnz + limit - 1) / limit);
          split_row(split) = r;
          split_first_slot(split) = slot;
          split_slots(split) = pieces;
          for (local_index p = 0; p < pieces; ++p) {
            segment_row(first + static_cast<std::size_t>(p)) = r;
            segment_begin(first + static_cast<std::size_t>(p)) = begin + p * limit;
            segment_slot(first + static_cast<std::size_t>(p)) = slot + p;
          }
        });
    exec.fence();
    return s;
  }
};

namespace detail {
/// Lanes per segment and columns each lane keeps in registers, for k columns.
struct lane_shape {
  int lanes, per_lane;
};
inline lane_shape lanes_for(std::size_t k) {
  if (k >= 128) return {32, 4};
  if (k > 32) return {32, 2};
  int lanes = 1;
  while (static_cast<std::size_t>(lanes) < k) lanes *= 2;
  return {lanes, 1};
}

template <int PerLane, class ExecSpace, class T, class MemorySpace>
void spmm_segments(const ExecSpace& exec, const spmm_row_schedule<MemorySpace>& schedule, int lanes,
                   const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                   const Kokkos::View<const local_index*, MemorySpace>& x_source,
                   const Kokkos::View<const T*, MemorySpace>& values,
                   const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                   const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
                   const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y,
                   const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& partial) {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  const std::size_t k = y.extent(1);
  const auto tile = static_cast<std::size_t>(lanes * PerLane);
  const std::size_t tiles = (k + tile - 1) / tile;
  // 256 threads a team on a GPU; on a host space a team is one thread and lanes run as a loop.
  const int team = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : (256 / lanes > 0 ? 256 / lanes : 1);
  const std::size_t groups = (schedule.segments + static_cast<std::size_t>(team) - 1) / static_cast<std::size_t>(team);
  const auto segment_row = schedule.segment_row;
  const auto segment_begin = schedule.segment_begin;
  const auto segment_slot = schedule.segment_slot;
  const detail::rows_of_x<T, MemorySpace> row_of_x{x_source, x_local, x_halo};
  const std::size_t segments = schedule.segments;
  const offset_type limit = spmm_row_schedule<MemorySpace>::segment_entries;
  // Tiles are the slow index of the league: the teams in flight share a tile of X's columns (in L2).
  Kokkos::parallel_for(
      "tessera::spmm_segments", team_policy(exec, static_cast<int>(groups * tiles), team, lanes),
      KOKKOS_LAMBDA(const member& m) {
        const std::size_t league = static_cast<std::size_t>(m.league_rank());
        const std::size_t s = (league % groups) * static_cast<std::size_t>(m.team_size()) + static_cast<std::size_t>(m.team_rank());
        if (s >= segments) return;
        const std::size_t base = (league / groups) * tile;
        const local_index r = segment_row(s);
        const offset_type begin = segment_begin(s);
        const offset_type row_end = row_ptr(r + 1);
        const offset_type end = begin + limit < row_end ? begin + limit : row_end;
        const local_index slot = segment_slot(s);
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, lanes), [&](const int lane) {
          T acc[PerLane];
          for (int j = 0; j < PerLane; ++j) acc[j] = T{};
          offset_type e = begin;
          // One column per lane (k <= 32): four entries at a time, their rows of X looked up before
          // any is multiplied, so four loads of X are in flight at once instead of one (a lane
          // waits on latency, not bandwidth, on the scattered rows of a power-law matrix; an H100
          // ran R-MAT 18 at k = 8 and 32 8-9% faster). With 2 or 4 columns per lane the registers
          // this takes cost more than it gains (k = 128: 37% slower), so those keep one at a time.
          // The sums keep their order either way.
          const offset_type unrolled_end = PerLane == 1 ? end : begin;
          for (; e + 4 <= unrolled_end; e += 4) {
            const T a0 = values(e), a1 = values(e + 1), a2 = values(e + 2), a3 = values(e + 3);
            const T* in0 = row_of_x(e);
            const T* in1 = row_of_x(e + 1);
            const T* in2 = row_of_x(e + 2);
            const T* in3 = row_of_x(e + 3);
            for (int j = 0; j < PerLane; ++j) {
              const std::size_t t = base + static_cast<std::size_t>(j * lanes + lane);
              if (t < k) {
                const T x0 = in0[t], x1 = in1[t], x2 = in2[t], x3 = in3[t];
                acc[j] += a0 * x0;
                acc[j] += a1 * x1;
                acc[j] += a2 * x2;
                acc[j] += a3 * x3;
              }
            }
          }
          for (; e < end; ++e) {
            const T a = values(e);
            const T* in = row_of_x(e);
            for (int j = 0; j < PerLane; ++j) {
              const std::size_t t = base + static_cast<std::size_t>(j * lanes + lane);
              if (t < k) acc[j] += a * in[t];
            }
          }
          T* out = slot < 0 ? &y(r, 0) : &partial(static_cast<std::size_t>(slot), 0);
          for (int j = 0; j < PerLane; ++j) {
            const std::size_t t = base + static_cast<std::size_t>(j * lanes + lane);
            if (t < k) out[t] = acc[j];
          }
        });
      });
  if (schedule.splits == 0) return;
  const auto split_row = schedule.split_row;
  const auto split_first_slot = schedule.split_first_slot;
  const auto split_slots = schedule.split_slots;
  Kokkos::parallel_for(
      "tessera::spmm_split_rows", Kokkos::RangePolicy<ExecSpace>(exec, 0, schedule.splits * k), KOKKOS_LAMBDA(const std::size_t i) {
        const std::size_t s = i / k, t = i % k;
        const auto first = static_cast<std::size_t>(split_first_slot(s));
        T sum = partial(first, t);
        for (local_index p = 1; p < split_slots(s); ++p) sum += partial(first + static_cast<std::size_t>(p), t);
        y(split_row(s), t) = sum;
      });
}
}  // namespace detail

/// Y(r, :) = A(r, :) * X for every row r of the schedule, split by nonzeros (see the file's
/// comment). `partial` is scratch of at least schedule.slots x k, resized here when smaller.
/// `x_source`: per entry of A, the row of X it reads (entry_sources).
/// Correct on every execution space; made for the GPU ones (spmm_rows picks it there).
template <class ExecSpace, class T, class MemorySpace>
void spmm_rows_balanced(const ExecSpace& exec, const spmm_row_schedule<MemorySpace>& schedule,
                        const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                        const Kokkos::View<const local_index*, MemorySpace>& x_source,
                        const Kokkos::View<const T*, MemorySpace>& values,
                        const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                        const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
                        const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y,
                        Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& partial) {
  const std::size_t k = y.extent(1);
  if (k == 0 || schedule.segments == 0) return;
  if (partial.extent(0) < schedule.slots || partial.extent(1) != k)
    partial = Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::partial_rows"), schedule.slots, k);
  const auto shape = detail::lanes_for(k);
  const auto run = [&](auto per_lane) {
    detail::spmm_segments<decltype(per_lane)::value, ExecSpace, T>(exec, schedule, shape.lanes, row_ptr, x_source, values,
                                                                   x_local, x_halo, y, partial);
  };
  if (shape.per_lane == 4) run(std::integral_constant<int, 4>{});
  else if (shape.per_lane == 2) run(std::integral_constant<int, 2>{});
  else run(std::integral_constant<int, 1>{});
}

/// Whether SpMM runs the balanced kernel on ExecSpace: where tessera runs its device algorithms
/// (on a host core, spmm_rows' row-at-a-time loop with the row of Y in registers is the faster one).
template <class ExecSpace>
inline constexpr bool prefers_balanced_spmm = uses_device_algorithms<ExecSpace>;

/// What an SpMM plan keeps per list of rows for the kernel of its execution space: the balanced
/// kernel's schedule (made on the first product) and its partial rows on devices; on host cores
/// the rows that share a pattern (made on the first product wide enough for them) and the
/// threads' pieces of the rows the row kernel runs (balanced_row_pieces, made on the first product
/// where ExecSpace has more than one thread).
template <class T, class MemorySpace>
struct spmm_rows_state {
  spmm_row_schedule<MemorySpace> schedule;
  Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace> partial;
  spmm_row_groups<MemorySpace> groups;
  Kokkos::View<std::size_t*, MemorySpace> pieces;        ///< of the list of rows
  Kokkos::View<std::size_t*, MemorySpace> other_pieces;  ///< of groups.other_rows
};

/// How many pieces the host kernels cut a list of rows into on ExecSpace: eight per thread, so
/// that the dynamic schedule evens out what equal entry counts leave uneven (cache misses); none
/// (a work item per row) with one thread.
template <class ExecSpace>
std::size_t host_row_pieces(const ExecSpace& exec) {
  const auto threads = static_cast<std::size_t>(exec.concurrency());
  return threads > 1 ? 8 * threads : 0;
}

/// spmm_rows or spmm_rows_balanced, whichever is the faster on ExecSpace.
template <class ExecSpace, class T, class MemorySpace>
void spmm_rows_for_space(const ExecSpace& exec, const Kokkos::View<const local_index*, MemorySpace>& rows,
                         spmm_rows_state<T, MemorySpace>& state,
                         const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                         const Kokkos::View<const local_index*, MemorySpace>& x_source,
                         const Kokkos::View<const T*, MemorySpace>& values,
                         const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                         const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
                         const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y, bool streaming_stores = false) {
  if constexpr (prefers_balanced_spmm<ExecSpace>) {
    if (!state.schedule.made) state.schedule = spmm_row_schedule<MemorySpace>::make(exec, rows, row_ptr);
    spmm_rows_balanced<ExecSpace, T, MemorySpace>(exec, state.schedule, row_ptr, x_source, values, x_local, x_halo, y,
                                                  state.partial);
  } else {
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible) {
      // The threads' pieces of a list, cut on its first product (none with one thread).
      const auto pieces_of = [&](Kokkos::View<std::size_t*, MemorySpace>& bounds,
                                 const Kokkos::View<const local_index*, MemorySpace>& list) {
        if (bounds.extent(0) == 0 && host_row_pieces(exec) > 0) bounds = balanced_row_pieces(list, row_ptr, host_row_pieces(exec));
        return Kokkos::View<const std::size_t*, MemorySpace>(bounds);
      };
      if (has_row_groups_kernel<ExecSpace, T>(y.extent(1))) {
        if (!state.groups.made) state.groups = spmm_row_groups<MemorySpace>::make(rows, row_ptr, x_source);
        if (state.groups.groups > 0) {
          spmm_row_groups_run<ExecSpace, T, MemorySpace>(exec, state.groups, row_ptr, x_source, values, x_local, x_halo, y);
          const Kokkos::View<const local_index*, MemorySpace> others = state.groups.other_rows;
          if (others.extent(0) > 0)
            spmm_rows<ExecSpace, T, MemorySpace>(exec, others, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores,
                                                 pieces_of(state.other_pieces, others));
          return;
        }
      }
      spmm_rows<ExecSpace, T, MemorySpace>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores,
                                           pieces_of(state.pieces, rows));
      return;
    }
    spmm_rows<ExecSpace, T, MemorySpace>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores);
  }
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_BALANCED_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_BALANCED_HPP
#endif
