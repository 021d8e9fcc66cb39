#pragma once
/// @file
/// The node-local product of two pieces of entries (global indices, any order): what one rank of
/// a grid product multiplies at one stage. Compressed to CSR (A's rows, B's rows keyed by the inner
/// index), multiplied by row-wise Gustavson where it can (host spaces, no mask, no budget) and by
/// expand-sort-compress otherwise (kernels/spgemm_esc.hpp: any semiring, a mask, row batches under
/// a memory budget), in the policy's execution space.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_LOCAL_PRODUCT_HPP
#endif

#include "../../core/index_types.hpp"
#include "../../kernels/spgemm_esc.hpp"
#include "../../kernels/spgemm_gustavson.hpp"
#include "../../matrix/detail/compress_columns.hpp"
#include "../../matrix/to_view.hpp"
#include "../../matrix/triplets.hpp"
#include "../detail/row_batches.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <iterator>
#include <numeric>
#include <vector>

namespace tessera::detail {

/// Entries sorted by (row, column): the permutation that sorts them.
template <class T>
[[nodiscard]] std::vector<std::size_t> row_major_order(const triplets<T>& t) {
  std::vector<std::size_t> order(t.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return t.rows[x] < t.rows[y] || (t.rows[x] == t.rows[y] && t.cols[x] < t.cols[y]);
  });
  return order;
}

/// Entries grouped by row: the distinct rows ascending, and row pointers into `order` (the
/// entries' indices sorted by row, then column).
struct grouped_rows {
  std::vector<global_index> rows;
  std::vector<offset_type> ptr{0};
  std::vector<std::size_t> order;
};

template <class T>
[[nodiscard]] grouped_rows group_by_row(const triplets<T>& t) {
  grouped_rows g;
  g.order = row_major_order(t);
  for (std::size_t e = 0; e < g.order.size(); ++e) {
    const global_index row = t.rows[g.order[e]];
    if (g.rows.empty() || g.rows.back() != row) {
      if (!g.rows.empty()) g.ptr.push_back(static_cast<offset_type>(e));
      g.rows.push_back(row);
    }
  }
  if (!g.rows.empty()) g.ptr.push_back(static_cast<offset_type>(t.size()));
  return g;
}

/// What a piece product reports besides its entries.
struct piece_product_stats {
  std::size_t batches = 0;
};

/// C's rows from one piece product, in the memory space: A's distinct rows (ascending), row
/// pointers over them, each entry's column as a position in `columns` (the global columns the
/// product uses, ascending; columns ascend within a row) and its value.
template <class T, class MemorySpace>
struct piece_rows {
  std::vector<global_index> rows;
  Kokkos::View<offset_type*, MemorySpace> ptr;
  Kokkos::View<local_index*, MemorySpace> col;
  Kokkos::View<T*, MemorySpace> values;
  std::vector<global_index> columns;

  /// Appended to `out` as triplets with global indices.
  void append_to(triplets<T>& out) const {
    const auto p = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, ptr);
    const auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, col);
    const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values);
    out.reserve(out.size() + v.extent(0));
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (auto e = p(r); e < p(r + 1); ++e)
        out.push_back(rows[r], columns[static_cast<std::size_t>(c(static_cast<std::size_t>(e)))],
                      v(static_cast<std::size_t>(e)));
  }
};

