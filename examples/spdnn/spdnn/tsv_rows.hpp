#pragma once
// A TSV file read straight into the rows of a sparse matrix. The challenge's
// files (and --write's) list their lines in (row, column) order without
// repeats, so a rank's lines are already a CSR block: read that way they
// take 8 bytes a line (float values) instead of tsv_columns' 24, and need no
// routing, grouping or sorting to become a matrix. Lines out of that order
// are kept as columns instead, for build_from_triplets.

#include "tsv.hpp"

#include <tessera/core/huge_pages.hpp>
#include <tessera/core/index_types.hpp>
#include <tessera/core/uninitialized_allocator.hpp>
#include <tessera/storage/csr.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace spdnn {

/// An array in host memory that grows like a vector but is a Kokkos View, so that a matrix can
/// keep it as its own (rows_block): fresh memory was a third of reading the features on the
/// benchmark machine (its pages zeroed on first touch), and a copy into the matrix doubled it.
template <class U>
struct growing_view {
  Kokkos::View<U*, Kokkos::HostSpace> data;
  std::size_t size = 0;

  void reserve(std::size_t n) {
    if (n <= data.extent(0)) return;
    Kokkos::View<U*, Kokkos::HostSpace> bigger(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("spdnn::rows")), n);
    // Tens of megabytes, first touched here: one page fault per 2 MiB instead of per 4 KiB.
    tessera::advise_huge_pages(bigger.data(), n * sizeof(U));
    std::copy(data.data(), data.data() + size, bigger.data());
    data = bigger;
  }
  void push_back(U value) {
    if (size == data.extent(0)) reserve(std::max<std::size_t>(2 * size, 1024));
    data(size++) = value;
  }
  void resize(std::size_t n) {
    reserve(n);
    size = n;
  }
  [[nodiscard]] U operator[](std::size_t k) const { return data(k); }
  [[nodiscard]] U front() const { return data(0); }
  [[nodiscard]] U back() const { return data(size - 1); }
  [[nodiscard]] U* begin() const { return data.data(); }
};

/// This rank's lines of a TSV file as the rows of a sparse matrix (first index: row, second:
/// column), while they come in (row, column) order without repeats; `file` holds them as columns
/// instead once a line breaks that order (in_order false), and always holds what every rank knows
/// about the file (path, lines, largest first index).
template <class T>
struct tsv_rows {
  tsv_columns file;
  bool in_order = true;
  std::vector<std::int64_t> row_id;      ///< the rows holding entries, ascending
  std::vector<tessera::offset_type> row_start;  ///< where each of them starts in column and value
  growing_view<tessera::local_index> column;
  growing_view<T> value;

  /// Entries this rank holds (either form).
  [[nodiscard]] std::size_t size() const noexcept { return in_order ? column.size : file.size(); }
  /// Entries of row_id[k].
  [[nodiscard]] std::size_t row_size(std::size_t k) const noexcept {
    const auto end = k + 1 < row_start.size() ? static_cast<std::size_t>(row_start[k + 1]) : column.size;
    return end - static_cast<std::size_t>(row_start[k]);
  }

  /// Move every entry into `file`'s columns (in_order becomes false).
  void to_columns() {
    if (!in_order) return;
    file.first.reserve(file.first.size() + size());
    file.second.reserve(file.second.size() + size());
    file.value.reserve(file.value.size() + size());
    for (std::size_t k = 0; k < row_id.size(); ++k)
      for (std::size_t e = static_cast<std::size_t>(row_start[k]); e < static_cast<std::size_t>(row_start[k]) + row_size(k); ++e) {
        file.first.push_back(row_id[k]);
        file.second.push_back(column[e]);
        file.value.push_back(static_cast<double>(value[e]));
      }
    in_order = false;
    free_rows();
  }

  /// Free the rows' arrays (once a block holds them).
  void free_rows() {
    row_id = {};
    row_start = {};
    column = {};
    value = {};
  }
};

namespace detail {

/// Any line of read_tsv_rows' file (a row's first, one out of order, one past the arrays'
/// reserve): kept in rows while the lines come in order, in columns from the first that does not.
template <class T>
[[gnu::noinline]] void add_any_line(tsv_rows<T>& out, const tsv_entry& e, std::int64_t& current_row,
                                    std::int64_t& last_second) {
  if (out.in_order) {
    if (out.row_id.empty() || e.first > out.row_id.back()) {
      out.row_id.push_back(e.first);
      out.row_start.push_back(static_cast<tessera::offset_type>(out.column.size));
      current_row = e.first;
    } else if (e.first < out.row_id.back() || e.second <= last_second) {
      out.to_columns();
    }
  }
  if (out.in_order) {
    out.column.push_back(static_cast<tessera::local_index>(e.second));
    out.value.push_back(static_cast<T>(e.value));
    last_second = e.second;
  } else {
    out.file.first.push_back(e.first);
    out.file.second.push_back(e.second);
    out.file.value.push_back(e.value);
  }
}

}  // namespace detail

