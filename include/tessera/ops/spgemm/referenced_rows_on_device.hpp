#pragma once
/// @file
/// B^, the rows of B that A's local columns reference (B's own rows read in place, fetched rows
/// from the fetch), assembled in B's memory space by kernels, with compressed local columns:
/// what a device SpGEMM multiplies A by. The host touches only the fetched rows (MPI staging)
/// and, when rows were fetched, the merge of two sorted column lists.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_REFERENCED_ROWS_ON_DEVICE_HPP
#endif

#include "../../core/deep_copy.hpp"
#include "../../core/index_types.hpp"
#include "../../core/scratch_pool.hpp"
#include "../../kernels/sorted_search.hpp"
#include "../../matrix/to_view.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../storage/csr.hpp"
#include "fetch.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

namespace tessera::detail {

/// B^ as compressed rows in memory space Mem: row c is the row of B that A's local column c names;
/// columns are local to `col_map` (sorted, every one of them used).
template <class T, class Mem>
struct compressed_operand {
  Kokkos::View<offset_type*, Mem> ptr;
  Kokkos::View<local_index*, Mem> cols;
  Kokkos::View<T*, Mem> values;
  Kokkos::View<global_index*, Mem> col_map;
};

/// Position of each of `wanted` in the sorted `space` (every one is there).
template <class Exec, class Mem>
Kokkos::View<local_index*, Mem> positions_in(const Exec& exec, const Kokkos::View<const global_index*, Mem>& wanted,
                                             const Kokkos::View<const global_index*, Mem>& space) {
  Kokkos::View<local_index*, Mem> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::positions"),
                                      wanted.extent(0));
  const std::size_t n = space.extent(0);
  Kokkos::parallel_for("tessera::spgemm::positions", Kokkos::RangePolicy<Exec>(exec, 0, wanted.extent(0)),
                       KOKKOS_LAMBDA(const std::size_t k) {
                         out(k) = static_cast<local_index>(kernels::lower_bound_in(space, n, wanted(k)));
                       });
  return out;
}

