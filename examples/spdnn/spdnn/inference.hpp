#pragma once
// Distributed sparse DNN inference, every variant on tessera's own operations.
// Model parallelism and the dense (spmm) mode use the column-vector form
// Y' = W'Y' (neurons as rows, images as columns): tensor parallelism splits
// neurons, and spmm multiplies a sparse matrix by a dense block. Data-parallel
// spgemm uses the row form Y = Y W (images as rows): each product then
// fetches only the small W, and every output row is one image.
//
//   --parallel model  W' and Y' split by neurons over all ranks; each layer's
//                     product fetches exactly the rows of Y' that the local
//                     rows of W' reference (tensor parallelism, as in SGA).
//   --parallel data   W' replicated, images split: each rank runs the same
//                     operations on a communicator of its own, so no layer
//                     sends anything.
//   --mode spgemm     Y' sparse: Z = spgemm(W', Y'), then the fused
//                     bias + ReLU + clamp that also drops the zeros; a dead
//                     image has no entries left, so it costs nothing later.
//   --mode spmm       Y' dense, in batches of images: Z = spmm(W', Y') with
//                     the plan of each layer cached and reused by every batch;
//                     dead images are dropped by compacting the batch: to
//                     the live ones rounded up to 64 where a layer's plan
//                     serves any width (data parallel), else to the next
//                     power of two (so the plans of a few widths serve all
//                     batches).
//   --mode fused      data parallel only: each image's sparse row through every
//                     layer in one work item, the product and the activation
//                     fused, outputs with identical columns of W computed once
//                     (fused_layers.hpp); a dead image simply stops.

#include "batch_kernels.hpp"
#include "fused_layers.hpp"
#include "network.hpp"
#include "tsv.hpp"
#include "read_layers.hpp"
#include "tsv_rows.hpp"

