#pragma once
// What every SpDNN mode shares (inference.hpp explains the modes): the settings, the problem on
// its communicator, the results, and prepare() and infer(), which call the mode's steps declared
// here. The problem is built by make_problem.hpp; each mode is defined in its own header.

#include "network.hpp"

#include <tessera/comm/communicator.hpp>
#include <tessera/kernels/spmm_balanced.hpp>
#include <tessera/matrix/dist_matrix.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace spdnn {

template <class T, class MemorySpace>
struct fused_network;  // fused_layers.hpp


enum class mode { spmm, spgemm, fused };
enum class scheme { model, data };

inline std::string_view to_string(mode m) { return m == mode::spmm ? "spmm" : m == mode::spgemm ? "spgemm" : "fused"; }
inline std::string_view to_string(scheme s) { return s == scheme::model ? "model" : "data"; }

/// The recurrence's constants and how to run it.
struct inference_settings {
  double bias = -0.3;
  double ymax = challenge_ymax;
  mode product = mode::spmm;
  /// Images per batch in spmm mode (rounded up to a power of two); 0 picks one
  /// of 256 on host cores, every image on a device (see batch_width).
  std::int64_t batch = 0;
  /// Called on the first rank after each layer: (layer, seconds so far, nonzeros or live images).
  std::function<void(int, double, std::int64_t)> on_layer;
};

/// The mode that runs best for a scheme on Policy's execution space: fused for data parallelism on
/// host cores; spmm otherwise (model parallelism, which the fused mode cannot run, and devices,
/// where the fused mode is correct but runs an image per thread: not measured on a GPU yet).
template <class Policy>
mode default_mode(scheme parallel) {
  constexpr bool on_device = tessera::kernels::prefers_balanced_spmm<typename Policy::execution_space>;
  return parallel == scheme::data && !on_device ? mode::fused : mode::spmm;
}

/// The layers W'(l) and the features Y'(0) on one communicator (the world for
/// model parallelism, a rank's own for data parallelism).
template <class T, class Policy>
struct problem {
  tessera::communicator comm;
  std::vector<tessera::dist_matrix<T, Policy>> layers;  ///< W'(l) (column form) or W(l) (row form)
  std::vector<tessera::dist_matrix<T, Policy>> features;  ///< Y'(0) (neurons x images) or Y(0) (images x neurons)
  bool row_form = false;
  std::int64_t first_image = 0;  ///< global id of this problem's image 0
  std::int64_t total_images = 0;  ///< over all ranks
  /// Fused mode: the layers in its kernel's layout (made by prepare, or by infer if not).
  std::shared_ptr<const fused_network<T, typename Policy::memory_space>> fused;
};

/// What a run found: the categories (global image ids, ascending, on every rank of the world).
struct inference_result {
  std::vector<std::int64_t> categories;
  double seconds = 0;  ///< the slowest rank's
  std::int64_t liveness_bytes = 0;  ///< spmm mode, model parallel: the per-layer OR of live images (an allreduce)
};


/// What one mode's inference found on this rank: the global ids of the images alive after the
/// last layer (model parallelism finds an image on every rank that holds one of its neurons),
/// and the bytes of live-image flags the ranks exchanged on the way.
struct mode_result {
  std::vector<std::int64_t> live_images;
  std::int64_t liveness_bytes = 0;
};

using inference_clock = std::chrono::steady_clock;

