#pragma once
// The kernels of spmm mode's dense batches (examples/spdnn/spdnn/inference.hpp): the fused
// activation with its liveness marks, the compaction of live images, the survivors' pool and the
// filling of a batch from Y'(0). Each has a host form and a device form, chosen per execution space.

#include <tessera/kernels/sorted_search.hpp>
#include <tessera/kernels/spmm_balanced.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace spdnn {

/// The fused activation: bias on the nonzeros of Z only, then clamp to [0, ymax].
/// Written without branches (both sides computed, then selected: the same value for every z,
/// NaN included) so that compilers vectorise the loops that apply it: the branching form was a
/// scalar loop that mispredicted on every other element and cost more than the layer's product.
template <class T>
struct bias_relu_clamp {
  T bias, ymax;
  KOKKOS_INLINE_FUNCTION T operator()(const T& z) const {
    const T y = z + bias;
    const T clamped = y < T(0) ? T(0) : (y > ymax ? ymax : y);
    return z == T(0) ? T(0) : clamped;
  }
};

/// The spaces a policy runs on and nothing else. The example's kernels (here and run_fused) are
/// instantiated with spaces_of<Policy>, not with the policy, so the three backends' policies share
/// one copy of each: a unit that runs a mode under every backend compiled each kernel three times
/// (under nvcc, three device kernels to generate and launch).
template <class Exec, class Mem>
struct spaces {
  using execution_space = Exec;
  using memory_space = Mem;
};
template <class Policy>
using spaces_of = spaces<typename Policy::execution_space, typename Policy::memory_space>;

/// A dense block in the memory of a policy (or of spaces_of one): dist_dense's local View.
template <class T, class Spaces>
using dense_block = Kokkos::View<T**, Kokkos::LayoutRight, typename Spaces::memory_space>;

