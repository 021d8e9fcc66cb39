#pragma once
// A storage written outside the library: sliced ELLPACK (SELL-C), the GPU-friendly format in which
// slices of C consecutive rows are padded to their longest row and stored column-major, so C
// threads read one slice's j-th entries from consecutive addresses. It states the storage concept
// (a block type and the two conversions through sorted COO) and nothing else: conversions to and
// from every other storage, and every operation, work on it; SpMM and SpGEMM read it through CSR
// (tessera::as_compressed_rows), the element-wise maps rewrite its `values` View in place.
#include <tessera/tessera.hpp>

#include <Kokkos_Core.hpp>

#include <string_view>

namespace custom {

using tessera::local_index;
using tessera::offset_type;

// [sliced_ell]
template <class T, class MemorySpace>
struct sliced_ell_block {
  using value_type = T;
  using memory_space = MemorySpace;
  static constexpr local_index slice = 8;  // rows per slice (C)

  local_index rows = 0, cols = 0;
  offset_type stored = 0;                              // entries, without the padding
  Kokkos::View<local_index*, MemorySpace> row_length;  // per row
  Kokkos::View<offset_type*, MemorySpace> slice_ptr;   // per slice: first slot; slices + 1
  Kokkos::View<local_index*, MemorySpace> col_idx;     // slot slice_ptr(s) + k * slice + r % slice; -1 in padding
  Kokkos::View<T*, MemorySpace> values;                // 0 in padding

  [[nodiscard]] local_index num_rows() const noexcept { return rows; }
  [[nodiscard]] local_index num_cols() const noexcept { return cols; }
  [[nodiscard]] offset_type nnz() const noexcept { return stored; }
};

struct sliced_ell {
  static constexpr std::string_view name() noexcept { return "sliced_ell"; }
  template <class T, class MemorySpace>
  using block = sliced_ell_block<T, MemorySpace>;

  template <class ExecSpace, class T, class MemorySpace>
  static block<T, MemorySpace> from_coo(const ExecSpace& exec, const tessera::coo_block<T, MemorySpace>& sorted) {
    using range = Kokkos::RangePolicy<ExecSpace>;
    constexpr local_index c = block<T, MemorySpace>::slice;
    block<T, MemorySpace> out;
    out.rows = sorted.rows;
    out.cols = sorted.cols;
    out.stored = sorted.nnz();
    const auto n = sorted.nnz();
    const local_index slices = (sorted.rows + c - 1) / c;
    Kokkos::View<offset_type*, MemorySpace> first("sell::first", static_cast<std::size_t>(sorted.rows) + 1);
    out.row_length = decltype(out.row_length)("sell::row_length", static_cast<std::size_t>(sorted.rows));
    out.slice_ptr = decltype(out.slice_ptr)("sell::slice_ptr", static_cast<std::size_t>(slices) + 1);
    const auto row_idx = sorted.row_idx;
    const auto length = out.row_length;
    const auto slice_ptr = out.slice_ptr;
    // Row r starts at the first entry whose row is >= r (the input is sorted by row): a binary
    // search per row, so no two work items write the same place.
    Kokkos::parallel_for("sell::rows", range(exec, 0, sorted.rows + 1), KOKKOS_LAMBDA(const local_index r) {
      offset_type lo = 0, hi = n;
      while (lo < hi) {
        const offset_type mid = lo + (hi - lo) / 2;
        if (row_idx(mid) < r) lo = mid + 1;
        else hi = mid;
      }
      first(r) = lo;
    });
    Kokkos::parallel_for("sell::lengths", range(exec, 0, sorted.rows), KOKKOS_LAMBDA(const local_index r) {
      length(r) = static_cast<local_index>(first(r + 1) - first(r));
    });
    const local_index rows = sorted.rows;
    Kokkos::parallel_scan("sell::slices", range(exec, 0, slices + 1),
                          KOKKOS_LAMBDA(const local_index s, offset_type& running, const bool final) {
                            if (final) slice_ptr(s) = running;
                            local_index width = 0;
                            for (local_index r = s * c; r < (s + 1) * c && r < rows; ++r)
                              width = length(r) > width ? length(r) : width;
                            running += static_cast<offset_type>(width) * c;
                          });
    offset_type slots = 0;
    exec.fence();
    Kokkos::deep_copy(slots, Kokkos::subview(slice_ptr, static_cast<std::size_t>(slices)));
    out.col_idx = decltype(out.col_idx)("sell::col_idx", static_cast<std::size_t>(slots));
    out.values = decltype(out.values)("sell::values", static_cast<std::size_t>(slots));
    Kokkos::deep_copy(out.col_idx, local_index{-1});
    const auto col_in = sorted.col_idx;
    const auto val_in = sorted.values;
    const auto col_out = out.col_idx;
    const auto val_out = out.values;
    Kokkos::parallel_for("sell::fill", range(exec, 0, sorted.rows), KOKKOS_LAMBDA(const local_index r) {
      const offset_type base = slice_ptr(r / c) + r % c;
      for (local_index k = 0; k < length(r); ++k) {
        col_out(base + static_cast<offset_type>(k) * c) = col_in(first(r) + k);
        val_out(base + static_cast<offset_type>(k) * c) = val_in(first(r) + k);
      }
    });
    exec.fence();
    return out;
  }

  template <class ExecSpace, class T, class MemorySpace>
  static tessera::coo_block<T, MemorySpace> to_coo(const ExecSpace& exec, const block<T, MemorySpace>& in) {
    using range = Kokkos::RangePolicy<ExecSpace>;
    constexpr local_index c = block<T, MemorySpace>::slice;
    Kokkos::View<offset_type*, MemorySpace> first("sell::first", static_cast<std::size_t>(in.rows) + 1);
    const auto length = in.row_length;
    Kokkos::parallel_scan("sell::starts", range(exec, 0, in.rows + 1),
                          KOKKOS_LAMBDA(const local_index r, offset_type& running, const bool final) {
                            if (final) first(r) = running;
                            if (r < static_cast<local_index>(length.extent(0))) running += length(r);
                          });
    tessera::coo_block<T, MemorySpace> out{in.rows, in.cols,
                                           Kokkos::View<local_index*, MemorySpace>("sell::coo_rows", static_cast<std::size_t>(in.stored)),
                                           Kokkos::View<local_index*, MemorySpace>("sell::coo_cols", static_cast<std::size_t>(in.stored)),
                                           Kokkos::View<T*, MemorySpace>("sell::coo_values", static_cast<std::size_t>(in.stored))};
    const auto slice_ptr = in.slice_ptr;
    const auto col_in = in.col_idx;
    const auto val_in = in.values;
    const auto row_out = out.row_idx;
    const auto col_out = out.col_idx;
    const auto val_out = out.values;
    Kokkos::parallel_for("sell::unpack", range(exec, 0, in.rows), KOKKOS_LAMBDA(const local_index r) {
      const offset_type base = slice_ptr(r / c) + r % c;
      for (local_index k = 0; k < length(r); ++k) {
        row_out(first(r) + k) = r;
        col_out(first(r) + k) = col_in(base + static_cast<offset_type>(k) * c);
        val_out(first(r) + k) = val_in(base + static_cast<offset_type>(k) * c);
      }
    });
    exec.fence();
    return out;
  }
};
// [sliced_ell]

static_assert(tessera::storage_policy<sliced_ell>);
static_assert(!tessera::compressed_row_block<sliced_ell_block<double, Kokkos::HostSpace>>);

}  // namespace custom