/// B^ on execution space Exec from B's local arrays (see the file's comment). Templated on the
/// space and the value type only, not on the policy: a program that multiplies under several
/// backends or distributions compiles these kernels once (under nvcc, each policy's copy was
/// another eighteen device kernels to generate and launch).
template <class Exec, class T, class Mem>
compressed_operand<T, Mem> compress_referenced_rows(const Exec& space, const Kokkos::View<const global_index*, Mem>& a_map,
                                                    const csr_block<T, Mem>& b_local,
                                                    const Kokkos::View<const global_index*, Mem>& b_map,
                                                    const referenced_rows<T>& fetched) {
  using exec = Exec;
  using mem = Mem;
  using range = Kokkos::RangePolicy<exec>;
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const auto b_ptr = b_local.row_ptr;
  const auto b_col = b_local.col_idx;
  const auto b_val = b_local.values;
  const std::size_t rows = a_map.extent(0);
  // Every column of A a local row of B (local_row_base): the sources from A's column map, here.
  Kokkos::View<local_index*, mem> source;
  std::optional<scratch<local_index, mem>> local_sources;
  if (fetched.local_row_base) {
    local_sources.emplace(rows);
    source = local_sources->view();
    const global_index base = *fetched.local_row_base;
    Kokkos::parallel_for("tessera::spgemm::local_sources", range(space, 0, rows),
                         KOKKOS_LAMBDA(const std::size_t c) { source(c) = static_cast<local_index>(a_map(c) - base); });
  } else {
    source = to_view<local_index, mem>(fetched.source, "tessera::spgemm::source");
  }
  const auto f_ptr = to_view<offset_type, mem>(fetched.ptr, "tessera::spgemm::fetched_ptr");
  const auto f_col = to_view<global_index, mem>(fetched.cols, "tessera::spgemm::fetched_cols");
  const auto f_val = to_view<T, mem>(fetched.values, "tessera::spgemm::fetched_values");

  // Every column B^ may hold: B's column map, merged with the fetched rows' columns (on the host:
  // both lists are sorted; the fetched ones arrived through the host anyway).
  Kokkos::View<const global_index*, mem> all_columns = b_map;
  Kokkos::View<const local_index*, mem> b_position, f_position;  // into all_columns; empty: the identity
  if (!fetched.cols.empty()) {
    std::vector<global_index> received = fetched.cols;
    std::sort(received.begin(), received.end());
    received.erase(std::unique(received.begin(), received.end()), received.end());
    const auto own = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b_map);
    std::vector<global_index> merged;
    merged.reserve(own.extent(0) + received.size());
    std::set_union(own.data(), own.data() + own.extent(0), received.begin(), received.end(), std::back_inserter(merged));
    Kokkos::View<global_index*, mem> columns(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::columns"),
                                             merged.size());
    tessera::detail::deep_copy(columns, Kokkos::View<const global_index*, Kokkos::HostSpace, unmanaged>(merged.data(), merged.size()));
    all_columns = columns;
    b_position = positions_in<exec, mem>(space, b_map, all_columns);
    f_position = positions_in<exec, mem>(space, Kokkos::View<const global_index*, mem>(f_col), all_columns);
  }
  const bool identity = fetched.cols.empty();
  // A's columns name B's own rows, in order (one rank; or a block-diagonal A): B^'s rows are B's.
  bool same_rows = identity && rows == static_cast<std::size_t>(b_local.num_rows());
  // With local_row_base the sources are distinct, ascending and within B's rows: as many as B has
  // rows is every row, in order.
  if (same_rows && !fetched.local_row_base) {
    std::size_t moved = 0;
    Kokkos::parallel_reduce("tessera::spgemm::rows_moved", range(space, 0, rows),
                            KOKKOS_LAMBDA(const std::size_t c, std::size_t& acc) { acc += source(c) == static_cast<local_index>(c) ? 0 : 1; },
                            moved);
    same_rows = moved == 0;
  }

  compressed_operand<T, mem> out;
  if (same_rows) {
    out.ptr = b_ptr;
  } else {
    out.ptr = Kokkos::View<offset_type*, mem>("tessera::spgemm::bhat_ptr", rows + 1);
    const auto ptr = out.ptr;
    Kokkos::parallel_scan("tessera::spgemm::bhat_ptr", range(space, 0, rows),
                          KOKKOS_LAMBDA(const std::size_t c, offset_type& before, const bool final) {
                            const local_index s = source(c);
                            const offset_type length = s >= 0 ? b_ptr(s + 1) - b_ptr(s) : f_ptr(-s) - f_ptr(-s - 1);
                            before += length;
                            if (final) ptr(c + 1) = before;
                          });
  }
  const auto ptr = out.ptr;
  offset_type nnz = 0;
  tessera::detail::deep_copy(nnz, Kokkos::subview(out.ptr, rows));

  // Which columns B^ uses, then their compressed numbering.
  const scratch<int, mem> used_scratch(all_columns.extent(0));
  const Kokkos::View<int*, mem> used = used_scratch.view();
  tessera::detail::deep_copy(space, used, 0);
  // An entry's column in all_columns: B's own rows through b_position (or as they are, when
  // nothing was fetched), fetched rows through f_position.
  Kokkos::parallel_for("tessera::spgemm::mark_columns", range(space, 0, rows), KOKKOS_LAMBDA(const std::size_t c) {
    const local_index s = source(c);
    const offset_type begin = s >= 0 ? b_ptr(s) : f_ptr(-s - 1), end = s >= 0 ? b_ptr(s + 1) : f_ptr(-s);
    for (offset_type e = begin; e < end; ++e) {
      const local_index j = s >= 0 ? (identity ? b_col(e) : b_position(b_col(e))) : f_position(e);
      Kokkos::atomic_or(&used(j), 1);
    }
  });
  local_index kept = 0;
  Kokkos::parallel_reduce("tessera::spgemm::count_used", range(space, 0, all_columns.extent(0)),
                          KOKKOS_LAMBDA(const std::size_t j, local_index& acc) { acc += used(j) ? 1 : 0; }, kept);
  if (same_rows && static_cast<std::size_t>(kept) == all_columns.extent(0)) {
    // B^ is B: its arrays read in place (the product only reads them); the column map copied,
    // since C keeps it.
    out.cols = b_col;
    out.values = b_val;
    out.col_map = Kokkos::View<global_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::col_map"),
                                                   b_map.extent(0));
    tessera::detail::deep_copy(space, out.col_map, b_map);
    space.fence();
    return out;
  }
  const scratch<local_index, mem> renumber_scratch(all_columns.extent(0));
  const Kokkos::View<local_index*, mem> renumber = renumber_scratch.view();
  Kokkos::parallel_scan("tessera::spgemm::renumber", range(space, 0, all_columns.extent(0)),
                        KOKKOS_LAMBDA(const std::size_t j, local_index& before, const bool final) {
                          if (final) renumber(j) = before;
                          before += used(j) ? 1 : 0;
                        });
  out.col_map = Kokkos::View<global_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::col_map"),
                                                 static_cast<std::size_t>(kept));
  const auto col_map = out.col_map;
  Kokkos::parallel_for("tessera::spgemm::col_map", range(space, 0, all_columns.extent(0)), KOKKOS_LAMBDA(const std::size_t j) {
    if (used(j)) col_map(renumber(j)) = all_columns(j);
  });

  out.cols = Kokkos::View<local_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::bhat_cols"),
                                             static_cast<std::size_t>(nnz));
  out.values = Kokkos::View<T*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::bhat_values"),
                                     static_cast<std::size_t>(nnz));
  const auto cols = out.cols;
  const auto values = out.values;
  Kokkos::parallel_for("tessera::spgemm::bhat_fill", range(space, 0, rows), KOKKOS_LAMBDA(const std::size_t c) {
    const local_index s = source(c);
    const offset_type begin = s >= 0 ? b_ptr(s) : f_ptr(-s - 1), end = s >= 0 ? b_ptr(s + 1) : f_ptr(-s);
    offset_type at = ptr(c);
    for (offset_type e = begin; e < end; ++e, ++at) {
      const local_index j = s >= 0 ? (identity ? b_col(e) : b_position(b_col(e))) : f_position(e);
      cols(at) = renumber(j);
      values(at) = s >= 0 ? b_val(e) : f_val(e);
    }
  });
  space.fence();
  return out;
}

/// B^ on B's execution space (see the file's comment).
template <matrix_value T, matrix_policy Policy>
compressed_operand<T, typename Policy::memory_space> referenced_rows_on_device(const dist_matrix<T, Policy>& a,
                                                                               const dist_matrix<T, Policy>& b,
                                                                               const referenced_rows<T>& fetched) {
  using mem = typename Policy::memory_space;
  return compress_referenced_rows(typename Policy::execution_space{}, Kokkos::View<const global_index*, mem>(a.col_map()),
                                  b.local(), Kokkos::View<const global_index*, mem>(b.col_map()), fetched);
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_REFERENCED_ROWS_ON_DEVICE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_REFERENCED_ROWS_ON_DEVICE_HPP
#endif
