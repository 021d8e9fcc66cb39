#pragma once
// The serial reference every distributed run is checked against: one image at
// a time, the simplest correct form of the challenge's recurrence.

#include "network.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace spdnn {

/// A sparse matrix on one process (rows ascending, columns ascending within a row).
template <class T>
struct host_sparse {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col_idx;
  std::vector<T> values;

  void push_row(const std::vector<std::int64_t>& cols_of_row, const std::vector<T>& values_of_row) {
    col_idx.insert(col_idx.end(), cols_of_row.begin(), cols_of_row.end());
    values.insert(values.end(), values_of_row.begin(), values_of_row.end());
    row_ptr.push_back(static_cast<std::int64_t>(col_idx.size()));
    ++rows;
  }
  [[nodiscard]] std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(col_idx.size()); }
};

/// Per-layer counts a caller may want to watch.
struct layer_report {
  int layer;
  std::int64_t live_images;
  std::int64_t nonzeros;
};

/// The categories (images whose last row has a nonzero, ascending): the
/// challenge's answer, computed image by image.
template <class T>
std::vector<std::int64_t> reference_categories(const std::vector<host_sparse<T>>& weights,
                                               const host_sparse<T>& features, T bias, T ymax,
                                               const std::function<void(const layer_report&)>& report = {}) {
  const std::int64_t n = features.cols;
  std::vector<T> acc(static_cast<std::size_t>(n), T{0});
  std::vector<char> touched_flag(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> touched;
  std::vector<std::int64_t> live(features.rows);
  std::vector<std::int64_t> categories;
  std::vector<std::vector<std::int64_t>> idx(static_cast<std::size_t>(features.rows));
  std::vector<std::vector<T>> val(static_cast<std::size_t>(features.rows));
  for (std::int64_t r = 0; r < features.rows; ++r) {
    const auto b = static_cast<std::size_t>(features.row_ptr[r]), e = static_cast<std::size_t>(features.row_ptr[r + 1]);
    idx[r].assign(features.col_idx.begin() + static_cast<std::ptrdiff_t>(b), features.col_idx.begin() + static_cast<std::ptrdiff_t>(e));
    val[r].assign(features.values.begin() + static_cast<std::ptrdiff_t>(b), features.values.begin() + static_cast<std::ptrdiff_t>(e));
  }
  std::vector<char> alive(static_cast<std::size_t>(features.rows), 1);
  for (std::size_t l = 0; l < weights.size(); ++l) {
    const auto& w = weights[l];
    std::int64_t live_images = 0, nonzeros = 0;
    for (std::int64_t r = 0; r < features.rows; ++r) {
      if (!alive[static_cast<std::size_t>(r)]) continue;
      auto& yi = idx[static_cast<std::size_t>(r)];
      auto& yv = val[static_cast<std::size_t>(r)];
      touched.clear();
      for (std::size_t t = 0; t < yi.size(); ++t)
        for (auto e = w.row_ptr[yi[t]]; e < w.row_ptr[yi[t] + 1]; ++e) {
          const auto j = static_cast<std::size_t>(w.col_idx[static_cast<std::size_t>(e)]);
          if (!touched_flag[j]) {
            touched_flag[j] = 1;
            touched.push_back(static_cast<std::int64_t>(j));
          }
          acc[j] += yv[t] * w.values[static_cast<std::size_t>(e)];
        }
      std::sort(touched.begin(), touched.end());
      yi.clear();
      yv.clear();
      for (std::int64_t j : touched) {
        const T z = acc[static_cast<std::size_t>(j)];
        acc[static_cast<std::size_t>(j)] = T{0};
        touched_flag[static_cast<std::size_t>(j)] = 0;
        const T y = z == T{0} ? T{0} : std::min(std::max(z + bias, T{0}), ymax);
        if (y != T{0}) {
          yi.push_back(j);
          yv.push_back(y);
        }
      }
      if (yi.empty())
        alive[static_cast<std::size_t>(r)] = 0;
      else
        ++live_images;
      nonzeros += static_cast<std::int64_t>(yi.size());
    }
    if (report) report({static_cast<int>(l) + 1, live_images, nonzeros});
  }
  for (std::int64_t r = 0; r < features.rows; ++r)
    if (alive[static_cast<std::size_t>(r)]) categories.push_back(r);
  return categories;
}

/// Layer l (1-based) of the RadiX-Net as a host matrix.
template <class T>
host_sparse<T> radixnet_layer(const radixnet& net, int layer) {
  host_sparse<T> w;
  w.cols = net.neurons();
  std::vector<std::int64_t> cols;
  const std::vector<T> vals(edges_per_neuron, static_cast<T>(challenge_weight));
  for (int i = 0; i < net.neurons(); ++i) {
    const auto c = net.row_columns(layer, i);
    cols.assign(c.begin(), c.end());
    w.push_row(cols, vals);
  }
  return w;
}

/// Images [first, first + count) of the generator as a host matrix (images x neurons).
template <class T>
host_sparse<T> generated_features(const feature_generator& gen, int neurons, std::int64_t first, std::int64_t count) {
  host_sparse<T> y;
  y.cols = neurons;
  std::vector<std::int64_t> cols;
  for (std::int64_t r = first; r < first + count; ++r) {
    const auto on = gen.image(r);
    cols.assign(on.begin(), on.end());
    y.push_row(cols, std::vector<T>(cols.size(), T{1}));
  }
  return y;
}

}  // namespace spdnn
