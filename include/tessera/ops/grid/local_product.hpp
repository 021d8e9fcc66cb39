#pragma once
/// @file
/// The node-local product of two pieces of entries (global indices, any order): what one rank of
/// a grid product multiplies at one stage. Compressed to CSR (A's rows, B's rows keyed by the inner
/// index), multiplied by expand-sort-compress (kernels/spgemm_esc.hpp: any semiring, a mask, row
/// batches under a memory budget) in the policy's execution space.

#include "../../core/index_types.hpp"
#include "../../kernels/spgemm_esc.hpp"
#include "../../matrix/to_view.hpp"
#include "../../matrix/triplets.hpp"
#include "../detail/row_batches.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
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

/// C = A * B over `ring` for two pieces (each entry listed once), optionally only where `mask`
/// (a piece of C's pattern) holds an entry; rows are batched so the expanded products of a batch
/// take at most `budget_bytes` (0: one batch). Returns C's entries with global indices.
template <class ExecSpace, class MemorySpace, class T, class Semiring>
triplets<T> multiply_pieces(const triplets<T>& a, const triplets<T>& b, const triplets<T>* mask, const Semiring& ring,
                            std::size_t budget_bytes, piece_product_stats& stats) {
  triplets<T> out;
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
  const auto& a_rows = a_rows_grouped.rows;
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
  kernels::esc_operands<T, mem> op;
  op.a_ptr = to_view<offset_type, mem>(a_ptr, "tessera::grid::a_ptr");
  op.a_col = to_view<local_index, mem>(a_col, "tessera::grid::a_col");
  op.a_val = to_view<T, mem>(a_val, "tessera::grid::a_val");
  op.b_ptr = to_view<offset_type, mem>(b_ptr, "tessera::grid::b_ptr");
  op.b_col = to_view<global_index, mem>(b_col, "tessera::grid::b_col");
  op.b_val = to_view<T, mem>(b_val, "tessera::grid::b_val");
  if (mask != nullptr) {
    // The mask's columns per row of A's piece (rows A lacks are never computed).
    const auto m_order = row_major_order(*mask);
    std::vector<offset_type> m_ptr(a_rows.size() + 1, 0);
    std::vector<global_index> m_col;
    std::size_t e = 0;
    for (std::size_t r = 0; r < a_rows.size(); ++r) {
      while (e < m_order.size() && mask->rows[m_order[e]] < a_rows[r]) ++e;
      for (; e < m_order.size() && mask->rows[m_order[e]] == a_rows[r]; ++e) m_col.push_back(mask->cols[m_order[e]]);
      m_ptr[r + 1] = static_cast<offset_type>(m_col.size());
    }
    op.mask_ptr = to_view<offset_type, mem>(m_ptr, "tessera::grid::mask_ptr");
    op.mask_col = to_view<global_index, mem>(m_col, "tessera::grid::mask_col");
  }

  const auto rows = static_cast<local_index>(a_rows.size());
  const std::size_t per_product = sizeof(global_index) + sizeof(T);
  std::vector<offset_type> counts;
  std::vector<global_index> cols;
  std::vector<T> values;
  const ExecSpace space{};
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
  out.reserve(cols.size());
  std::size_t at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r)
    for (offset_type c = 0; c < counts[r]; ++c, ++at) out.push_back(a_rows[r], cols[at], values[at]);
  return out;
}

}  // namespace tessera::detail
