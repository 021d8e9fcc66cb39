#pragma once
/// @file
/// triplets<T>: host-side (row, column, value) lists with global indices.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_TRIPLETS_HPP
#endif

#include "../core/index_types.hpp"

#include <cstddef>
#include <vector>

namespace tessera {

/// Entries of a matrix as three parallel arrays with global 0-based indices.
///
/// The input of build_from_triplets and the output of local_triplets(); it may
/// hold duplicates and entries owned by any rank.
template <class T>
struct triplets {
  std::vector<global_index> rows;
  std::vector<global_index> cols;
  std::vector<T> values;

  [[nodiscard]] std::size_t size() const noexcept { return values.size(); }
  [[nodiscard]] bool empty() const noexcept { return values.empty(); }
  void reserve(std::size_t n) {
    rows.reserve(n);
    cols.reserve(n);
    values.reserve(n);
  }
  void push_back(global_index row, global_index col, T value) {
    rows.push_back(row);
    cols.push_back(col);
    values.push_back(value);
  }
  /// Keep the entries for which `keep(row, col, value)` is true, in their order.
  template <class Keep>
  void retain(Keep&& keep) {
    std::size_t w = 0;
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (!keep(rows[k], cols[k], values[k])) continue;
      rows[w] = rows[k];
      cols[w] = cols[k];
      values[w] = values[k];
      ++w;
    }
    rows.resize(w);
    cols.resize(w);
    values.resize(w);
  }
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_TRIPLETS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_TRIPLETS_HPP
#endif
