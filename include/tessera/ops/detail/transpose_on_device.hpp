#pragma once
/// @file
/// The routing transpose on a device: every phase in the policy's execution space, on device data.
/// The host touches only the entries that leave the rank (MPI staging) and, when some arrive,
/// the merge of two sorted column lists into A^T's column map.

#include "../../concepts/distribution.hpp"
#include "../../core/error.hpp"
#include "../../kernels/bucket_sort.hpp"
#include "../../matrix/detail/route.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../storage/coo.hpp"
#include "../../storage/csr.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <concepts>
#include <iterator>
#include <span>
#include <vector>

namespace tessera::detail {

/// A's local entries as (local row, local column, value) Views in A's memory space.
template <class T, class Mem>
struct device_entries {
  Kokkos::View<const local_index*, Mem> row, col;
  Kokkos::View<const T*, Mem> value;
};

template <class T, class Policy>
device_entries<T, typename Policy::memory_space> entries_on_device(const dist_matrix<T, Policy>& a) {
  using exec = typename Policy::execution_space;
  using mem = typename Policy::memory_space;
  using storage = typename Policy::storage_type;
  const exec space{};
  if constexpr (std::same_as<storage, csr>) {
    const auto& block = a.local();
    return {kernels::expand_groups<exec, mem>(space, block.row_ptr), block.col_idx, block.values};
  } else {
    const auto coo = storage::to_coo(space, a.local());
    return {coo.row_idx, coo.col_idx, coo.values};
  }
}

/// The entries of A that stay on this rank, written as rows and columns of A^T: primary(k) its
/// local row of A^T, global_column(k) its global column (A's global row), value(k).
template <class T, class Mem>
struct transposed_entries {
  Kokkos::View<local_index*, Mem> primary;
  Kokkos::View<global_index*, Mem> global_column;
  Kokkos::View<T*, Mem> value;
};

/// Split A's entries: those whose row of A^T (A's global column) lies in [lo, hi) stay, written
/// transposed into `staying` from position 0; the others are returned on the host as triplets
/// (j, i, v) for routing. `used(i)` is set for every A row with a staying entry.
template <class Exec, class T, class Mem>
triplets<T> split_staying(const Exec& space, const device_entries<T, Mem>& in,
                          const Kokkos::View<const global_index*, Mem>& col_map, global_index a_first, global_index lo,
                          global_index hi, const transposed_entries<T, Mem>& staying, offset_type staying_count,
                          const Kokkos::View<int*, Mem>& used) {
  using range = Kokkos::RangePolicy<Exec>;
  const auto n = static_cast<offset_type>(in.value.extent(0));
  const auto row = in.row;
  const auto col = in.col;
  const auto value = in.value;
  const auto primary = staying.primary;
  const auto column = staying.global_column;
  const auto out_value = staying.value;
  triplets<T> away;
  if (staying_count == n) {  // everything stays (one rank, or a block-diagonal A): no scan
    Kokkos::parallel_for("tessera::transpose_stay", range(space, 0, n), KOKKOS_LAMBDA(const offset_type e) {
      primary(e) = static_cast<local_index>(col_map(col(e)) - lo);
      column(e) = a_first + row(e);
      out_value(e) = value(e);
      Kokkos::atomic_or(&used(row(e)), 1);
    });
    return away;
  }
  const auto leaving = static_cast<std::size_t>(n - staying_count);
  Kokkos::View<global_index*, Mem> away_row("tessera::transpose_away_row", leaving), away_col("tessera::transpose_away_col", leaving);
  Kokkos::View<T*, Mem> away_value("tessera::transpose_away_value", leaving);
  // One scan numbers both sets: staying entries count in the low 40 bits, leaving ones above.
  Kokkos::parallel_scan(
      "tessera::transpose_split", range(space, 0, n), KOKKOS_LAMBDA(const offset_type e, std::int64_t& before, const bool final) {
        const global_index j = col_map(col(e));
        const bool stays = j >= lo && j < hi;
        if (final) {
          constexpr std::int64_t low = (std::int64_t{1} << 40) - 1;
          if (stays) {
            const offset_type k = before & low;
            primary(k) = static_cast<local_index>(j - lo);
            column(k) = a_first + row(e);
            out_value(k) = value(e);
            Kokkos::atomic_or(&used(row(e)), 1);
          } else {
            const auto k = static_cast<std::size_t>(before >> 40);
            away_row(k) = j;
            away_col(k) = a_first + row(e);
            away_value(k) = value(e);
          }
        }
        before += stays ? std::int64_t{1} : (std::int64_t{1} << 40);
      });
  const auto h_row = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, away_row);
  const auto h_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, away_col);
  const auto h_value = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, away_value);
  away.rows.assign(h_row.data(), h_row.data() + leaving);
  away.cols.assign(h_col.data(), h_col.data() + leaving);
  away.values.assign(h_value.data(), h_value.data() + leaving);
  return away;
}

