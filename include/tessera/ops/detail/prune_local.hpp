#pragma once
/// @file
/// prune on one rank's csr block, in the execution space: the entries a predicate drops leave
/// their rows (a count, a scan, a write) and the columns no kept entry uses leave the column map
/// (marked, scanned, renumbered in order, so rows stay sorted and the map ascending). No triplets,
/// no host pass, nothing sent: the rank keeps its rows.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/prune_local.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/calling_thread.hpp"
#include "../../core/index_types.hpp"
#include "../../storage/csr.hpp"
#include "row_offsets_scan.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

namespace tessera::detail {

/// Sets used(c + 1) to 1. Several rows may mark one column at once: an atomic where work items run
/// concurrently, a plain store where they run one after another.
template <class Exec, class Used>
KOKKOS_INLINE_FUNCTION void mark_used(const Used& used, const local_index c) {
  if constexpr (runs_on_calling_thread<Exec>)
    used(static_cast<std::size_t>(c) + 1) = 1;
  else
    Kokkos::atomic_fetch_or(&used(static_cast<std::size_t>(c) + 1), typename Used::value_type{1});
}

/// out_ptr(r + 1) = the entries of row r that `drop` keeps; used(c + 1) = 1 for each of their columns.
template <class Exec, class Ptr, class Col, class Val, class Counts, class Predicate>
struct count_and_mark_kept {
  Ptr in_ptr;
  Col in_col;
  Val in_val;
  Counts out_ptr;
  Counts used;
  Predicate drop;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t r) const {
    typename Counts::value_type kept = 0;
    for (auto e = in_ptr(r); e < in_ptr(r + 1); ++e) {
      if (drop(in_val(e))) continue;
      ++kept;
      mark_used<Exec>(used, in_col(e));
    }
    out_ptr(r + 1) = kept;
  }
};

/// The kept entries of row r from out_ptr(r) on, columns renumbered by the used-column scan.
template <class Ptr, class Col, class Val, class Scan, class OutCol, class OutVal, class Predicate>
struct write_kept_renumbered {
  Ptr in_ptr;
  Col in_col;
  Val in_val;
  Scan out_ptr;
  Scan column_position;
  OutCol out_col;
  OutVal out_val;
  Predicate drop;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t r) const {
    auto w = out_ptr(r);
    for (auto e = in_ptr(r); e < in_ptr(r + 1); ++e) {
      if (drop(in_val(e))) continue;
      out_col(w) = static_cast<local_index>(column_position(static_cast<std::size_t>(in_col(e))));
      out_val(w) = in_val(e);
      ++w;
    }
  }
};

/// The entries of `col_map` whose columns are used (position(c + 1) != position(c)), in order.
/// Not templated on a user's callable, so its KOKKOS_LAMBDA is allowed (see elementwise.hpp).
template <class Exec, class Mem>
Kokkos::View<global_index*, Mem> kept_column_map(const Kokkos::View<const global_index*, Mem>& col_map,
                                                 const Kokkos::View<const offset_type*, Mem>& position,
                                                 const std::size_t kept_columns) {
  Kokkos::View<global_index*, Mem> kept(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::prune::col_map")),
                                        kept_columns);
  Kokkos::parallel_for(
      "tessera::prune::col_map", Kokkos::RangePolicy<Exec>(0, col_map.extent(0)), KOKKOS_LAMBDA(const std::size_t c) {
        if (position(c + 1) != position(c)) kept(static_cast<std::size_t>(position(c))) = col_map(c);
      });
  return kept;
}

/// The block without the entries `drop` is true for, and the column map without the columns none
/// of the kept entries use. Where nothing is dropped and every column stays, the input's Views
/// come back as they are.
template <class Exec, class T, class Mem, class Predicate>
std::pair<csr_block<T, Mem>, Kokkos::View<global_index*, Mem>> prune_local(
    const csr_block<T, Mem>& in, const Kokkos::View<global_index*, Mem>& col_map, const Predicate& drop) {
  const auto rows = static_cast<std::size_t>(in.rows);
  const auto columns = col_map.extent(0);
  const auto in_ptr = in.row_ptr;
  const auto in_col = in.col_idx;
  const auto in_val = in.values;
  Kokkos::View<offset_type*, Mem> ptr("tessera::prune::row_ptr", rows + 1);
  Kokkos::View<offset_type*, Mem> used("tessera::prune::used", columns + 1);
  Kokkos::parallel_for("tessera::prune::count", Kokkos::RangePolicy<Exec>(0, rows),
                       count_and_mark_kept<Exec, decltype(in_ptr), decltype(in_col), decltype(in_val), decltype(ptr),
                                           Predicate>{in_ptr, in_col, in_val, ptr, used, drop});
  const offset_type total = inclusive_scan_in_place<Exec, Mem>(ptr, "tessera::prune::scan");
  const auto kept_columns = static_cast<std::size_t>(inclusive_scan_in_place<Exec, Mem>(used, "tessera::prune::columns"));
  if (static_cast<std::size_t>(total) == in_val.extent(0) && kept_columns == columns) return {in, col_map};

  csr_block<T, Mem> out{in.rows, static_cast<local_index>(kept_columns), ptr,
                        Kokkos::View<local_index*, Mem>(
                            Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::prune::col_idx")),
                            static_cast<std::size_t>(total)),
                        Kokkos::View<T*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::prune::values")),
                                              static_cast<std::size_t>(total))};
  const Kokkos::View<const offset_type*, Mem> kept_ptr = ptr;
  const Kokkos::View<const offset_type*, Mem> position = used;  // position(c): the kept columns before c
  Kokkos::parallel_for("tessera::prune::write", Kokkos::RangePolicy<Exec>(0, rows),
                       write_kept_renumbered<decltype(in_ptr), decltype(in_col), decltype(in_val), decltype(kept_ptr),
                                             decltype(out.col_idx), decltype(out.values), Predicate>{
                           in_ptr, in_col, in_val, kept_ptr, position, out.col_idx, out.values, drop});
  const auto kept_map = kept_column_map<Exec, Mem>(col_map, position, kept_columns);
  Exec().fence();
  return {out, kept_map};
}

}  // namespace tessera::detail
