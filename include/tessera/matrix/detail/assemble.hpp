#pragma once
/// @file
/// Turning the entries a rank owns into its local block.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/matrix/detail/assemble.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/deep_copy.hpp"
#include "../../core/error.hpp"
#include "../../kernels/bucket_sort.hpp"
#include "../../storage/csr.hpp"
#include "../dist_matrix.hpp"
#include "compress_columns.hpp"
#include "../triplets.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <concepts>

namespace tessera::detail {

/// Whether `rank` keeps a replica of entry (i, j) (never, for mappings without replicas).
template <class Mapping>
bool holds_replica(const Mapping& mapping, global_index i, global_index j, int rank) {
  if constexpr (replicated_mapping<Mapping>) {
    const auto r = mapping.replicas(i, j);
    return std::find(r.begin(), r.end(), rank) != r.end();
  } else {
    return false;
  }
}

/// Row pointers of entries whose rows are non-decreasing (`rows`, on the host), in `Mem`.
template <class Mem>
Kokkos::View<offset_type*, Mem> in_order_row_pointers(const Kokkos::View<const local_index*, Kokkos::HostSpace>& rows,
                                                      const local_index num_rows) {
  Kokkos::View<offset_type*, Kokkos::HostSpace> ptr("tessera::row_ptr", static_cast<std::size_t>(num_rows) + 1);
  for (std::size_t k = 0; k < rows.extent(0); ++k) ++ptr(static_cast<std::size_t>(rows(k)) + 1);
  for (std::size_t r = 0; r < static_cast<std::size_t>(num_rows); ++r) ptr(r + 1) += ptr(r);
  return Kokkos::create_mirror_view_and_copy(Mem{}, ptr);
}

/// Collective: build the matrix from the entries this rank owns under `mapping`
/// (global indices, any order, duplicates combined with `combine`).
///
/// The column map is built on the host (sort + unique of the columns); the
/// grouping by row, the sort within rows and the combining of duplicates run
/// as Kokkos kernels in the policy's execution space.
template <class T, class Policy, class Combine>
dist_matrix<T, Policy> assemble_owned(const communicator& comm, const typename Policy::mapping_type& mapping,
                                      const triplets<T>& owned, Combine combine) {
  using exec = typename Policy::execution_space;
  using mem = typename Policy::memory_space;
  using storage = typename Policy::storage_type;
  using matrix = dist_matrix<T, Policy>;

  auto [local, col_map] = comm.collectively([&] {
    const int me = comm.rank();
    const local_extents ext = mapping.extents(me);
    TESSERA_REQUIRE(ext.rows <= INT_MAX, unsupported, "rank {} would own {} local rows; at most {} are supported", me,
                    ext.rows, INT_MAX);
    const std::size_t n = owned.size();

    // Linear-time when the column space is small next to the entries (compress_columns).
    // Column indices stay global (the column map holds them): the space is the global column count,
    // not this rank's extent (smaller under 2-D distributions).
    auto [distinct_cols, local_cols] = compress_columns(owned.cols, mapping.global_cols());
    TESSERA_REQUIRE(distinct_cols.size() <= static_cast<std::size_t>(INT_MAX), unsupported,
                    "rank {} touches {} distinct columns; at most {} are supported", me, distinct_cols.size(), INT_MAX);

    Kokkos::View<local_index*, Kokkos::HostSpace> h_rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "rows"), n);
    Kokkos::View<local_index*, Kokkos::HostSpace> h_cols(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cols"), n);
    Kokkos::View<T*, Kokkos::HostSpace> h_vals(Kokkos::view_alloc(Kokkos::WithoutInitializing, "vals"), n);
    // Entries already in (row, column) order without repeats (a file or a generator written row
    // by row) are the block as they stand: no grouping, sorting or combining to do.
    bool in_order = true;
    for (std::size_t k = 0; k < n; ++k) {
      const local_coordinate lc = mapping.to_local(owned.rows[k], owned.cols[k]);
      // A replica stores an entry at the primary's local position (replicated_mapping).
      TESSERA_REQUIRE(lc.rank == me || holds_replica(mapping, owned.rows[k], owned.cols[k], me), internal, "entry ({}, {}) reached rank {} but belongs to rank {}", owned.rows[k],
                      owned.cols[k], me, lc.rank);
      h_rows(k) = static_cast<local_index>(lc.row);
      h_cols(k) = local_cols[k];
      h_vals(k) = owned.values[k];
      if (k > 0)
        in_order = in_order && (h_rows(k - 1) < h_rows(k) || (h_rows(k - 1) == h_rows(k) && h_cols(k - 1) < h_cols(k)));
    }
    Kokkos::View<global_index*, Kokkos::HostSpace> h_col_map(distinct_cols.data(), distinct_cols.size());

    auto rows = Kokkos::create_mirror_view_and_copy(mem{}, h_rows);
    auto cols = Kokkos::create_mirror_view_and_copy(mem{}, h_cols);
    auto vals = Kokkos::create_mirror_view_and_copy(mem{}, h_vals);
    Kokkos::View<global_index*, mem> col_map(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::col_map"),
                                             distinct_cols.size());
    tessera::detail::deep_copy(col_map, h_col_map);

    const exec space{};
    const auto num_rows = static_cast<local_index>(ext.rows);
    const auto num_cols = static_cast<local_index>(distinct_cols.size());
    const auto grouped = in_order ? kernels::grouped_entries<local_index, T, mem>{in_order_row_pointers<mem>(h_rows, num_rows), cols, vals}
                                  : kernels::combine_duplicates(
                                        space, kernels::group_and_sort<exec, local_index, T, mem>(space, num_rows, rows, cols, vals),
                                        combine);
    typename matrix::local_block_type block;
    if constexpr (std::same_as<storage, csr>) {
      block = {num_rows, num_cols, grouped.ptr, grouped.keys, grouped.values};
    } else {
      auto row_idx = kernels::expand_groups<exec, mem>(space, grouped.ptr);
      block = storage::from_coo(space, coo_block<T, mem>{num_rows, num_cols, row_idx, grouped.keys, grouped.values});
    }
    space.fence();
    return std::pair{block, col_map};
  });
  return matrix(assembled_block, comm, mapping, std::move(local), std::move(col_map));
}

}  // namespace tessera::detail
