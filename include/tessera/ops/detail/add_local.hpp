#pragma once
/// @file
/// C = A + B on one rank's block when A and B split their rows alike: the two sorted column maps
/// merged into C's, then each row's two sorted lists merged (a count, a scan, a write), all by
/// kernels in the execution space on the operands' Views. No triplets, no host pass, no sort: the
/// work is one pass over both blocks and a binary search per column-map entry.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/add_local.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/index_types.hpp"
#include "../../kernels/sorted_search.hpp"
#include "../../storage/csr.hpp"
#include "row_offsets_scan.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <utility>

namespace tessera::detail {

/// The union of two sorted, distinct column maps, and where each position of either lands in it.
template <class Mem>
struct merged_column_maps {
  Kokkos::View<global_index*, Mem> map;
  Kokkos::View<local_index*, Mem> from_a;
  Kokkos::View<local_index*, Mem> from_b;
};

/// Position c of C's map holds a(i) at c = i + (the columns of b below a(i) that a lacks), and
/// b(j) at c = (a's columns below b(j)) + (b's columns before j that a lacks): one scan over b
/// marks what a lacks, then every position is placed by one binary search, in any order.
template <class Exec, class Mem>
merged_column_maps<Mem> merge_column_maps(const Kokkos::View<const global_index*, Mem>& a,
                                          const Kokkos::View<const global_index*, Mem>& b) {
  const std::size_t na = a.extent(0);
  const std::size_t nb = b.extent(0);
  Kokkos::View<offset_type*, Mem> b_only_before(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::add::b_only")),
                                                nb + 1);
  offset_type b_only = 0;
  Kokkos::parallel_scan(
      "tessera::add::b_only", Kokkos::RangePolicy<Exec>(0, nb + 1),
      KOKKOS_LAMBDA(const std::size_t j, offset_type& running, const bool final) {
        if (final) b_only_before(j) = running;
        if (j < nb) {
          const std::size_t k = kernels::lower_bound_in(a, na, b(j));
          running += k == na || a(k) != b(j) ? 1 : 0;
        }
      },
      b_only);
  merged_column_maps<Mem> out;
  out.map = Kokkos::View<global_index*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::add::col_map")),
                                             na + static_cast<std::size_t>(b_only));
  out.from_a = Kokkos::View<local_index*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::add::from_a")), na);
  out.from_b = Kokkos::View<local_index*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::add::from_b")), nb);
  const auto map = out.map;
  const auto from_a = out.from_a;
  const auto from_b = out.from_b;
  Kokkos::parallel_for(
      "tessera::add::place_a", Kokkos::RangePolicy<Exec>(0, na), KOKKOS_LAMBDA(const std::size_t i) {
        const std::size_t c = i + static_cast<std::size_t>(b_only_before(kernels::lower_bound_in(b, nb, a(i))));
        from_a(i) = static_cast<local_index>(c);
        map(c) = a(i);
      });
  Kokkos::parallel_for(
      "tessera::add::place_b", Kokkos::RangePolicy<Exec>(0, nb), KOKKOS_LAMBDA(const std::size_t j) {
        const std::size_t k = kernels::lower_bound_in(a, na, b(j));
        const std::size_t c = k + static_cast<std::size_t>(b_only_before(j));
        from_b(j) = static_cast<local_index>(c);
        if (k == na || a(k) != b(j)) map(c) = b(j);  // a common column is written once, by a's side
      });
  return out;
}

