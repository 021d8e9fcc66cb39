#pragma once
// spdnn::cli::run<Backend>, included by run_<backend>.cpp only: reading (or generating) the
// problem, preparing, inferring and checking under one backend. The modes' own steps are
// compiled in mode_<mode>.cpp (modes.hpp declares them extern here).
#include "modes.hpp"
#include "run.hpp"
#include "spdnn/challenge_files.hpp"
#include "spdnn/make_problem.hpp"
#include "spdnn/problem.hpp"
#include "spdnn/network.hpp"
#include "spdnn/tsv.hpp"

#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

namespace spdnn::cli {

template <class Backend>
int run(const options& o, const tessera::communicator& world) {
  using P = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  using clock = std::chrono::steady_clock;
  const double bias = spdnn::challenge_bias(o.neurons);
  const auto self = tessera::communicator::duplicate(MPI_COMM_SELF);
  const auto& comm = o.parallel == spdnn::scheme::model ? world : self;

  // Reading (or generating) is timed apart from inference, as the challenge asks.
  world.barrier();
  const auto read_start = clock::now();
  std::vector<tessera::dist_matrix<value_type, P>> layers;
  spdnn::tsv_columns feature_lines;
  spdnn::tsv_rows<value_type> feature_rows;
  const spdnn::feature_generator gen(o.neurons, o.seed);
  spdnn::feature_source source;
  const spdnn::mode product = *o.product;
  const bool row_form = spdnn::uses_row_form(o.parallel, product);
  if (o.weights.empty()) {
    layers = spdnn::generated_layers<value_type, P>(comm, spdnn::radixnet(o.neurons, o.seed), o.layers, row_form);
    source.generator = &gen;
    source.images = o.inputs;
  } else {
    // Data parallelism wants every layer whole on every rank: each file is read by one rank.
    layers = o.parallel == spdnn::scheme::data
                 ? spdnn::read_layers_once<value_type, P>(world, comm, o.weights, o.neurons, o.layers, row_form)
                 : spdnn::read_layers<value_type, P>(comm, o.weights, o.neurons, o.layers, row_form);
    // --inputs bounds the image ids a features file may name (the challenge's 60000 by default), so
    // a stray huge id is an error at its line, not an allocation sized by it. Data parallelism
    // keeps each rank's lines where they were read (tsv_rows.hpp); model parallelism routes them.
    if (o.parallel == spdnn::scheme::data)
      feature_rows = spdnn::read_tsv_rows<value_type>(world, o.features, spdnn::features_layout(o.neurons, o.inputs));
    else
      feature_lines = spdnn::read_tsv(world, o.features, spdnn::features_layout(o.neurons, o.inputs));
    source.file = &feature_lines;
  }
  auto problem = o.weights.empty() || o.parallel != spdnn::scheme::data
                     ? spdnn::make_problem<value_type, P>(world, o.parallel, product, o.neurons, std::move(layers), source, comm)
                     : spdnn::make_problem<value_type, P>(world, o.parallel, product, o.neurons, std::move(layers),
                                                          feature_rows, o.inputs, comm);
  const double read_seconds = world.max(std::chrono::duration<double>(clock::now() - read_start).count());

  spdnn::inference_settings settings;
  settings.bias = bias;
  settings.product = product;
  settings.batch = o.batch;
  if (!o.quiet)
    settings.on_layer = [&](int layer, double seconds, std::int64_t count) {
      if (o.trace || seconds > 3.0)
        fmt::print("  layer {:4}/{}  {:8.2f} s  {} {}\n", layer, o.layers, seconds, count,
                   product == spdnn::mode::spgemm ? "nonzeros"
                   : product == spdnn::mode::fused ? "images alive after the last layer (first rank)"
                                                   : "live images in this batch");
    };
  // The layers' plans, made before inference starts and timed apart (spdnn::prepare).
  world.barrier();
  const auto prepare_start = clock::now();
  if (o.prepare) spdnn::prepare<value_type, P>(world, problem, settings);
  const double prepare_seconds = world.max(std::chrono::duration<double>(clock::now() - prepare_start).count());
  world.stats().reset();
  self.stats().reset();
  const auto result = spdnn::infer<value_type, P>(world, problem, settings);
  const auto traffic = tessera::reduce_traffic(world);

  std::int64_t edges_per_image = 0;
  for (const auto& w : problem.layers) edges_per_image += w.global_nnz();
  const double edges = static_cast<double>(problem.total_images) * static_cast<double>(edges_per_image);

  // Validation: the challenge's truth file, and/or the serial reference.
  int failures = 0;
  if (!o.truth.empty()) {
    const auto t = spdnn::read_tsv(world, o.truth, spdnn::truth_layout(problem.total_images));
    auto truth = world.allgather_concatenated(t.first);
    std::sort(truth.begin(), truth.end());
    const bool same = truth == result.categories;
    if (world.rank() == 0)
      fmt::print("truth {}: {} categories expected, {} found: {}\n", o.truth, truth.size(), result.categories.size(),
                 same ? "PASS" : "FAIL");
    failures += same ? 0 : 1;
  }
  if (o.check) {
    int same = 1;
    if (world.rank() == 0) {
      const auto expected = reference(o, bias, self);
      same = expected == result.categories ? 1 : 0;
      fmt::print("serial reference: {} categories, distributed run: {}: {}\n", expected.size(), result.categories.size(),
                 same ? "PASS" : "FAIL");
    }
    failures += world.min(same) == 1 ? 0 : 1;
  }
  if (!o.write.empty() && world.rank() == 0) {
    spdnn::write_challenge_files(o.write, o.neurons, o.layers, o.inputs, o.seed, result.categories);
    fmt::print("wrote the network, inputs and categories to {}\n", o.write);
  }

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double rss = world.max(static_cast<double>(usage.ru_maxrss) / 1024.0);
  if (world.rank() == 0) {
    if (!o.quiet) {
      fmt::print("{} neurons x {} layers, {} images; {} {}-parallel on {} rank{} ({})\n", o.neurons, o.layers,
                 problem.total_images, spdnn::to_string(product), spdnn::to_string(o.parallel), world.size(),
                 world.size() == 1 ? "" : "s", o.backend);
      fmt::print("categories: {}\n", result.categories.size());
      fmt::print("reading/generating: {:.3f} s; preparing the layers: {:.3f} s; inference: {:.3f} s; {:.3e} edges/s\n",
                 read_seconds, prepare_seconds, result.seconds, edges / result.seconds);
      fmt::print("communication during inference: {} messages, {} bytes (+ {} bytes of live-image flags)\n",
                 traffic.total.messages, traffic.total.bytes, result.liveness_bytes);
    }
    fmt::print(
        "{{\"bench\": \"spdnn\", \"neurons\": {}, \"layers\": {}, \"inputs\": {}, \"mode\": \"{}\", \"parallel\": \"{}\", "
        "\"backend\": \"{}\", \"np\": {}, \"threads\": {}, \"seconds\": {:.6f}, \"read_seconds\": {:.6f}, \"prepare_seconds\": {:.6f}, \"edges_per_second\": {:.6e}, "
        "\"categories\": {}, \"bytes_sent\": {}, \"messages_sent\": {}, \"peak_rss_mb\": {:.1f}, \"valid\": {}}}\n",
        o.neurons, o.layers, problem.total_images, spdnn::to_string(product), spdnn::to_string(o.parallel), o.backend,
        world.size(), Kokkos::DefaultHostExecutionSpace().concurrency(), result.seconds, read_seconds, prepare_seconds, edges / result.seconds, result.categories.size(),
        traffic.total.bytes, traffic.total.messages, rss, failures == 0 && (o.check || !o.truth.empty()) ? "true" : (failures ? "false" : "null"));
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace spdnn::cli
