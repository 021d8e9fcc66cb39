#pragma once
// SpDNN's fused mode (inference.hpp): the layers laid out once (fused_layers.hpp), every image
// through every layer in one work item.
#include "batch_kernels.hpp"
#include "fused_layers.hpp"
#include "problem.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace spdnn {

/// prepare() for fused mode: the layers laid out for its kernel, kept in p.fused (collective over
/// world).
template <class T, class Policy>
void prepare_fused(const tessera::communicator& world, problem<T, Policy>& p) {
  p.fused = std::make_shared<const fused_network<T, typename Policy::memory_space>>(
      fuse_layers(world, p.layers, static_cast<int>(p.features.front().num_cols())));
}

/// infer() in fused mode (row form, data parallel): every image of this rank through every layer
/// in the fused kernel; an image lives if its row kept a nonzero.
template <class T, class Policy>
mode_result infer_fused(const tessera::communicator& world, const problem<T, Policy>& p, const inference_settings& s,
                          const inference_clock::time_point start) {
  const bias_relu_clamp<T> act{static_cast<T>(s.bias), static_cast<T>(s.ymax)};
  const auto seconds = [&] { return std::chrono::duration<double>(inference_clock::now() - start).count(); };
  mode_result out;
  auto& live_images = out.live_images;
  // Row form: features are this rank's images x neurons; an image lives if it kept a nonzero.
  const auto& y0 = p.features.front();
  const auto made = p.fused ? nullptr
                              : std::make_shared<const fused_network<T, typename Policy::memory_space>>(
                                    fuse_layers(world, p.layers, static_cast<int>(y0.num_cols())));
  const auto& net = p.fused ? *p.fused : *made;
  const auto alive = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, run_fused<T, spaces_of<Policy>>(net, y0.local(), y0.col_map(), act));
  for (std::size_t r = 0; r < alive.extent(0); ++r)
    if (alive(r)) live_images.push_back(p.first_image + static_cast<std::int64_t>(r));
  if (s.on_layer && world.rank() == 0) s.on_layer(static_cast<int>(p.layers.size()), seconds(), static_cast<std::int64_t>(live_images.size()));
  return out;
}

}  // namespace spdnn