/// ptr(r + 1) = the length of row r of A + B: its two sorted lists' union (columns in C's map).
template <class Exec, class T, class Mem>
Kokkos::View<offset_type*, Mem> merged_row_counts(const csr_block<T, Mem>& a, const csr_block<T, Mem>& b,
                                                   const merged_column_maps<Mem>& columns) {
  const auto rows = static_cast<std::size_t>(a.rows);
  Kokkos::View<offset_type*, Mem> ptr("tessera::add::row_ptr", rows + 1);
  const auto a_ptr = a.row_ptr;
  const auto a_col = a.col_idx;
  const auto b_ptr = b.row_ptr;
  const auto b_col = b.col_idx;
  const auto from_a = columns.from_a;
  const auto from_b = columns.from_b;
  Kokkos::parallel_for(
      "tessera::add::count", Kokkos::RangePolicy<Exec>(0, rows), KOKKOS_LAMBDA(const std::size_t r) {
        offset_type ia = a_ptr(r), ib = b_ptr(r), length = 0;
        const offset_type end_a = a_ptr(r + 1), end_b = b_ptr(r + 1);
        while (ia < end_a && ib < end_b) {
          const local_index ca = from_a(a_col(ia)), cb = from_b(b_col(ib));
          ia += ca <= cb ? 1 : 0;
          ib += cb <= ca ? 1 : 0;
          ++length;
        }
        ptr(r + 1) = length + (end_a - ia) + (end_b - ib);
      });
  return ptr;
}

/// Row r of A + B from ptr(r) on: the two sorted lists merged, `combine(a, b)` where both store a
/// column. A named functor, not a lambda: it holds the user's callable (see elementwise.hpp).
template <class T, class Mem, class Combine>
struct write_merged_rows {
  Kokkos::View<const offset_type*, Mem> a_ptr, b_ptr, ptr;
  Kokkos::View<const local_index*, Mem> a_col, b_col, from_a, from_b;
  Kokkos::View<const T*, Mem> a_val, b_val;
  Kokkos::View<local_index*, Mem> col;
  Kokkos::View<T*, Mem> val;
  Combine combine;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t r) const {
    offset_type ia = a_ptr(r), ib = b_ptr(r), w = ptr(r);
    const offset_type end_a = a_ptr(r + 1), end_b = b_ptr(r + 1);
    for (; ia < end_a && ib < end_b; ++w) {
      const local_index ca = from_a(a_col(ia)), cb = from_b(b_col(ib));
      if (ca < cb) {
        col(w) = ca;
        val(w) = a_val(ia++);
      } else if (cb < ca) {
        col(w) = cb;
        val(w) = b_val(ib++);
      } else {
        col(w) = ca;
        val(w) = static_cast<T>(combine(a_val(ia++), b_val(ib++)));
      }
    }
    for (; ia < end_a; ++ia, ++w) {
      col(w) = from_a(a_col(ia));
      val(w) = a_val(ia);
    }
    for (; ib < end_b; ++ib, ++w) {
      col(w) = from_b(b_col(ib));
      val(w) = b_val(ib);
    }
  }
};

/// This rank's block of A + B and its column map (A and B split rows alike; not collective).
template <class Exec, class T, class Mem, class Combine>
std::pair<csr_block<T, Mem>, Kokkos::View<global_index*, Mem>> add_local(const csr_block<T, Mem>& a,
                                                                         const Kokkos::View<global_index*, Mem>& a_map,
                                                                         const csr_block<T, Mem>& b,
                                                                         const Kokkos::View<global_index*, Mem>& b_map,
                                                                         const Combine& combine) {
  const auto columns = merge_column_maps<Exec, Mem>(a_map, b_map);
  const auto ptr = merged_row_counts<Exec>(a, b, columns);
  const offset_type total = inclusive_scan_in_place<Exec, Mem>(ptr, "tessera::add::scan");
  csr_block<T, Mem> c{a.rows, static_cast<local_index>(columns.map.extent(0)), ptr,
                      Kokkos::View<local_index*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::add::col_idx")),
                                                      static_cast<std::size_t>(total)),
                      Kokkos::View<T*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::add::values")),
                                            static_cast<std::size_t>(total))};
  Kokkos::parallel_for("tessera::add::write", Kokkos::RangePolicy<Exec>(0, static_cast<std::size_t>(a.rows)),
                       write_merged_rows<T, Mem, Combine>{a.row_ptr, b.row_ptr, ptr, a.col_idx, b.col_idx, columns.from_a,
                                                          columns.from_b, a.values, b.values, c.col_idx, c.values, combine});
  Exec().fence();
  return {c, columns.map};
}

}  // namespace tessera::detail