/// Two piece products of the same C in one: rows and columns the union of both, entries at the
/// same (row, column) folded with the semiring's add (x's value first). What a stage's product is
/// merged into the sum of the earlier stages with, so the stages leave one product, not one per
/// stage to route and assemble. Host loops, linear in the two sizes.
template <class T, class MemorySpace, class Semiring>
[[nodiscard]] piece_rows<T, MemorySpace> merge_pieces(const piece_rows<T, MemorySpace>& x,
                                                      const piece_rows<T, MemorySpace>& y, const Semiring& ring) {
  piece_rows<T, MemorySpace> out;
  std::set_union(x.columns.begin(), x.columns.end(), y.columns.begin(), y.columns.end(), std::back_inserter(out.columns));
  std::set_union(x.rows.begin(), x.rows.end(), y.rows.begin(), y.rows.end(), std::back_inserter(out.rows));
  // Each piece's column positions as positions in the union (both lists ascend).
  const auto positions = [&](const std::vector<global_index>& columns) {
    std::vector<local_index> at(columns.size());
    std::size_t u = 0;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      while (out.columns[u] != columns[c]) ++u;
      at[c] = static_cast<local_index>(u);
    }
    return at;
  };
  const auto x_at = positions(x.columns), y_at = positions(y.columns);
  const auto xp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x.ptr);
  const auto xc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x.col);
  const auto xv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x.values);
  const auto yp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.ptr);
  const auto yc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.col);
  const auto yv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.values);
  // Two passes over the rows, counting then writing, so the merged entries are written once,
  // straight into their Views (a host product is not copied again).
  Kokkos::View<offset_type*, Kokkos::HostSpace> ptr("tessera::grid::c_ptr", out.rows.size() + 1);
  Kokkos::View<local_index*, Kokkos::HostSpace> col;
  Kokkos::View<T*, Kokkos::HostSpace> values;
  const auto walk = [&](auto&& emit) {
    std::size_t rx = 0, ry = 0, written = 0;
    for (std::size_t r = 0; r < out.rows.size(); ++r) {
      const global_index row = out.rows[r];
      offset_type ex = 0, end_x = 0, ey = 0, end_y = 0;  // empty ranges unless the piece has the row
      if (rx < x.rows.size() && x.rows[rx] == row) {
        ex = xp(rx);
        end_x = xp(rx + 1);
        ++rx;
      }
      if (ry < y.rows.size() && y.rows[ry] == row) {
        ey = yp(ry);
        end_y = yp(ry + 1);
        ++ry;
      }
      while (ex < end_x || ey < end_y) {
        const local_index cx = ex < end_x ? x_at[static_cast<std::size_t>(xc(static_cast<std::size_t>(ex)))] : -1;
        const local_index cy = ey < end_y ? y_at[static_cast<std::size_t>(yc(static_cast<std::size_t>(ey)))] : -1;
        if (cy < 0 || (cx >= 0 && cx < cy))
          emit(written++, cx, static_cast<std::size_t>(ex++), std::size_t{0}, 1);
        else if (cx < 0 || cy < cx)
          emit(written++, cy, std::size_t{0}, static_cast<std::size_t>(ey++), 2);
        else
          emit(written++, cx, static_cast<std::size_t>(ex++), static_cast<std::size_t>(ey++), 3);
      }
      ptr(r + 1) = static_cast<offset_type>(written);
    }
  };
  walk([](std::size_t, local_index, std::size_t, std::size_t, int) {});
  col = Kokkos::View<local_index*, Kokkos::HostSpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::grid::c_col"),
                                                     static_cast<std::size_t>(ptr(out.rows.size())));
  values = Kokkos::View<T*, Kokkos::HostSpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::grid::c_values"),
                                               col.extent(0));
  walk([&](std::size_t at, local_index c, std::size_t from_x, std::size_t from_y, int which) {
    col(at) = c;
    values(at) = which == 1 ? xv(from_x) : which == 2 ? yv(from_y) : ring.add(xv(from_x), yv(from_y));
  });
  out.ptr = Kokkos::create_mirror_view_and_copy(MemorySpace{}, ptr);
  out.col = Kokkos::create_mirror_view_and_copy(MemorySpace{}, col);
  out.values = Kokkos::create_mirror_view_and_copy(MemorySpace{}, values);
  return out;
}

