#pragma once
/// @file
/// host_csr<T>: a plain serial CSR matrix on the host, the reference that tests compare against.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_HOST_CSR_HPP
#endif

#include "../core/error.hpp"
#include "../core/index_types.hpp"
#include "triplets.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

/// A whole matrix on one process, in CSR with global indices. Written with
/// nothing but the standard library so that it can check the distributed code.
template <class T>
struct host_csr {
  global_index rows = 0;
  global_index cols = 0;
  std::vector<offset_type> row_ptr{0};
  std::vector<global_index> col_idx;
  std::vector<T> values;

  [[nodiscard]] offset_type nnz() const noexcept { return static_cast<offset_type>(values.size()); }

  /// The serial reference assembly: sort by (row, col) and fold duplicates with `combine`.
  template <class Combine = std::plus<T>>
  static host_csr from_triplets(global_index rows, global_index cols, const triplets<T>& entries,
                                Combine combine = {}) {
    std::vector<std::size_t> order(entries.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return entries.rows[a] != entries.rows[b] ? entries.rows[a] < entries.rows[b] : entries.cols[a] < entries.cols[b];
    });
    host_csr m;
    m.rows = rows;
    m.cols = cols;
    m.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t e = order[k];
      TESSERA_REQUIRE(entries.rows[e] >= 0 && entries.rows[e] < rows && entries.cols[e] >= 0 && entries.cols[e] < cols,
                      index_out_of_range, "host_csr: entry ({}, {}) outside {} x {}", entries.rows[e], entries.cols[e],
                      rows, cols);
      if (k > 0 && entries.rows[e] == entries.rows[order[k - 1]] && entries.cols[e] == entries.cols[order[k - 1]]) {
        m.values.back() = combine(m.values.back(), entries.values[e]);
      } else {
        m.col_idx.push_back(entries.cols[e]);
        m.values.push_back(entries.values[e]);
        ++m.row_ptr[static_cast<std::size_t>(entries.rows[e]) + 1];
      }
    }
    std::partial_sum(m.row_ptr.begin(), m.row_ptr.end(), m.row_ptr.begin());
    return m;
  }

  /// The value at (i, j), or nothing if no entry is stored there.
  [[nodiscard]] std::optional<T> at(global_index i, global_index j) const {
    const auto first = col_idx.begin() + row_ptr[static_cast<std::size_t>(i)];
    const auto last = col_idx.begin() + row_ptr[static_cast<std::size_t>(i) + 1];
    const auto it = std::lower_bound(first, last, j);
    if (it == last || *it != j) return std::nullopt;
    return values[static_cast<std::size_t>(it - col_idx.begin())];
  }
};

/// Compare two host matrices; returns a description of the first difference, or nothing if equal.
///
/// Values match when |a - b| <= tolerance * max(|a|, |b|, 1); tolerance 0 asks for exact equality.
template <class T>
[[nodiscard]] std::optional<std::string> first_difference(const host_csr<T>& a, const host_csr<T>& b,
                                                          double tolerance = 0.0) {
  if (a.rows != b.rows || a.cols != b.cols)
    return ::tessera::detail::formatted("shapes differ: {} x {} vs {} x {}", a.rows, a.cols, b.rows, b.cols);
  for (global_index i = 0; i < a.rows; ++i) {
    const auto ua = static_cast<std::size_t>(i);
    const offset_type na = a.row_ptr[ua + 1] - a.row_ptr[ua], nb = b.row_ptr[ua + 1] - b.row_ptr[ua];
    if (na != nb) return ::tessera::detail::formatted("row {} has {} entries vs {}", i, na, nb);
    for (offset_type k = 0; k < na; ++k) {
      const auto ka = static_cast<std::size_t>(a.row_ptr[ua] + k), kb = static_cast<std::size_t>(b.row_ptr[ua] + k);
      if (a.col_idx[ka] != b.col_idx[kb])
        return ::tessera::detail::formatted("row {}: column {} vs {}", i, a.col_idx[ka], b.col_idx[kb]);
      const double va = static_cast<double>(a.values[ka]), vb = static_cast<double>(b.values[kb]);
      const double scale = std::max({std::abs(va), std::abs(vb), 1.0});
      if (std::abs(va - vb) > tolerance * scale)
        return ::tessera::detail::formatted("entry ({}, {}): {} vs {}", i, a.col_idx[ka], va, vb);
    }
  }
  return std::nullopt;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_HOST_CSR_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_HOST_CSR_HPP
#endif