/// Local column of A^T of every global column, by binary search in the sorted column map.
template <class Exec, class Mem>
void columns_by_search(const Exec& space, const Kokkos::View<const global_index*, Mem>& global_column,
                       const Kokkos::View<const global_index*, Mem>& col_map, const Kokkos::View<local_index*, Mem>& out) {
  const auto n = col_map.extent(0);
  Kokkos::parallel_for("tessera::transpose_columns", Kokkos::RangePolicy<Exec>(space, 0, global_column.extent(0)),
                       KOKKOS_LAMBDA(const std::size_t k) {
                         const global_index g = global_column(k);
                         std::size_t first = 0, count = n;
                         while (count > 0) {
                           const std::size_t half = count / 2;
                           if (col_map(first + half) < g) {
                             first += half + 1;
                             count -= half + 1;
                           } else {
                             count = half;
                           }
                         }
                         out(k) = static_cast<local_index>(first);
                       });
}

/// The global ids a_first + i of the A rows with used(i) set, ascending.
template <class Exec, class Mem>
Kokkos::View<global_index*, Mem> used_rows(const Exec& space, const Kokkos::View<const int*, Mem>& used, global_index a_first) {
  using range = Kokkos::RangePolicy<Exec>;
  const auto rows = static_cast<offset_type>(used.extent(0));
  offset_type count = 0;
  Kokkos::parallel_reduce("tessera::transpose_count_used", range(space, 0, rows),
                          KOKKOS_LAMBDA(const offset_type i, offset_type& acc) { acc += used(i) ? 1 : 0; }, count);
  Kokkos::View<global_index*, Mem> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_col_map"),
                                       static_cast<std::size_t>(count));
  Kokkos::parallel_scan("tessera::transpose_used_rows", range(space, 0, rows),
                        KOKKOS_LAMBDA(const offset_type i, offset_type& before, const bool final) {
                          if (used(i)) {
                            if (final) out(before) = a_first + i;
                            ++before;
                          }
                        });
  return out;
}

/// transpose_by_routing with every phase on A's execution space (see the file's comment). Both
/// A's and A^T's rows are contiguous ranges, so a row's owner and local index are arithmetic
/// that kernels can do.
template <matrix_value T, matrix_policy Policy>
  requires contiguous_row_mapping<typename Policy::mapping_type>