namespace detail {

/// Rows per block of activate_dense's first pass.
inline constexpr std::size_t activation_block = 32;

/// activate_dense's scratch for a batch of `rows` x `width`: one row of column marks per row block.
template <class Policy>
Kokkos::View<char**, Kokkos::LayoutRight, typename Policy::memory_space> activation_marks(std::size_t rows, std::size_t width) {
  return Kokkos::View<char**, Kokkos::LayoutRight, typename Policy::memory_space>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spdnn::marks"), (rows + activation_block - 1) / activation_block, width);
}

// The kernels below are separate functions, not `if constexpr` branches of one: nvcc refuses a
// device lambda's first capture inside `if constexpr`.

/// activate_dense's first pass on a device: one work item per (block of rows, column), so that
/// neighbouring threads walk neighbouring columns of the same rows (coalesced loads and stores).
template <class T, class Policy>
void activate_blocks_by_column(const dense_block<T, Policy>& z,
                               const Kokkos::View<char**, Kokkos::LayoutRight, typename Policy::memory_space>& kept,
                               bias_relu_clamp<T> act) {
  using exec = typename Policy::execution_space;
  const std::size_t rows = z.extent(0), width = z.extent(1), blocks = kept.extent(0);
  constexpr std::size_t block = activation_block;
  Kokkos::parallel_for(
      "spdnn::activate", Kokkos::RangePolicy<exec>(0, blocks * width), KOKKOS_LAMBDA(const std::size_t i) {
        const std::size_t b = i / width, t = i % width;
        const std::size_t last = (b + 1) * block < rows ? (b + 1) * block : rows;
        char mark = 0;
        for (std::size_t r = b * block; r < last; ++r) {
          const T y = act(z(r, t));
          z(r, t) = y;
          mark |= y != T(0) ? 1 : 0;
        }
        kept(b, t) = mark;
      });
}

/// activate_dense's first pass on host cores: one work item per block of rows, walking its rows
/// contiguously (row-major Z: the whole of Z once, in order). Work items per column line walked
/// every row with a row-length stride and gained nothing from a rank's second thread.
template <class T, class Policy>
void activate_blocks_by_row(const dense_block<T, Policy>& z,
                            const Kokkos::View<char**, Kokkos::LayoutRight, typename Policy::memory_space>& kept,
                            bias_relu_clamp<T> act) {
  using exec = typename Policy::execution_space;
  const std::size_t rows = z.extent(0), width = z.extent(1), blocks = kept.extent(0);
  constexpr std::size_t block = activation_block;
  Kokkos::parallel_for(
      "spdnn::activate", Kokkos::RangePolicy<exec>(0, blocks), KOKKOS_LAMBDA(const std::size_t b) {
        // Restrict: a char store may alias anything, and without it the loop below is not vectorised.
        char* KOKKOS_RESTRICT mark = &kept(b, 0);
        for (std::size_t t = 0; t < width; ++t) mark[t] = 0;
        const std::size_t last = (b + 1) * block < rows ? (b + 1) * block : rows;
        for (std::size_t i = b * block; i < last; ++i) {
          T* KOKKOS_RESTRICT row = &z(i, 0);
          for (std::size_t t = 0; t < width; ++t) {
            const T y = act(row[t]);
            row[t] = y;
            mark[t] |= y != T(0) ? 1 : 0;
          }
        }
      });
}

/// Activate a dense batch in place; flags(t) = 1 if column t kept a nonzero. `kept` is scratch from
/// activation_marks (made once per batch width, not per layer): each block of rows marks the
/// columns it kept in its own row of `kept` (no races), then a column lives if any block kept it.
template <class T, class Policy>
void activate_dense(const dense_block<T, Policy>& z, Kokkos::View<char*, typename Policy::memory_space> flags,
                    const Kokkos::View<char**, Kokkos::LayoutRight, typename Policy::memory_space>& kept, bias_relu_clamp<T> act) {
  using exec = typename Policy::execution_space;
  if constexpr (tessera::kernels::prefers_balanced_spmm<exec>)
    activate_blocks_by_column<T, Policy>(z, kept, act);
  else
    activate_blocks_by_row<T, Policy>(z, kept, act);
  const std::size_t blocks = kept.extent(0);
  Kokkos::parallel_for(
      "spdnn::live_columns", Kokkos::RangePolicy<exec>(0, z.extent(1)), KOKKOS_LAMBDA(const std::size_t t) {
        char alive = 0;
        for (std::size_t b = 0; b < blocks; ++b) alive |= kept(b, t);
        flags(t) = alive;
      });
  exec().fence();
}

template <class T, class Policy>
void compact_columns_by_element(const dense_block<T, Policy>& from,
                                const dense_block<T, Policy>& to,
                                const Kokkos::View<std::int64_t*, typename Policy::memory_space>& keep) {
  const std::size_t kept = keep.extent(0), width = to.extent(1);
  Kokkos::parallel_for(
      "spdnn::compact", Kokkos::RangePolicy<typename Policy::execution_space>(0, from.extent(0) * width),
      KOKKOS_LAMBDA(const std::size_t i) {
        const std::size_t r = i / width, t = i % width;
        to(r, t) = t < kept ? from(r, static_cast<std::size_t>(keep(t))) : T(0);
      });
}

template <class T, class Policy>
void compact_columns_by_row(const dense_block<T, Policy>& from,
                            const dense_block<T, Policy>& to,
                            const Kokkos::View<std::int64_t*, typename Policy::memory_space>& keep) {
  const std::size_t kept = keep.extent(0), width = to.extent(1);
  Kokkos::parallel_for(
      "spdnn::compact", Kokkos::RangePolicy<typename Policy::execution_space>(0, from.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) {
        for (std::size_t t = 0; t < kept; ++t) to(i, t) = from(i, static_cast<std::size_t>(keep(t)));
        for (std::size_t t = kept; t < width; ++t) to(i, t) = T(0);
      });
}

/// to(:, t) = from(:, keep(t)) for the kept columns, 0 in to's columns after them (to is reused
/// from batch to batch): on a device a thread per element (neighbours
/// write neighbouring columns), on host cores a work item per row.
template <class T, class Policy>
void compact_columns(const dense_block<T, Policy>& from,
                     const dense_block<T, Policy>& to,
                     const Kokkos::View<std::int64_t*, typename Policy::memory_space>& keep) {
  if constexpr (tessera::kernels::prefers_balanced_spmm<typename Policy::execution_space>)
    compact_columns_by_element<T, Policy>(from, to, keep);
  else
    compact_columns_by_row<T, Policy>(from, to, keep);
  typename Policy::execution_space().fence();
}

/// to(:, at + i) = from(:, columns(i)): a batch's survivors appended to the pool (a work item
/// per element: a handful of columns, every row).
template <class T, class Policy>
void append_columns(const dense_block<T, Policy>& from,
                    const Kokkos::View<std::int64_t*, typename Policy::memory_space>& columns,
                    const dense_block<T, Policy>& to, const std::int64_t at) {
  const std::size_t count = columns.extent(0);
  const auto first = static_cast<std::size_t>(at);
  Kokkos::parallel_for(
      "spdnn::append", Kokkos::RangePolicy<typename Policy::execution_space>(0, from.extent(0) * count),
      KOKKOS_LAMBDA(const std::size_t i) {
        const std::size_t r = i / count, c = i % count;
        to(r, first + c) = from(r, static_cast<std::size_t>(columns(c)));
      });
  typename Policy::execution_space().fence();
}

/// First entry of row i (sorted columns) whose column is at least `column`.
template <class RowPtr, class Cols>
KOKKOS_INLINE_FUNCTION auto first_at_or_after(const RowPtr& row_ptr, const Cols& col_idx, std::size_t i,
                                              tessera::local_index column) {
  return tessera::kernels::lower_bound_in(col_idx, row_ptr(i), row_ptr(i + 1), column);
}

/// fill_batch on host cores: a work item per row of Y'(0), from where the previous batch stopped
/// (`cursor`, one entry per row: batches come in order), writing where this one stops into
/// `next_cursor`. Binary-searching every row for every batch cost a cache miss per step (rows of
/// thousands of entries) and 15% of the inference at 1,024 neurons. Two arrays, not one advanced in
/// place: each row prefetches from the cursor of a row further on, which another thread may be
/// advancing at that moment (a data race that ThreadSanitizer found on Kokkos' Threads backend).
template <class T, class Policy, class Rows, class ColMap, class Dense>
void fill_batch_by_rows(const Rows& rows, const ColMap& col_map, tessera::local_index lo, tessera::local_index hi,
                        std::int64_t batch_first, const Dense& to,
                        const Kokkos::View<const tessera::offset_type*, typename Policy::memory_space>& cursor,
                        const Kokkos::View<tessera::offset_type*, typename Policy::memory_space>& next_cursor) {
  const auto row_ptr = rows.row_ptr;
  const auto col_idx = rows.col_idx;
  const auto values = rows.values;
  Kokkos::parallel_for(
      "spdnn::batch", Kokkos::RangePolicy<typename Policy::execution_space>(0, to.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
        // Each row's part of a batch is a line or two far from the last row's: ask for a later
        // row's ahead (waiting for each cost 60% of the fill).
        constexpr std::size_t ahead = 8;
        if (i + ahead < cursor.extent(0)) {
          __builtin_prefetch(&col_idx(cursor(i + ahead)));
          __builtin_prefetch(&values(cursor(i + ahead)));
        }
#endif
        auto e = cursor(i);
        const auto end = row_ptr(i + 1);
        if (e < end && col_idx(e) < lo) e = first_at_or_after(row_ptr, col_idx, i, lo);  // out of order: search
        for (; e < end && col_idx(e) < hi; ++e) to(i, static_cast<std::size_t>(col_map(col_idx(e)) - batch_first)) = values(e);
        next_cursor(i) = e;
      });
}

/// fill_batch on a device: a team per row of Y'(0), its threads over the row's entries in the
/// batch (a row holds thousands; a thread per row left most of a GPU idle for 7 ms).
template <class T, class Policy, class Rows, class ColMap, class Dense>
void fill_batch_by_teams(const Rows& rows, const ColMap& col_map, tessera::local_index lo, tessera::local_index hi,
                         std::int64_t batch_first, const Dense& to) {
  using team_policy = Kokkos::TeamPolicy<typename Policy::execution_space>;
  const auto row_ptr = rows.row_ptr;
  const auto col_idx = rows.col_idx;
  const auto values = rows.values;
  Kokkos::parallel_for(
      "spdnn::batch", team_policy(static_cast<int>(to.extent(0)), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename team_policy::member_type& m) {
        const auto i = static_cast<std::size_t>(m.league_rank());
        const auto begin = first_at_or_after(row_ptr, col_idx, i, lo), end = first_at_or_after(row_ptr, col_idx, i, hi);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, begin, end), [&](const auto e) {
          to(i, static_cast<std::size_t>(col_map(col_idx(e)) - batch_first)) = values(e);
        });
      });
}

/// The batch's columns [lo, hi) of Y'(0) (CSR rows, sorted columns; image of local column c:
/// col_map(c)) written into the zeroed dense batch `to` at column image - batch_first. `cursor`:
/// per row, the first entry not yet filled (row_ptr's first entries before the first batch); on
/// host cores `next_cursor` gets the first entry after the batch (swap the two for the next
/// batch); devices search each row instead and leave both alone.
template <class T, class Policy, class Rows, class ColMap, class Dense>
void fill_batch(const Rows& rows, const ColMap& col_map, tessera::local_index lo, tessera::local_index hi,
                std::int64_t batch_first, const Dense& to,
                const Kokkos::View<tessera::offset_type*, typename Policy::memory_space>& cursor,
                const Kokkos::View<tessera::offset_type*, typename Policy::memory_space>& next_cursor) {
  if constexpr (tessera::kernels::prefers_balanced_spmm<typename Policy::execution_space>)
    fill_batch_by_teams<T, Policy>(rows, col_map, lo, hi, batch_first, to);
  else
    fill_batch_by_rows<T, Policy>(rows, col_map, lo, hi, batch_first, to, cursor, next_cursor);
  typename Policy::execution_space().fence();
}

}  // namespace detail

}  // namespace spdnn