// Only what inference uses (docs/getting-started.md#compile-time): the row_block x csr policies
// of any backend, build, spmm, spgemm and the element-wise drop of zeros.
#include <tessera/distribution/row_block.hpp>
#include <tessera/kernels/sorted_search.hpp>
#include <tessera/kernels/spmm_balanced.hpp>
#include <tessera/matrix/build.hpp>
#include <tessera/matrix/dist_dense.hpp>
#include <tessera/matrix/dist_matrix.hpp>
#include <tessera/matrix/local_triplets.hpp>
#include <tessera/matrix/to_view.hpp>
#include <tessera/matrix/triplets.hpp>
#include <tessera/core/uninitialized_allocator.hpp>
#include <tessera/ops/elementwise.hpp>
#include <tessera/ops/spgemm.hpp>
#include <tessera/ops/spmm.hpp>
#include <tessera/ops/transpose.hpp>
#include <tessera/comm/mpi_check.hpp>
#include <tessera/storage/csr.hpp>

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spdnn {

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

// ---------------------------------------------------------------------------------------------
// Building the network and the features.

/// The form each variant computes in (see the top of this file).
inline bool uses_row_form(scheme parallel, mode product) { return parallel == scheme::data && product != mode::spmm; }

/// W(l) (row form) or W'(l) for l = 1..L of the RadiX-Net, each rank generating its share of W's rows (collective).
template <class T, class Policy>
std::vector<tessera::dist_matrix<T, Policy>> generated_layers(const tessera::communicator& comm, const radixnet& net,
                                                              int layers, bool row_form) {
  std::vector<tessera::dist_matrix<T, Policy>> out;
  const tessera::row_block::mapping rows(comm.size(), net.neurons(), net.neurons());
  for (int l = 1; l <= layers; ++l) {
    tessera::triplets<T> t;
    for (auto i = rows.row_begin(comm.rank()); i < rows.row_end(comm.rank()); ++i)
      for (int j : net.row_columns(l, static_cast<int>(i)))
        row_form ? t.push_back(i, j, static_cast<T>(challenge_weight)) : t.push_back(j, i, static_cast<T>(challenge_weight));
    out.push_back(tessera::build_from_triplets<T, Policy>(comm, net.neurons(), net.neurons(), t));
  }
  return out;
}

/// Images [first, first + count) of the generator as (neuron, image + shift) triplets, or (image + shift, neuron).
template <class T>
tessera::triplets<T> generated_image_entries(const feature_generator& gen, std::int64_t first, std::int64_t count,
                                             std::int64_t shift, bool row_form = false) {
  tessera::triplets<T> t;
  for (std::int64_t r = first; r < first + count; ++r)
    for (int n : gen.image(r)) row_form ? t.push_back(r + shift, n, T(1)) : t.push_back(n, r + shift, T(1));
  return t;
}

/// Where the features come from: the generator, or entries (image, neuron, value) read from a file.
struct feature_source {
  const feature_generator* generator = nullptr;
  std::int64_t images = 0;          ///< generator: how many; file: how many at most (0: as many as its lines)
  const tsv_columns* file = nullptr;  ///< file: this rank's lines (0-based image, neuron), read on the world
};

/// The number of images a features file holds (its largest id + 1), checked on every rank before
/// anything is sized by it (collective over world): memory and time grow with it. An image has at
/// least one line in every file the challenge publishes or --write writes, so an id beyond the
/// file's line count cannot be one; `declared` (if positive) bounds the ids too.
inline std::int64_t images_in(const tessera::communicator& world, const tsv_columns& file, std::int64_t declared) {
  world.collectively([&] {
    TESSERA_REQUIRE(file.largest_first >= 0, parse_error, "{}:{}: no images: a features file holds at least one 'image neuron value' line",
                    file.path, std::max<std::int64_t>(file.lines, 1));
    TESSERA_REQUIRE(declared <= 0 || file.largest_first < declared, parse_error,
                    "{}:{}: image {} is beyond the {} images declared", file.path, file.largest_first_line,
                    file.largest_first + 1, declared);
    TESSERA_REQUIRE(file.largest_first < file.lines, parse_error,
                    "{}:{}: image {} is beyond the file's {} lines (each image has at least one line)", file.path,
                    file.largest_first_line, file.largest_first + 1, file.lines);
  });
  return file.largest_first + 1;
}

/// The problem of this rank: the layers on `comm` (world or self) and the
/// features split accordingly (collective over world). `layers` must be in
/// the form uses_row_form(parallel, product) says.
template <class T, class Policy>
problem<T, Policy> make_problem(const tessera::communicator& world, scheme parallel, mode product, int neurons,
                                std::vector<tessera::dist_matrix<T, Policy>> layers, const feature_source& source,
                                const tessera::communicator& comm) {
  const bool row_form = uses_row_form(parallel, product);
  comm.collectively([&] {
    TESSERA_REQUIRE(product != mode::fused || parallel == scheme::data, invalid_argument,
                    "spdnn: the fused mode runs data-parallel only (every rank holds every layer whole): use it with --parallel data");
  });
  problem<T, Policy> p{comm, std::move(layers), {}, row_form, 0, 0, {}};
  std::int64_t images = source.images;
  if (source.file != nullptr) images = images_in(world, *source.file, source.images);
  p.total_images = images;
  const tessera::row_block::mapping split(world.size(), images, neurons);
  const auto mine_first = split.row_begin(world.rank()), mine_count = split.row_end(world.rank()) - mine_first;

  if (parallel == scheme::model) {
    if (source.generator != nullptr) {
      const auto t = generated_image_entries<T>(*source.generator, mine_first, mine_count, 0);
      p.features.push_back(tessera::build_from_triplets<T, Policy>(world, neurons, images, t));
    } else {
      const auto values = values_as<T>(*source.file);
      p.features.push_back(tessera::build_from_triplets<T, Policy>(
          world, neurons, images, std::span<const tessera::global_index>(source.file->second),
          std::span<const tessera::global_index>(source.file->first), std::span<const T>(values)));
    }
    return p;
  }
  // Data parallelism: this rank's images, on its own communicator.
  p.first_image = mine_first;
  if (source.generator != nullptr) {
    const auto t = generated_image_entries<T>(*source.generator, mine_first, mine_count, -mine_first, row_form);
    p.features.push_back(row_form ? tessera::build_from_triplets<T, Policy>(comm, mine_count, neurons, t)
                                  : tessera::build_from_triplets<T, Policy>(comm, neurons, mine_count, t));
    return p;
  }
  // Lines were read wherever they fell: route them to their image's rank, assembled by image. That
  // block (this rank's images in order, their neurons) is the row form on `comm` as it stands; the
  // other form is its transpose there. One assembly, not a second one from triplets.
  const auto values = values_as<T>(*source.file);
  const auto routed = tessera::build_from_triplets<T, Policy>(
      world, images, neurons, std::span<const tessera::global_index>(source.file->first),
      std::span<const tessera::global_index>(source.file->second), std::span<const T>(values));
  tessera::dist_matrix<T, Policy> mine(comm, typename Policy::distribution_type{}.make_mapping(1, mine_count, neurons),
                                       routed.local(), routed.col_map());
  p.features.push_back(row_form ? std::move(mine) : tessera::transpose(mine));
  return p;
}

/// make_problem from features read by read_tsv_rows on world (collective over world). With data
/// parallelism, csr storage and the file's lines in (image, neuron) order, each rank keeps the
/// images whose lines it read, as it read them: the images are split where the file's bytes were,
/// at whole images (one whose lines cross a share's end goes whole to the lowest rank holding a line
/// of it: those lines are all that move), so each rank's images hold about the same number of
/// nonzeros. Anything else takes the routed make_problem above.
template <class T, class Policy>
problem<T, Policy> make_problem(const tessera::communicator& world, scheme parallel, mode product, int neurons,
                                std::vector<tessera::dist_matrix<T, Policy>> layers, tsv_rows<T>& rows,
                                std::int64_t declared_images, const tessera::communicator& comm) {
  const std::int64_t images = images_in(world, rows.file, declared_images);
  // Of every rank: in order, entries, rows, first (image, neuron), last (image, neuron), first row's entries.
  constexpr std::size_t fields = 8;
  std::vector<std::int64_t> mine(fields, -1);
  mine[0] = rows.in_order ? 1 : 0;
  mine[1] = static_cast<std::int64_t>(rows.size());
  mine[2] = static_cast<std::int64_t>(rows.row_id.size());
  if (rows.in_order && rows.size() > 0)
    mine = {1, mine[1], mine[2], rows.row_id.front(), rows.column.front(), rows.row_id.back(), rows.column.back(),
            static_cast<std::int64_t>(rows.row_size(0))};
  const auto all = world.allgather_concatenated(mine);
  const auto of = [&](int r, std::size_t field) { return all[fields * static_cast<std::size_t>(r) + field]; };
  const int ranks = world.size(), me = world.rank();
  bool in_order = parallel == scheme::data && std::same_as<typename Policy::storage_type, tessera::csr>;
  for (int r = 0, previous = -1; r < ranks && in_order; ++r) {
    in_order = of(r, 0) == 1;
    if (of(r, 1) == 0) continue;
    if (previous >= 0)
      in_order = in_order && std::pair(of(previous, 5), of(previous, 6)) < std::pair(of(r, 3), of(r, 4));
    previous = r;
  }
  if (!in_order) {
    rows.to_columns();
    const feature_source source{nullptr, declared_images, &rows.file};
    return make_problem<T, Policy>(world, parallel, product, neurons, std::move(layers), source, comm);
  }

  // Who keeps each rank's first image (the lowest rank holding a line of it), and where each rank's
  // images start: the ranks that keep none start where the next one does.
  std::vector<int> keeper(static_cast<std::size_t>(ranks), -1);
  for (int r = 0; r < ranks; ++r) {
    if (of(r, 1) == 0) continue;
    keeper[static_cast<std::size_t>(r)] = r;
    for (int q = r - 1; q >= 0; --q) {
      if (of(q, 1) == 0) continue;
      if (of(q, 5) != of(r, 3)) break;
      keeper[static_cast<std::size_t>(r)] = q;
    }
  }
  std::vector<std::int64_t> start(static_cast<std::size_t>(ranks) + 1, images);
  for (int r = ranks - 1; r >= 0; --r) {
    const auto k = static_cast<std::size_t>(r);
    const bool keeps_first = keeper[k] == r, keeps_more = of(r, 2) > 1;
    start[k] = keeps_first ? of(r, 3) : keeper[k] >= 0 && keeps_more ? of(r, 3) + 1 : start[k + 1];
  }
  start[0] = 0;

  // The lines of a first image kept elsewhere go to its keeper, after its own (ranks in order).
  std::vector<int> send_columns(static_cast<std::size_t>(ranks), 0), receive_columns(send_columns), send_values(send_columns),
      receive_values(send_columns), send_at(send_columns), receive_columns_at(send_columns), receive_values_at(send_columns);
  std::size_t arriving = 0;
  // MPI counts bytes in an int here.
  constexpr std::int64_t most_moving =
      std::numeric_limits<int>::max() / static_cast<std::int64_t>(std::max(sizeof(T), sizeof(tessera::local_index)));
  world.collectively([&] {
    for (int r = 0; r < ranks; ++r) {
      const auto k = static_cast<std::size_t>(r);
      if (keeper[k] < 0 || keeper[k] == r) continue;
      TESSERA_REQUIRE(of(r, 7) <= most_moving, unsupported, "{}: image {} has {} lines on rank {}; at most {} can move to another rank",
                      rows.file.path, of(r, 3) + 1, of(r, 7), r, most_moving);
      if (r == me) {
        send_columns[static_cast<std::size_t>(keeper[k])] = static_cast<int>(of(r, 7) * static_cast<std::int64_t>(sizeof(tessera::local_index)));
        send_values[static_cast<std::size_t>(keeper[k])] = static_cast<int>(of(r, 7) * static_cast<std::int64_t>(sizeof(T)));
      }
      if (keeper[k] == me) {
        receive_columns_at[k] = static_cast<int>(arriving * sizeof(tessera::local_index));
        receive_values_at[k] = static_cast<int>(arriving * sizeof(T));
        receive_columns[k] = static_cast<int>(of(r, 7) * static_cast<std::int64_t>(sizeof(tessera::local_index)));
        receive_values[k] = static_cast<int>(of(r, 7) * static_cast<std::int64_t>(sizeof(T)));
        arriving += static_cast<std::size_t>(of(r, 7));
        TESSERA_REQUIRE(static_cast<std::int64_t>(arriving) <= most_moving, unsupported,
                        "{}: {} lines would move to rank {}; at most {} can", rows.file.path, arriving, me, most_moving);
      }
    }
  });
  const std::size_t had = rows.column.size;
  rows.column.resize(had + arriving);
  rows.value.resize(had + arriving);
  TESSERA_MPI(MPI_Alltoallv(rows.column.begin(), send_columns.data(), send_at.data(), MPI_BYTE, rows.column.begin() + had,
                            receive_columns.data(), receive_columns_at.data(), MPI_BYTE, world.get()));
  TESSERA_MPI(MPI_Alltoallv(rows.value.begin(), send_values.data(), send_at.data(), MPI_BYTE, rows.value.begin() + had,
                            receive_values.data(), receive_values_at.data(), MPI_BYTE, world.get()));

  // A first image kept elsewhere lies before `first`: rows_block leaves it out.
  const auto first = start[static_cast<std::size_t>(me)], count = start[static_cast<std::size_t>(me) + 1] - first;
  auto [block, col_map] = rows_block<T, typename Policy::memory_space>(std::move(rows), first, count, neurons);
  tessera::dist_matrix<T, Policy> features(comm, typename Policy::distribution_type{}.make_mapping(1, count, neurons),
                                           std::move(block), std::move(col_map));
  const bool row_form = uses_row_form(parallel, product);
  problem<T, Policy> p{comm, std::move(layers), {}, row_form, first, images, {}};
  p.features.push_back(row_form ? std::move(features) : tessera::transpose(features));
  return p;
}

// ---------------------------------------------------------------------------------------------
// Inference.

/// What a run found: the categories (global image ids, ascending, on every rank of the world).
struct inference_result {
  std::vector<std::int64_t> categories;
  double seconds = 0;  ///< the slowest rank's
  std::int64_t liveness_bytes = 0;  ///< spmm mode, model parallel: the per-layer OR of live images (an allreduce)
};


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

/// prepare() for fused mode: the layers laid out for its kernel, kept in p.fused (collective over
/// world). Each mode's steps are function templates of their own so that a program can compile
/// them in translation units of their own (tessera-spdnn compiles one per mode: mode_*.cpp).
template <class T, class Policy>
void prepare_fused(const tessera::communicator& world, problem<T, Policy>& p) {
  p.fused = std::make_shared<const fused_network<T, typename Policy::memory_space>>(
      fuse_layers(world, p.layers, static_cast<int>(p.features.front().num_cols())));
}

/// prepare() for spmm mode: every layer's plan for the first batch's width (collective over p.comm).
template <class T, class Policy>
void prepare_dense(problem<T, Policy>& p, const inference_settings& s) {
  const tessera::dist_dense<T, Policy> probe(p.comm, p.layers.front().mapping(), batch_width(p, s));
  for (const auto& w : p.layers) (void)tessera::spmm_plan_for(w, probe);
}

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

/// What one mode's inference found on this rank: the global ids of the images alive after the
/// last layer (model parallelism finds an image on every rank that holds one of its neurons),
/// and the bytes of live-image flags the ranks exchanged on the way.
struct mode_result {
  std::vector<std::int64_t> live_images;
  std::int64_t liveness_bytes = 0;
};

using inference_clock = std::chrono::steady_clock;

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

/// infer() in spmm mode: dense batches of images through every layer, the dead ones compacted
/// away, the few survivors of each batch pooled (see below).
template <class T, class Policy>
mode_result infer_dense(const tessera::communicator& world, const problem<T, Policy>& p, const inference_settings& s,
                          const inference_clock::time_point start) {
  const bias_relu_clamp<T> act{static_cast<T>(s.bias), static_cast<T>(s.ymax)};
  const auto seconds = [&] { return std::chrono::duration<double>(inference_clock::now() - start).count(); };
  mode_result out;
  auto& live_images = out.live_images;
  const std::int64_t images_here = p.features.front().num_cols();
  const std::int64_t batch = batch_width(p, s);
  // Y'(0) stays where it is (CSR, rows sorted by column, col_map ascending): each batch's columns
  // are a range of local columns, found in every row by binary search, in the execution space.
  const auto& y0 = p.features.front();
  const auto y0_rows = y0.local();
  const auto y0_col_map = y0.col_map();
  const auto col_map_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y0_col_map);
  const auto local_column_at = [&](std::int64_t image) {  // first local column whose image is >= image
    const auto* first = col_map_host.data();
    return static_cast<tessera::local_index>(std::lower_bound(first, first + col_map_host.extent(0), image) - first);
  };
  const auto batches = static_cast<std::size_t>((images_here + batch - 1) / batch);
  // Per row of Y'(0), the first entry no batch has taken yet.
  const Kokkos::View<tessera::offset_type*, typename Policy::memory_space> fill_cursor(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spdnn::fill_cursor"), y0_rows.row_ptr.extent(0) > 0 ? y0_rows.row_ptr.extent(0) - 1 : 0);
  Kokkos::deep_copy(fill_cursor, Kokkos::subview(y0_rows.row_ptr, std::make_pair(std::size_t{0}, fill_cursor.extent(0))));
  const auto& w_rows = p.layers.front().mapping();
  using dense = tessera::dist_dense<T, Policy>;
  using memory_space = typename Policy::memory_space;
  // Two workspaces of the batch's width, made once: each step's Y and Z are blocks laid over them
  // at the step's width (dist_dense over the caller's memory), so nothing is allocated, faulted in
  // or zeroed per batch or per compaction (made anew, the blocks' pages were faulted in and zeroed
  // again for every batch). The activation's flags and marks likewise.
  const dense workspace[2] = {dense(p.comm, w_rows, batch), dense(p.comm, w_rows, batch)};
  const auto rows_here = workspace[0].local().extent(0);
  const Kokkos::View<char*, memory_space> flags_workspace("spdnn::live", static_cast<std::size_t>(batch));
  const auto marks_workspace = detail::activation_marks<spaces_of<Policy>>(rows_here, static_cast<std::size_t>(batch));
  const auto block_over = [&](const int which, const std::int64_t width) {
    return dense(p.comm, w_rows, typename dense::view_type(workspace[which].local().data(), rows_here, static_cast<std::size_t>(width)));
  };
  const auto flags_of = [&](const std::int64_t width) {
    return Kokkos::View<char*, memory_space>(flags_workspace.data(), static_cast<std::size_t>(width));
  };
  const auto marks_of = [&](const std::int64_t width) {
    return Kokkos::View<char**, Kokkos::LayoutRight, memory_space>(marks_workspace.data(), marks_workspace.extent(0),
                                                                   static_cast<std::size_t>(width));
  };
  // Dead images are dropped by compacting the live ones into a narrower block. Where W's plans
  // serve any width (no rank fetches rows: data parallelism), to the live count rounded up to 64
  // (whole panels of the SpMM kernel) as soon as that saves an eighth; otherwise to the next
  // power of two once half are dead, so that a few widths' plans serve every batch.
  const bool any_width = tessera::spmm_plan_for(p.layers.front(), workspace[0]).any_width();
  const auto compacted_width = [&](const std::int64_t live, const std::int64_t width) -> std::int64_t {
    const auto pow2 = static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(live)));
    if (!any_width) return live <= width / 2 ? pow2 : width;
    const std::int64_t rounded = live <= 64 ? pow2 : (live + 63) / 64 * 64;
    return rounded <= width - width / 8 ? rounded : width;
  };
  // The state of the images in flight: Y (in workspace y_at) and Z at `width` columns, column t
  // holding image image_of[t] (-1: none).
  int y_at = 0;
  std::int64_t width = batch;
  dense y = block_over(0, batch), z = block_over(1, batch);
  std::vector<std::int64_t> image_of;
  const auto lay_out = [&](const std::int64_t new_width) {
    y = block_over(y_at, new_width);
    z = block_over(1 - y_at, new_width);
    width = new_width;
  };
  // Layers [from, to) on the images in flight, dropping the dead ones on the way. Returns the
  // columns of Y alive at the end (with an image), or stops early, setting `cut`, once
  // stop_when_few and at most a sixteenth of a batch lives.
  const std::size_t layers = p.layers.size();
  std::size_t cut = layers;  // where a batch's survivors join the pool (see below); layers: no pool
  const auto run_layers = [&](const std::size_t from, const std::size_t to, const bool stop_when_few) {
    std::vector<std::int64_t> alive_columns;
    for (std::int64_t t = 0; t < width; ++t)
      if (image_of[static_cast<std::size_t>(t)] >= 0) alive_columns.push_back(t);
    for (std::size_t l = from; l < to && !alive_columns.empty(); ++l) {
      auto flags = flags_of(width);
      tessera::spmm(p.layers[l], y, z);
      detail::activate_dense<T, spaces_of<Policy>>(z.local(), flags, marks_of(width), act);
      auto host_flags = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, flags);
      std::vector<char> alive(host_flags.data(), host_flags.data() + host_flags.extent(0));
      if (p.comm.size() > 1) {  // a column lives if any rank's neurons kept a nonzero
        p.comm.allreduce_inplace(alive, MPI_MAX);
        out.liveness_bytes += static_cast<std::int64_t>(alive.size());
      }
      std::swap(y, z);
      y_at = 1 - y_at;
      alive_columns.clear();
      for (std::size_t t = 0; t < alive.size(); ++t)
        if (alive[t] && image_of[t] >= 0) alive_columns.push_back(static_cast<std::int64_t>(t));
      const auto live = static_cast<std::int64_t>(alive_columns.size());
      if (s.on_layer && world.rank() == 0) s.on_layer(static_cast<int>(l) + 1, seconds(), live);
      if (stop_when_few && l + 1 < to && live * 16 <= batch) {
        cut = l + 1;
        break;
      }
      const std::int64_t new_width = live == 0 ? width : compacted_width(live, width);
      if (new_width == width) continue;
      // Drop the dead images: the live columns, in order, into the other workspace (Z's: free
      // until the next product) at the narrower width.
      std::vector<std::int64_t> new_image(static_cast<std::size_t>(new_width), -1);
      for (std::size_t i = 0; i < alive_columns.size(); ++i)
        new_image[i] = image_of[static_cast<std::size_t>(alive_columns[i])];
      const auto keep_view = tessera::to_view<std::int64_t, memory_space>(alive_columns, "spdnn::keep");
      const dense compact = block_over(1 - y_at, new_width);
      detail::compact_columns<T, spaces_of<Policy>>(y.local(), compact.local(), keep_view);
      y_at = 1 - y_at;
      lay_out(new_width);
      image_of = std::move(new_image);
      for (std::size_t i = 0; i < alive_columns.size(); ++i) alive_columns[i] = static_cast<std::int64_t>(i);
    }
    return alive_columns;
  };
  const auto found_categories = [&](const std::vector<std::int64_t>& columns) {
    for (const auto t : columns) live_images.push_back(p.first_image + image_of[static_cast<std::size_t>(t)]);
  };
  // The pool: once most of a batch has died (at layer `cut`, found by the first batch), its few
  // survivors wait in the pool for the next batches' survivors and go through the remaining
  // layers together, a block of up to a batch's width. Each batch on its own took its handful
  // of images through every layer at a width of 1 to 32, reading all of W for each: a quarter
  // of the inference at 4,096 neurons.
  // The pool holds up to two batches' width: a batch's survivors (at most a batch) are appended
  // while fewer than a batch wait, and it is emptied, a batch's width at a time, once a batch
  // waits (the workspaces are free then: the batch's survivors are in the pool).
  const dense pool(p.comm, w_rows, 2 * batch);
  std::vector<std::int64_t> pool_images;
  const auto flush_pool = [&] {
    for (std::size_t start = 0; start < pool_images.size(); start += static_cast<std::size_t>(batch)) {
      const std::size_t count = std::min(pool_images.size() - start, static_cast<std::size_t>(batch));
      y_at = 0;
      lay_out(compacted_width(static_cast<std::int64_t>(count), batch));
      std::vector<std::int64_t> columns(count);
      for (std::size_t i = 0; i < count; ++i) columns[i] = static_cast<std::int64_t>(start + i);
      detail::compact_columns<T, spaces_of<Policy>>(pool.local(), y.local(), tessera::to_view<std::int64_t, memory_space>(columns, "spdnn::keep"));
      image_of.assign(static_cast<std::size_t>(width), -1);
      std::copy_n(pool_images.begin() + static_cast<std::ptrdiff_t>(start), count, image_of.begin());
      found_categories(run_layers(cut, layers, false));
    }
    pool_images.clear();
  };
  for (std::size_t b = 0; b < batches; ++b) {
    image_of.assign(static_cast<std::size_t>(batch), -1);
    const auto batch_first = static_cast<std::int64_t>(b) * batch;
    for (std::int64_t t = 0; t < batch && batch_first + t < images_here; ++t)
      image_of[static_cast<std::size_t>(t)] = batch_first + t;
    y_at = 0;
    lay_out(batch);
    if (b > 0) y.fill(T(0));  // fill_batch writes the batch's nonzeros only
    detail::fill_batch<T, spaces_of<Policy>>(y0_rows, y0_col_map, local_column_at(batch_first), local_column_at(batch_first + batch),
                                  batch_first, y.local(), fill_cursor);
    const bool first = b == 0;
    const auto survivors = run_layers(0, cut, first && batches > 1);
    if (cut == layers) {  // no pool (yet): these went through every layer
      found_categories(survivors);
      continue;
    }
    const auto from = tessera::to_view<std::int64_t, memory_space>(survivors, "spdnn::survivors");
    detail::append_columns<T, spaces_of<Policy>>(y.local(), from, pool.local(), static_cast<std::int64_t>(pool_images.size()));
    for (const auto t : survivors) pool_images.push_back(image_of[static_cast<std::size_t>(t)]);
    if (static_cast<std::int64_t>(pool_images.size()) >= batch) flush_pool();
  }
  flush_pool();
  return out;
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