dist_matrix<T, Policy> transpose_by_routing_on_device(const dist_matrix<T, Policy>& a,
                                                      const typename Policy::mapping_type& result_rows) {
  using exec = typename Policy::execution_space;
  using mem = typename Policy::memory_space;
  using storage = typename Policy::storage_type;
  using matrix = dist_matrix<T, Policy>;
  using range = Kokkos::RangePolicy<exec>;
  const auto& comm = a.comm();
  const int me = comm.rank();
  const exec space{};
  const global_index lo = result_rows.row_begin(me), hi = result_rows.row_end(me);
  const global_index a_first = a.mapping().row_begin(me);
  const auto my_rows = static_cast<std::size_t>(hi - lo);
  comm.collectively([&] {
    TESSERA_REQUIRE(my_rows <= static_cast<std::size_t>(INT_MAX), unsupported,
                    "rank {} would own {} local rows; at most {} are supported", me, my_rows, INT_MAX);
  });

  const auto in = entries_on_device(a);
  const Kokkos::View<const global_index*, mem> col_map = a.col_map();
  const auto n = static_cast<offset_type>(in.value.extent(0));
  offset_type staying_count = 0;
  {
    const auto col = in.col;
    Kokkos::parallel_reduce("tessera::transpose_count_staying", range(space, 0, n),
                            KOKKOS_LAMBDA(const offset_type e, offset_type& acc) {
                              const global_index j = col_map(col(e));
                              acc += (j >= lo && j < hi) ? 1 : 0;
                            },
                            staying_count);
  }
  transposed_entries<T, mem> staying{
      Kokkos::View<local_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_rows"),
                                      static_cast<std::size_t>(staying_count)),
      Kokkos::View<global_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_global_cols"),
                                       static_cast<std::size_t>(staying_count)),
      Kokkos::View<T*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_values"),
                            static_cast<std::size_t>(staying_count))};
  const Kokkos::View<int*, mem> used("tessera::transpose_used", static_cast<std::size_t>(a.local().num_rows()));
  auto away = split_staying<exec, T, mem>(space, in, col_map, a_first, lo, hi, staying, staying_count, used);
  const typename Policy::backend_type backend{};
  auto arrived = route_to_owners<T>(comm, backend, result_rows, std::span<const global_index>(away.rows),
                                    std::span<const global_index>(away.cols), std::span<const T>(away.values));
  away = {};

  // A^T's column map: A's rows with a staying entry, merged with the arrived entries' columns.
  Kokkos::View<global_index*, mem> columns = used_rows<exec, mem>(space, used, a_first);
  const auto total = static_cast<std::size_t>(staying_count) + arrived.size();
  Kokkos::View<local_index*, mem> primary = staying.primary;
  Kokkos::View<global_index*, mem> global_column = staying.global_column;
  Kokkos::View<T*, mem> value = staying.value;
  comm.collectively([&] {  // every rank, arrivals or not: the check is collective
    for (const global_index r : arrived.rows)
      TESSERA_REQUIRE(r >= lo && r < hi, internal, "row {} of the transpose reached rank {} but belongs to rank {}", r, me,
                      result_rows.row_owner(r));
  });
  if (arrived.size() > 0) {
    std::vector<global_index> received = arrived.cols;
    std::sort(received.begin(), received.end());
    received.erase(std::unique(received.begin(), received.end()), received.end());
    const auto own = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, columns);
    std::vector<global_index> merged;
    merged.reserve(own.extent(0) + received.size());
    std::set_union(own.data(), own.data() + own.extent(0), received.begin(), received.end(), std::back_inserter(merged));
    columns = Kokkos::View<global_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_col_map"),
                                               merged.size());
    Kokkos::deep_copy(columns, Kokkos::View<const global_index*, Kokkos::HostSpace>(merged.data(), merged.size()));
    // The staying entries followed by the arrived ones (input order: a transpose has no duplicates).
    primary = Kokkos::View<local_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_rows"), total);
    global_column = Kokkos::View<global_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_global_cols"), total);
    value = Kokkos::View<T*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_values"), total);
    const auto head = std::make_pair(std::size_t{0}, static_cast<std::size_t>(staying_count));
    const auto tail = std::make_pair(static_cast<std::size_t>(staying_count), total);
    Kokkos::deep_copy(Kokkos::subview(primary, head), staying.primary);
    Kokkos::deep_copy(Kokkos::subview(global_column, head), staying.global_column);
    Kokkos::deep_copy(Kokkos::subview(value, head), staying.value);
    std::vector<local_index> arrived_rows(arrived.size());
    for (std::size_t k = 0; k < arrived.size(); ++k) arrived_rows[k] = static_cast<local_index>(arrived.rows[k] - lo);
    using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    Kokkos::deep_copy(Kokkos::subview(primary, tail), Kokkos::View<local_index*, Kokkos::HostSpace, unmanaged>(arrived_rows.data(), arrived.size()));
    Kokkos::deep_copy(Kokkos::subview(global_column, tail), Kokkos::View<global_index*, Kokkos::HostSpace, unmanaged>(arrived.cols.data(), arrived.size()));
    Kokkos::deep_copy(Kokkos::subview(value, tail), Kokkos::View<T*, Kokkos::HostSpace, unmanaged>(arrived.values.data(), arrived.size()));
  }
  comm.collectively([&] {
    TESSERA_REQUIRE(columns.extent(0) <= static_cast<std::size_t>(INT_MAX), unsupported,
                    "rank {} touches {} distinct columns; at most {} are supported", me, columns.extent(0), INT_MAX);
  });
  const Kokkos::View<local_index*, mem> local_column(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_local_cols"), total);
  columns_by_search<exec, mem>(space, global_column, columns, local_column);

  // Rows of A^T by a counting sort, each row sorted by column (unique in a transpose: the same
  // result whatever order the device's atomics scattered it in).
  const auto grouped = kernels::group_and_sort<exec, local_index, T, mem>(space, static_cast<local_index>(my_rows), primary,
                                                                          local_column, value);
  const auto block_rows = static_cast<local_index>(my_rows);
  const auto block_cols = static_cast<local_index>(columns.extent(0));
  typename matrix::local_block_type block;
  if constexpr (std::same_as<storage, csr>) {
    block = {block_rows, block_cols, grouped.ptr, grouped.keys, grouped.values};
  } else {
    auto row_idx = kernels::expand_groups<exec, mem>(space, grouped.ptr);
    block = storage::from_coo(space, coo_block<T, mem>{block_rows, block_cols, row_idx, grouped.keys, grouped.values});
  }
  space.fence();
  return matrix(comm, result_rows, std::move(block), std::move(columns), a.global_nnz());
}

}  // namespace tessera::detail