/// Images per dense batch in spmm mode: s.batch, or 256 on host cores, or every image at once on
/// a device: a batch of 1,024 images x 1,024 neurons is a few thousand threads' work, far too
/// little to fill a GPU (and each batch pays a launch and a fence per layer). A power of two.
/// On host cores the product's kernel (rows that share a pattern: kernels/spmm_row_groups.hpp)
/// reads each row of Y' twice per layer and writes Z' once, so the batch is what must stay near
/// the core: at 1 rank, 30,000 images, 120 layers (2026-11-28, Zen 3), 1,024 neurons took
/// 0.37-0.41 / 0.33-0.35 / 0.35-0.50 / 0.32-0.47 s at 128 / 256 / 512 / 1,024 images, 4,096 neurons
/// 1.83-1.86 / 1.64-1.65 / 2.17-2.26 s at 128 / 256 / 512, and 16,384 neurons (8,000 images)
/// 3.36 / 2.67 s at 128 / 256 (the 16 MiB per rank of the row kernel's day: 1,024 or 4,096 images).
template <class T, class Policy>
std::int64_t batch_width(const problem<T, Policy>& p, const inference_settings& s) {
  const std::int64_t images_here = std::max<std::int64_t>(p.features.front().num_cols(), 1);
  constexpr bool on_device = tessera::kernels::prefers_balanced_spmm<typename Policy::execution_space>;
  constexpr std::int64_t host_batch = 256;
  const std::int64_t batch = s.batch > 0 ? s.batch : on_device ? images_here : host_batch;
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(std::min(batch, images_here))));
}

/// Each mode's steps, declared here and defined in the mode's header (fused_inference.hpp,
/// dense_inference.hpp, sparse_inference.hpp; inference.hpp includes them all): prepare() and
/// infer() below call them, and a program can compile each mode in a translation unit of its own
/// (tessera-spdnn does: examples/spdnn/modes.hpp).
template <class T, class Policy>
void prepare_fused(const tessera::communicator& world, problem<T, Policy>& p);
template <class T, class Policy>
void prepare_dense(problem<T, Policy>& p, const inference_settings& s);
template <class T, class Policy>
mode_result infer_fused(const tessera::communicator& world, const problem<T, Policy>& p, const inference_settings& s,
                        inference_clock::time_point start);
template <class T, class Policy>
mode_result infer_dense(const tessera::communicator& world, const problem<T, Policy>& p, const inference_settings& s,
                        inference_clock::time_point start);
template <class T, class Policy>
mode_result infer_sparse(const tessera::communicator& world, const problem<T, Policy>& p, const inference_settings& s,
                         inference_clock::time_point start);

/// Inspect every layer before the first image arrives (collective over p.comm): the spmm plan of
/// W'(l) for the batch width infer() starts with, kept with W'(l), where every later product finds
/// it. The weights are known before the images, so this is preparation, not inference (the
/// challenge times inference only); tessera-spdnn reports its seconds apart. On a GPU, a plan
/// made inside the layer loop cost more than the layer's product (an H100 spent 1 ms per layer on
/// it). spgemm mode has nothing to prepare: its plans depend on Y as well. Fused mode lays the
/// layers out for its kernel (fuse_layers), kept in p.fused, the layers shared out over world's
/// ranks (collective over world, as infer is).
template <class T, class Policy>
void prepare(const tessera::communicator& world, problem<T, Policy>& p, const inference_settings& s) {
  if (s.product == mode::fused) prepare_fused(world, p);
  else if (s.product == mode::spmm && !p.layers.empty()) prepare_dense(p, s);
}

/// Run all layers (collective over problem.comm and, for the result, over world).
template <class T, class Policy>
inference_result infer(const tessera::communicator& world, const problem<T, Policy>& p, const inference_settings& s) {
  world.barrier();
  const auto start = inference_clock::now();
  mode_result found = s.product == mode::fused    ? infer_fused(world, p, s, start)
                      : s.product == mode::spgemm ? infer_sparse(world, p, s, start)
                                                  : infer_dense(world, p, s, start);
  inference_result result;
  result.seconds = world.max(std::chrono::duration<double>(inference_clock::now() - start).count());
  result.liveness_bytes = found.liveness_bytes;
  // Model parallelism finds each category on every rank that holds one of its neurons: deduplicate.
  auto all = world.allgather_concatenated(found.live_images);
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  result.categories = std::move(all);
  return result;
}

}  // namespace spdnn