/// Read a TSV file of `row column value` lines in parallel over `comm` (collective), as read_tsv
/// does (the same lines, errors and messages), into rows (see tsv_rows).
template <class T>
tsv_rows<T> read_tsv_rows(const tessera::communicator& comm, const std::string& path, const tsv_layout& layout) {
  TESSERA_REQUIRE(layout.fields == 3, invalid_argument, "read_tsv_rows reads three-field files, not {}-field ones", layout.fields);
  tsv_rows<T> out;
  // Columns beyond 32 bits cannot be a block's: such a layout reads into columns from the start.
  out.in_order = layout.second_max - 1 <= std::int64_t{std::numeric_limits<tessera::local_index>::max()};
  std::int64_t last_second = -1;
  const auto expect = [&](std::size_t lines) {
    if (!out.in_order) return;
    out.column.reserve(lines);
    out.value.reserve(lines);
  };
  // Each line after a row's first, in order and within the arrays' reserve, takes the short path
  // below, which the compiler inlines into the scan's loop; the rest goes out of line. As one
  // function the whole of it was a call per line: 6-13% of reading a file.
  std::int64_t current_row = -1;
  detail::read_share(comm, path, layout, out.file, expect, [&](const detail::tsv_entry& e, std::int64_t) {
    const std::size_t at = out.column.size;
    if (out.in_order && e.first == current_row && e.second > last_second && at < out.column.data.extent(0) &&
        at < out.value.data.extent(0)) [[likely]] {
      out.column.data(at) = static_cast<tessera::local_index>(e.second);
      out.value.data(at) = static_cast<T>(e.value);
      out.column.size = at + 1;
      out.value.size = at + 1;
      last_second = e.second;
      return;
    }
    detail::add_any_line(out, e, current_row, last_second);
  });
  return out;
}

/// Rows [first, first + count) of `rows` (in order; any of them may hold no entries) as a CSR block
/// of `columns` columns, in `Mem`, with its column map (the distinct columns its entries use,
/// ascending; local column indices are positions in it): what build_from_triplets makes of the
/// same entries. Entries outside those rows are left out. On the host the block keeps `rows`'
/// arrays (their columns renumbered in place): `rows` is spent.
template <class T, class Mem>
std::pair<tessera::csr_block<T, Mem>, Kokkos::View<tessera::global_index*, Mem>>
rows_block(tsv_rows<T>&& rows, std::int64_t first, std::int64_t count, std::int64_t columns) {
  using host = Kokkos::HostSpace;
  Kokkos::View<tessera::offset_type*, host> ptr("spdnn::row_ptr", static_cast<std::size_t>(count) + 1);
  std::vector<char> used(static_cast<std::size_t>(columns), 0);
  // The rows wanted, as a range of row_id (ascending), and their entries.
  std::size_t k_begin = 0, k_end = rows.row_id.size();
  while (k_begin < k_end && rows.row_id[k_begin] < first) ++k_begin;
  while (k_end > k_begin && rows.row_id[k_end - 1] >= first + count) --k_end;
  for (std::size_t k = k_begin; k < k_end; ++k) ptr(static_cast<std::size_t>(rows.row_id[k] - first) + 1) = static_cast<tessera::offset_type>(rows.row_size(k));
  for (std::size_t r = 0; r < static_cast<std::size_t>(count); ++r) ptr(r + 1) += ptr(r);
  const std::size_t e_begin = k_begin < k_end ? static_cast<std::size_t>(rows.row_start[k_begin]) : 0;
  const auto nnz = static_cast<std::size_t>(ptr(static_cast<std::size_t>(count)));
  tessera::local_index* const column = rows.column.begin() + e_begin;
  for (std::size_t e = 0; e < nnz; ++e) used[static_cast<std::size_t>(column[e])] = 1;
  std::vector<tessera::local_index> position(used.size());
  std::vector<tessera::global_index> map;
  for (std::size_t c = 0; c < used.size(); ++c) {
    position[c] = static_cast<tessera::local_index>(map.size());
    if (used[c]) map.push_back(static_cast<tessera::global_index>(c));
  }
  for (std::size_t e = 0; e < nnz; ++e) column[e] = position[static_cast<std::size_t>(column[e])];
  const auto entries = std::make_pair(e_begin, e_begin + nnz);
  Kokkos::View<tessera::global_index*, host> col_map(map.data(), map.size());
  tessera::csr_block<T, Mem> block;
  block.rows = static_cast<tessera::local_index>(count);
  block.cols = static_cast<tessera::local_index>(map.size());
  block.row_ptr = Kokkos::create_mirror_view_and_copy(Mem{}, ptr);
  block.col_idx = Kokkos::create_mirror_view_and_copy(Mem{}, Kokkos::subview(rows.column.data, entries));
  block.values = Kokkos::create_mirror_view_and_copy(Mem{}, Kokkos::subview(rows.value.data, entries));
  Kokkos::View<tessera::global_index*, Mem> device_map(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spdnn::col_map"), map.size());
  Kokkos::deep_copy(device_map, col_map);
  rows.free_rows();
  return {block, device_map};
}

}  // namespace spdnn