/// C = A * B over `ring` for two pieces (each entry listed once), optionally only where `mask`
/// (a piece of C's pattern) holds an entry. Without mask or budget on a host space it runs
/// row-wise Gustavson (kernels/spgemm_gustavson.hpp: dense accumulators over the columns B's
/// piece uses), as the 1-D product does; otherwise expand-sort-compress, rows batched so the
/// expanded products of a batch take at most `budget_bytes` (0: one batch).
template <class ExecSpace, class MemorySpace, class T, class Semiring>
piece_rows<T, MemorySpace> multiply_pieces(const triplets<T>& a, const triplets<T>& b, const triplets<T>* mask, const Semiring& ring,
                              std::size_t budget_bytes, bool gustavson_allowed, global_index global_cols,
                              piece_product_stats& stats) {
  piece_rows<T, MemorySpace> out;
  out.ptr = Kokkos::View<offset_type*, MemorySpace>("tessera::grid::c_ptr", 1);
  out.col = Kokkos::View<local_index*, MemorySpace>("tessera::grid::c_col", 0);
  out.values = Kokkos::View<T*, MemorySpace>("tessera::grid::c_values", 0);
  if (a.empty() || b.empty()) return out;
  // B's rows by inner index; one empty row at the end for inner indices B does not store.
  const auto b_rows = group_by_row(b);
  const auto& keys = b_rows.rows;
  std::vector<offset_type> b_ptr = b_rows.ptr;
  b_ptr.push_back(static_cast<offset_type>(b.size()));  // the empty row
  std::vector<global_index> b_col(b.size());
  std::vector<T> b_val(b.size());
  for (std::size_t e = 0; e < b.size(); ++e) {
    b_col[e] = b.cols[b_rows.order[e]];
    b_val[e] = b.values[b_rows.order[e]];
  }
  const auto empty_row = static_cast<local_index>(keys.size());

  // A's rows compressed to the distinct rows it has, columns to positions in B's keys.
  const auto a_rows_grouped = group_by_row(a);
  out.rows = a_rows_grouped.rows;
  const auto& a_ptr = a_rows_grouped.ptr;
  std::vector<local_index> a_col(a.size());
  std::vector<T> a_val(a.size());
  for (std::size_t e = 0; e < a.size(); ++e) {
    const std::size_t s = a_rows_grouped.order[e];
    const auto at = std::lower_bound(keys.begin(), keys.end(), a.cols[s]);
    a_col[e] = at != keys.end() && *at == a.cols[s] ? static_cast<local_index>(at - keys.begin()) : empty_row;
    a_val[e] = a.values[s];
  }

  using mem = MemorySpace;
  const ExecSpace space{};
  // A's piece on the memory space, for whichever kernel multiplies.
  const auto a_ptr_view = to_view<offset_type, mem>(a_ptr, "tessera::grid::a_ptr");
  const auto a_col_view = to_view<local_index, mem>(a_col, "tessera::grid::a_col");
  const auto a_val_view = to_view<T, mem>(a_val, "tessera::grid::a_val");
  constexpr bool on_host = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
  if constexpr (on_host) {
    if (gustavson_allowed && mask == nullptr && budget_bytes == 0) {
      // B's piece in the accumulator's columns: its distinct global columns, ascending.
      const auto compressed = compress_columns(b_col, global_cols);
      std::vector<local_index> source(keys.size() + 1);
      std::iota(source.begin(), source.end(), local_index{0});  // row c of B^ is B's row c; the last is empty
      kernels::gustavson_operands<T, mem> op;
      op.a_ptr = a_ptr_view;
      op.a_col = a_col_view;
      op.a_val = a_val_view;
      op.source = to_view<local_index, mem>(source, "tessera::grid::source");
      op.b_ptr = to_view<offset_type, mem>(b_ptr, "tessera::grid::b_ptr");
      op.b_col = to_view<local_index, mem>(compressed.local, "tessera::grid::b_col");
      op.b_val = to_view<T, mem>(b_val, "tessera::grid::b_val");
      op.h_ptr = to_view<offset_type, mem>(std::vector<offset_type>{0}, "tessera::grid::h_ptr");
      op.width = static_cast<local_index>(compressed.used.size());
      const auto c = kernels::gustavson(space, op, ring);
      ++stats.batches;
      // C's columns are positions among the accumulator columns it uses: those are C's columns.
      const auto used = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.used);
      out.columns.resize(used.extent(0));
      for (std::size_t j = 0; j < out.columns.size(); ++j)
        out.columns[j] = compressed.used[static_cast<std::size_t>(used(j))];
      out.ptr = c.row_ptr;
      out.col = c.col_idx;
      out.values = c.values;
      return out;
    }
  }

  kernels::esc_operands<T, mem> op;
  op.a_ptr = a_ptr_view;
  op.a_col = a_col_view;
  op.a_val = a_val_view;
  op.b_ptr = to_view<offset_type, mem>(b_ptr, "tessera::grid::b_ptr");
  op.b_col = to_view<global_index, mem>(b_col, "tessera::grid::b_col");
  op.b_val = to_view<T, mem>(b_val, "tessera::grid::b_val");
  if (mask != nullptr) {
    // The mask's columns per row of A's piece (rows A lacks are never computed).
    const auto m_order = row_major_order(*mask);
    std::vector<offset_type> m_ptr(out.rows.size() + 1, 0);
    std::vector<global_index> m_col;
    std::size_t e = 0;
    for (std::size_t r = 0; r < out.rows.size(); ++r) {
      while (e < m_order.size() && mask->rows[m_order[e]] < out.rows[r]) ++e;
      for (; e < m_order.size() && mask->rows[m_order[e]] == out.rows[r]; ++e) m_col.push_back(mask->cols[m_order[e]]);
      m_ptr[r + 1] = static_cast<offset_type>(m_col.size());
    }
    op.mask_ptr = to_view<offset_type, mem>(m_ptr, "tessera::grid::mask_ptr");
    op.mask_col = to_view<global_index, mem>(m_col, "tessera::grid::mask_col");
  }

  const auto rows = static_cast<local_index>(out.rows.size());
  const std::size_t per_product = sizeof(global_index) + sizeof(T);
  std::vector<offset_type> counts;
  std::vector<global_index> cols;
  std::vector<T> values;
  for (local_index first = 0; first < rows;) {
    const local_index last = batch_end(first, rows, budget_bytes, per_product, [&](local_index r) {
      std::size_t products = 0;
      for (offset_type e = a_ptr[static_cast<std::size_t>(r)]; e < a_ptr[static_cast<std::size_t>(r) + 1]; ++e) {
        const auto k = static_cast<std::size_t>(a_col[static_cast<std::size_t>(e)]);
        products += static_cast<std::size_t>(b_ptr[k + 1] - b_ptr[k]);
      }
      return products;
    });
    kernels::esc_rows<ExecSpace, T, mem, Semiring>(space, op, first, last, ring, counts, cols, values);
    ++stats.batches;
    first = last;
  }
  std::vector<offset_type> ptr(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) ptr[r + 1] = ptr[r] + counts[r];
  auto compressed = compress_columns(cols, global_cols);
  out.columns = std::move(compressed.used);
  out.ptr = to_view<offset_type, mem>(ptr, "tessera::grid::c_ptr");
  out.col = to_view<local_index, mem>(compressed.local, "tessera::grid::c_col");
  out.values = to_view<T, mem>(values, "tessera::grid::c_values");
  return out;
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_LOCAL_PRODUCT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_GRID_LOCAL_PRODUCT_HPP
#endif
