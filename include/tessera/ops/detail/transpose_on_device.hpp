#pragma once
/// @file
/// The routing transpose on a device: every phase in the policy's execution space, on device data.
/// The host touches only the entries that leave the rank (MPI staging) and, when some arrive,
/// the merge of two sorted column lists into A^T's column map.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/transpose_on_device.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/deep_copy.hpp"
#include "../../concepts/distribution.hpp"
#include "../../core/error.hpp"
#include "../../core/profiling_region.hpp"
#include "../../core/scratch_pool.hpp"
#include "../../kernels/bucket_sort.hpp"
#include "../../kernels/sort_rows.hpp"
#include "../../kernels/sorted_search.hpp"
#include "../../kernels/stable_key_sort.hpp"
#include "../../matrix/to_view.hpp"
#include "../../matrix/detail/route.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../storage/coo.hpp"
#include "../../storage/csr.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <concepts>
#include <cstdint>
#include <limits>
#include <iterator>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

namespace tessera::detail {

/// A's local entries as (local row, local column, value) Views in A's memory space.
template <class T, class Mem>
struct device_entries {
  Kokkos::View<const local_index*, Mem> row, col;
  Kokkos::View<const T*, Mem> value;
};

/// With csr storage the row of each entry is expanded into `rows`, scratch that must outlive the
/// result.
template <class T, class Policy>
device_entries<T, typename Policy::memory_space> entries_on_device(
    const dist_matrix<T, Policy>& a, std::optional<scratch<local_index, typename Policy::memory_space>>& rows) {
  using exec = typename Policy::execution_space;
  using mem = typename Policy::memory_space;
  using storage = typename Policy::storage_type;
  const exec space{};
  if constexpr (std::same_as<storage, csr>) {
    const auto& block = a.local();
    const Kokkos::View<const offset_type*, mem> row_ptr = block.row_ptr;
    rows.emplace(static_cast<std::size_t>(block.nnz()));
    kernels::expand_groups_into(space, row_ptr, rows->view());
    return {rows->view(), block.col_idx, block.values};
  } else {
    const auto coo = storage::to_coo(space, a.local());
    return {coo.row_idx, coo.col_idx, coo.values};
  }
}

/// The entries of A that stay on this rank, written as rows of A^T: primary(k) its local row of
/// A^T, a_row(k) its local row of A (A^T's column, before numbering), value(k).
template <class T, class Mem>
struct transposed_entries {
  Kokkos::View<local_index*, Mem> primary;
  Kokkos::View<const local_index*, Mem> a_row;
  Kokkos::View<const T*, Mem> value;
};

/// Every entry stays (one rank, or a block-diagonal A): A's own rows and values are the transposed
/// entries' columns and values (two nnz-sized copies and their allocations saved; on an H100 the
/// gain was below the transpose's run-to-run spread); only `primary` (in.value's length) is
/// written. `in` is grouped by row (csr's expansion, and every storage's to_coo), so each row's
/// first entry marks it used: one writer per row, no atomics.
template <class Exec, class T, class Mem>
transposed_entries<T, Mem> all_staying(const Exec& space, const device_entries<T, Mem>& in,
                                       const Kokkos::View<const global_index*, Mem>& col_map, global_index lo,
                                       const Kokkos::View<int*, Mem>& used, const Kokkos::View<local_index*, Mem>& primary) {
  const std::size_t n = in.value.extent(0);
  const auto row = in.row;
  const auto col = in.col;
  Kokkos::parallel_for("tessera::transpose_stay", Kokkos::RangePolicy<Exec>(space, 0, n), KOKKOS_LAMBDA(const std::size_t e) {
    primary(e) = static_cast<local_index>(col_map(col(e)) - lo);
    if (e == 0 || row(e) != row(e - 1)) used(row(e)) = 1;
  });
  return {primary, in.row, in.value};
}

/// Split A's entries when some leave: those whose row of A^T (A's global column) lies in [lo, hi)
/// stay, written transposed into `staying` (allocated here) from position 0; the others are
/// returned on the host as triplets (j, i, v) for routing. `used(i)` is set for every A row with a
/// staying entry.
template <class Exec, class T, class Mem>
triplets<T> split_staying(const Exec& space, const device_entries<T, Mem>& in,
                          const Kokkos::View<const global_index*, Mem>& col_map, global_index a_first, global_index lo,
                          global_index hi, transposed_entries<T, Mem>& staying, offset_type staying_count,
                          const Kokkos::View<int*, Mem>& used) {
  using range = Kokkos::RangePolicy<Exec>;
  const auto n = static_cast<offset_type>(in.value.extent(0));
  const auto row = in.row;
  const auto col = in.col;
  const auto value = in.value;
  const auto stays = static_cast<std::size_t>(staying_count);
  const Kokkos::View<local_index*, Mem> primary(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_rows"), stays);
  const Kokkos::View<local_index*, Mem> column(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_a_rows"), stays);
  const Kokkos::View<T*, Mem> out_value(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_values"), stays);
  staying = {primary, column, out_value};
  triplets<T> away;
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
            column(k) = row(e);
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

/// The global ids a_first + i of the A rows with used(i) set, ascending, and per A row its
/// position in that list (`position(i)`, meaningful where used(i)).
template <class Exec, class Mem>
Kokkos::View<global_index*, Mem> used_rows(const Exec& space, const Kokkos::View<const int*, Mem>& used, global_index a_first,
                                           const Kokkos::View<local_index*, Mem>& position) {
  using range = Kokkos::RangePolicy<Exec>;
  const auto rows = static_cast<offset_type>(used.extent(0));
  offset_type count = 0;
  Kokkos::parallel_reduce("tessera::transpose_count_used", range(space, 0, rows),
                          KOKKOS_LAMBDA(const offset_type i, offset_type& acc) { acc += used(i) ? 1 : 0; }, count);
  Kokkos::View<global_index*, Mem> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_col_map"),
                                       static_cast<std::size_t>(count));
  Kokkos::parallel_scan("tessera::transpose_used_rows", range(space, 0, rows),
                        KOKKOS_LAMBDA(const offset_type i, offset_type& before, const bool final) {
                          if (final) position(i) = static_cast<local_index>(before);
                          if (used(i)) {
                            if (final) out(before) = a_first + i;
                            ++before;
                          }
                        });
  return out;
}

/// Position of a_first + i in the sorted `columns`, for every used A row i (binary search: used
/// when arrived columns were merged in).
template <class Exec, class Mem>
void positions_after_merge(const Exec& space, const Kokkos::View<const int*, Mem>& used, global_index a_first,
                           const Kokkos::View<const global_index*, Mem>& columns, const Kokkos::View<local_index*, Mem>& position) {
  const std::size_t n = columns.extent(0);
  Kokkos::parallel_for("tessera::transpose_positions", Kokkos::RangePolicy<Exec>(space, 0, used.extent(0)),
                       KOKKOS_LAMBDA(const std::size_t i) {
                         if (!used(i)) return;
                         const global_index g = a_first + static_cast<global_index>(i);
                         position(i) = static_cast<local_index>(kernels::lower_bound_in(columns, n, g));
                       });
}

/// A^T's row offsets: the entries of each row counted by atomics (staying entries, then arrived
/// ones), then a scan.
template <class Exec, class T, class Mem>
Kokkos::View<offset_type*, Mem> row_offsets(const Exec& space, std::size_t rows, const transposed_entries<T, Mem>& staying,
                                            const Kokkos::View<const local_index*, Mem>& arrived_row) {
  using range = Kokkos::RangePolicy<Exec>;
  const auto primary = staying.primary;
  Kokkos::View<offset_type*, Mem> ptr("tessera::transpose_ptr", rows + 1);
  Kokkos::parallel_for("tessera::transpose_count", range(space, 0, staying.value.extent(0)), KOKKOS_LAMBDA(const std::size_t k) {
    Kokkos::atomic_fetch_add(&ptr(primary(k) + 1), offset_type{1});
  });
  Kokkos::parallel_for("tessera::transpose_count_arrived", range(space, 0, arrived_row.extent(0)), KOKKOS_LAMBDA(const std::size_t k) {
    Kokkos::atomic_fetch_add(&ptr(arrived_row(k) + 1), offset_type{1});
  });
  Kokkos::parallel_scan("tessera::transpose_scan", range(space, 0, rows + 1),
                        KOKKOS_LAMBDA(const std::size_t r, offset_type& partial, const bool final) {
                          partial += ptr(r);
                          if (final) ptr(r) = partial;
                        });
  return ptr;
}

/// A^T's rows by an atomic scatter into the rows `ptr` delimits, then each row sorted by column
/// (kernels::sort_rows): the cheaper way where every row is short (a Laplacian's), and the only
/// one where no stable key sort runs (HIP, SYCL). Columns are distinct within a row of a
/// transpose, so the result is the same whatever order the atomics scattered it in.
template <class Exec, class T, class Mem>
csr_block<T, Mem> rows_by_scatter(const Exec& space, std::size_t rows, std::size_t columns, const Kokkos::View<offset_type*, Mem>& ptr,
                                  const transposed_entries<T, Mem>& staying, const Kokkos::View<const local_index*, Mem>& position,
                                  const Kokkos::View<const local_index*, Mem>& arrived_row,
                                  const Kokkos::View<const local_index*, Mem>& arrived_column,
                                  const Kokkos::View<const T*, Mem>& arrived_value) {
  using range = Kokkos::RangePolicy<Exec>;
  const auto n_stay = staying.value.extent(0), n_arrived = arrived_value.extent(0);
  const auto primary = staying.primary;
  const auto a_row = staying.a_row;
  const auto stay_value = staying.value;
  profiling_phases phase;
  phase.next("tessera::transpose::scatter");
  const scratch<offset_type, Mem> cursor_scratch(rows);
  const Kokkos::View<offset_type*, Mem> cursor = cursor_scratch.view();
  tessera::detail::deep_copy(space, cursor, Kokkos::subview(ptr, std::make_pair(std::size_t{0}, rows)));
  const std::size_t total = n_stay + n_arrived;
  Kokkos::View<local_index*, Mem> cols(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_cols"), total);
  Kokkos::View<T*, Mem> values(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_values"), total);
  Kokkos::parallel_for("tessera::transpose_scatter", range(space, 0, n_stay), KOKKOS_LAMBDA(const std::size_t k) {
    const offset_type slot = Kokkos::atomic_fetch_add(&cursor(primary(k)), offset_type{1});
    cols(slot) = position(a_row(k));
    values(slot) = stay_value(k);
  });
  Kokkos::parallel_for("tessera::transpose_scatter_arrived", range(space, 0, n_arrived), KOKKOS_LAMBDA(const std::size_t k) {
    const offset_type slot = Kokkos::atomic_fetch_add(&cursor(arrived_row(k)), offset_type{1});
    cols(slot) = arrived_column(k);
    values(slot) = arrived_value(k);
  });
  phase.next("tessera::transpose::sort_rows");
  kernels::sort_rows(space, ptr, cols, values);
  return {static_cast<local_index>(rows), static_cast<local_index>(columns), ptr, cols, values};
}

/// A^T's rows (delimited by `ptr`) by one stable sort of the entries by row
/// (kernels/stable_key_sort.hpp): where some row is long (a power-law A's popular column), which
/// one thread would sort at memory latency and a team only in log^2 passes. The entries go in
/// ordered by A^T's column: the arrived ones below this rank's rows of A (the first
/// `arrived_below` of the arrived arrays, which are sorted by column), the staying ones (in A's row
/// order, which `position` keeps), then the arrived ones above. A stable sort by row leaves each
/// row ordered by column: no per-row sort, no atomics, the same result on every run. When nothing
/// arrived, `staying.primary` (this transpose's scratch) is sorted in place.
template <class Exec, class T, class Mem>
csr_block<T, Mem> rows_by_stable_sort(const Exec& space, std::size_t rows, std::size_t columns, const Kokkos::View<offset_type*, Mem>& ptr,
                                      const transposed_entries<T, Mem>& staying,
                                      const Kokkos::View<const local_index*, Mem>& position,
                                      const Kokkos::View<const local_index*, Mem>& arrived_row,
                                      const Kokkos::View<const local_index*, Mem>& arrived_column,
                                      const Kokkos::View<const T*, Mem>& arrived_value, std::size_t arrived_below) {
  using range = Kokkos::RangePolicy<Exec>;
  const std::size_t n_stay = staying.value.extent(0), total = n_stay + arrived_value.extent(0);
  const std::size_t below = arrived_below;
  const auto primary = staying.primary;
  const auto a_row = staying.a_row;
  const auto stay_value = staying.value;
  profiling_phases phase;
  phase.next("tessera::transpose::keys");
  // With nothing arrived the keys are `primary` itself: one nnz-sized array and its pass saved.
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const bool keys_in_place = total == n_stay;
  const scratch<std::uint32_t, Mem> key_scratch(keys_in_place ? 0 : total), order_scratch(total);  // 0: none taken
  const Kokkos::View<std::uint32_t*, Mem> key =
      keys_in_place ? Kokkos::View<std::uint32_t*, Mem>(Kokkos::View<std::uint32_t*, Mem, unmanaged>(
                          reinterpret_cast<std::uint32_t*>(primary.data()), total))
                    : Kokkos::View<std::uint32_t*, Mem>(key_scratch.view());
  const Kokkos::View<std::uint32_t*, Mem> order = order_scratch.view();
  Kokkos::parallel_for("tessera::transpose_keys", range(space, 0, total), KOKKOS_LAMBDA(const std::size_t p) {
    if (!keys_in_place) {
      const local_index row = p < below ? arrived_row(p) : p < below + n_stay ? primary(p - below) : arrived_row(p - n_stay);
      key(p) = static_cast<std::uint32_t>(row);
    }
    order(p) = static_cast<std::uint32_t>(p);
  });
  phase.next("tessera::transpose::sort");
  kernels::stable_sort_by_key(space, key, order, rows);
  phase.next("tessera::transpose::gather");
  Kokkos::View<local_index*, Mem> cols(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_cols"), total);
  Kokkos::View<T*, Mem> values(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_values"), total);
  Kokkos::parallel_for("tessera::transpose_gather", range(space, 0, total), KOKKOS_LAMBDA(const std::size_t q) {
    const std::size_t p = order(q);
    if (p >= below && p < below + n_stay) {
      cols(q) = position(a_row(p - below));
      values(q) = stay_value(p - below);
    } else {
      const std::size_t a = p < below ? p : p - n_stay;
      cols(q) = arrived_column(a);
      values(q) = arrived_value(a);
    }
  });
  return {static_cast<local_index>(rows), static_cast<local_index>(columns), ptr, cols, values};
}

/// How many of the entries with local columns `col` stay on this rank: those whose global column
/// (through col_map) is one of its rows of A^T, [lo, hi). (Apart from transpose_by_routing_on_device
/// so that its kernel is compiled per space, not per policy.)
template <class Exec, class Mem>
offset_type count_staying(const Exec& space, const Kokkos::View<const local_index*, Mem>& col,
                          const Kokkos::View<const global_index*, Mem>& col_map, const global_index lo, const global_index hi) {
  offset_type staying = 0;
  Kokkos::parallel_reduce("tessera::transpose_count_staying", Kokkos::RangePolicy<Exec>(space, 0, col.extent(0)),
                          KOKKOS_LAMBDA(const std::size_t e, offset_type& acc) {
                            const global_index j = col_map(col(e));
                            acc += (j >= lo && j < hi) ? 1 : 0;
                          },
                          staying);
  return staying;
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

  profiling_phases phase;
  phase.next("tessera::transpose::split");
  std::optional<scratch<local_index, mem>> entry_rows;
  const auto in = entries_on_device(a, entry_rows);
  const Kokkos::View<const global_index*, mem> col_map = a.col_map();
  const auto n = static_cast<offset_type>(in.value.extent(0));
  const offset_type staying_count = count_staying<exec, mem>(space, in.col, col_map, lo, hi);
  transposed_entries<T, mem> staying;
  const auto a_rows = static_cast<std::size_t>(a.local().num_rows());
  const scratch<int, mem> used_scratch(a_rows);
  const Kokkos::View<int*, mem> used = used_scratch.view();
  tessera::detail::deep_copy(space, used, 0);
  std::optional<scratch<local_index, mem>> primary;
  triplets<T> away;
  if (staying_count == n) {
    primary.emplace(static_cast<std::size_t>(n));
    staying = all_staying<exec, T, mem>(space, in, col_map, lo, used, primary->view());
  }
  else away = split_staying<exec, T, mem>(space, in, col_map, a_first, lo, hi, staying, staying_count, used);
  phase.next("tessera::transpose::route");
  const typename Policy::backend_type backend{};
  auto arrived = route_to_owners<T>(comm, backend, result_rows, std::span<const global_index>(away.rows),
                                    std::span<const global_index>(away.cols), std::span<const T>(away.values));
  away = {};

  phase.next("tessera::transpose::column_map");
  // A^T's column map: A's rows with a staying entry, merged with the arrived entries' columns;
  // position(i): the column of A^T that A's row i becomes.
  const scratch<local_index, mem> position_scratch(used.extent(0));
  const Kokkos::View<local_index*, mem> position = position_scratch.view();
  Kokkos::View<global_index*, mem> columns = used_rows<exec, mem>(space, used, a_first, position);
  comm.collectively([&] {  // every rank, arrivals or not: the check is collective
    for (const global_index r : arrived.rows)
      TESSERA_REQUIRE(r >= lo && r < hi, internal, "row {} of the transpose reached rank {} but belongs to rank {}", r, me,
                      result_rows.row_owner(r));
  });
  Kokkos::View<local_index*, mem> arrived_row, arrived_column;
  Kokkos::View<T*, mem> arrived_value;
  std::size_t arrived_below = 0;  // arrived entries whose column precedes this rank's rows of A
  if (arrived.size() > 0) {
    std::vector<global_index> received = arrived.cols;
    std::sort(received.begin(), received.end());
    received.erase(std::unique(received.begin(), received.end()), received.end());
    const auto own = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, columns);
    std::vector<global_index> merged;
    merged.reserve(own.extent(0) + received.size());
    std::set_union(own.data(), own.data() + own.extent(0), received.begin(), received.end(), std::back_inserter(merged));
    using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    columns = Kokkos::View<global_index*, mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::transpose_col_map"),
                                               merged.size());
    tessera::detail::deep_copy(columns, Kokkos::View<const global_index*, Kokkos::HostSpace, unmanaged>(merged.data(), merged.size()));
    positions_after_merge<exec, mem>(space, used, a_first, columns, position);
    // The arrived entries' rows and columns numbered on the host (they came through it anyway),
    // in column order: what rows_by_stable_sort needs, and the others take any order.
    std::vector<std::size_t> by_column(arrived.size());
    std::iota(by_column.begin(), by_column.end(), std::size_t{0});
    std::sort(by_column.begin(), by_column.end(), [&](std::size_t x, std::size_t y) { return arrived.cols[x] < arrived.cols[y]; });
    std::vector<local_index> rows_here(arrived.size()), columns_here(arrived.size());
    std::vector<T> values_here(arrived.size());
    for (std::size_t k = 0; k < arrived.size(); ++k) {
      const std::size_t from = by_column[k];
      rows_here[k] = static_cast<local_index>(arrived.rows[from] - lo);
      columns_here[k] = static_cast<local_index>(std::lower_bound(merged.begin(), merged.end(), arrived.cols[from]) - merged.begin());
      values_here[k] = arrived.values[from];
      if (arrived.cols[from] < a_first) arrived_below = k + 1;
    }
    arrived_row = to_view<local_index, mem>(rows_here, "tessera::transpose_arrived_rows");
    arrived_column = to_view<local_index, mem>(columns_here, "tessera::transpose_arrived_cols");
    arrived_value = to_view<T, mem>(values_here, "tessera::transpose_arrived_values");
  }
  comm.collectively([&] {
    TESSERA_REQUIRE(columns.extent(0) <= static_cast<std::size_t>(INT_MAX), unsupported,
                    "rank {} touches {} distinct columns; at most {} are supported", me, columns.extent(0), INT_MAX);
  });
  phase.next("tessera::transpose::rows");
  const auto rows_of_at = [&] {
    const auto ptr = row_offsets<exec, T, mem>(space, my_rows, staying, arrived_row);
    if constexpr (kernels::has_stable_key_sort<exec>) {
      const std::size_t total = staying.value.extent(0) + arrived_value.extent(0);
      if (total <= std::numeric_limits<std::uint32_t>::max() &&
          kernels::detail::longest_group(space, Kokkos::View<const offset_type*, mem>(ptr)) > kernels::team_sorted_row)
        return rows_by_stable_sort<exec, T, mem>(space, my_rows, columns.extent(0), ptr, staying, position, arrived_row,
                                                 arrived_column, arrived_value, arrived_below);
    }
    return rows_by_scatter<exec, T, mem>(space, my_rows, columns.extent(0), ptr, staying, position, arrived_row, arrived_column,
                                         arrived_value);
  }();
  const auto block_rows = static_cast<local_index>(my_rows);
  const auto block_cols = static_cast<local_index>(columns.extent(0));
  typename matrix::local_block_type block;
  if constexpr (std::same_as<storage, csr>) {
    block = rows_of_at;
  } else {
    auto row_idx = kernels::expand_groups<exec, mem>(space, rows_of_at.row_ptr);
    block = storage::from_coo(space, coo_block<T, mem>{block_rows, block_cols, row_idx, rows_of_at.col_idx, rows_of_at.values});
  }
  space.fence();
  phase.next("tessera::transpose::assemble");
  return matrix(detail::assembled_block, comm, result_rows, std::move(block), std::move(columns), a.global_nnz());
}

}  // namespace tessera::detail
