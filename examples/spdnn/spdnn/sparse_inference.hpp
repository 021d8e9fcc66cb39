#pragma once
// SpDNN's spgemm mode (inference.hpp): sparse Y, each layer an spgemm and the activation that
// drops the zeros.
#include "batch_kernels.hpp"
#include "problem.hpp"
#include <tessera/ops/elementwise.hpp>
#include <tessera/ops/spgemm_default.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace spdnn {

/// infer() in spgemm mode: sparse Y through every layer, spgemm then the activation that drops
/// the zeros.
template <class T, class Policy>
mode_result infer_sparse(const tessera::communicator& world, const problem<T, Policy>& p, const inference_settings& s,
                          const inference_clock::time_point start) {
  const bias_relu_clamp<T> act{static_cast<T>(s.bias), static_cast<T>(s.ymax)};
  const auto seconds = [&] { return std::chrono::duration<double>(inference_clock::now() - start).count(); };
  mode_result out;
  auto& live_images = out.live_images;
  auto y = p.features.front();
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    y = tessera::apply_drop_zeros(p.row_form ? tessera::spgemm(y, p.layers[l]) : tessera::spgemm(p.layers[l], y), act);
    if (s.on_layer && world.rank() == 0) s.on_layer(static_cast<int>(l) + 1, seconds(), y.global_nnz());
  }
  if (p.row_form) {  // an image is a category if its row kept an entry
    const auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local().row_ptr);
    for (std::size_t r = 0; r + 1 < row_ptr.extent(0); ++r)
      if (row_ptr(r + 1) > row_ptr(r)) live_images.push_back(p.first_image + static_cast<std::int64_t>(r));
  } else {  // ... if its column kept an entry on any rank
    const auto col_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local().col_idx);
    const auto col_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.col_map());
    std::vector<char> used(col_map.extent(0), 0);
    for (std::size_t e = 0; e < col_idx.extent(0); ++e) used[static_cast<std::size_t>(col_idx(e))] = 1;
    for (std::size_t c = 0; c < used.size(); ++c)
      if (used[c]) live_images.push_back(p.first_image + col_map(c));
  }
  return out;
}

}  // namespace spdnn
