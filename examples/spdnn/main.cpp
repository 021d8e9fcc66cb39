// tessera-spdnn: Graph Challenge sparse DNN inference on tessera.
// Run with --help for the options; docs/spdnn.md explains the variants.
#include "spdnn/challenge_files.hpp"
#include "spdnn/inference.hpp"
#include "spdnn/network.hpp"
#include "spdnn/reference.hpp"
#include "spdnn/tsv.hpp"

#include <tessera/comm/aggregator.hpp>  // the three backends: --backend picks one at run time
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/comm/progress_rank.hpp>
#include <tessera/environment.hpp>
#include <tessera/matrix/host_csr.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace {

using value_type = float;  // the challenge's values are small multiples of 1/16: single precision is exact enough

struct options {
  int neurons = 1024;
  int layers = 120;
  std::int64_t inputs = 60000;
  std::uint64_t seed = 1;
  std::string weights, features, truth, write;
  std::optional<spdnn::mode> product;  // resolved by parse: --mode, else spdnn::default_mode
  spdnn::scheme parallel = spdnn::scheme::data;
  std::string backend = "rma";
  std::int64_t batch = 0;
  bool check = false;
  bool quiet = false;
  bool trace = false;
  bool prepare = true;
};

[[noreturn]] void usage(int code) {
  std::fputs(R"(tessera-spdnn: sparse DNN inference (MIT/IEEE/Amazon Graph Challenge) on MPI ranks.

  Y(l) = min(max(Y(l-1) W(l) + b on the nonzeros, 0), 32); the categories are
  the images whose last row has a nonzero.

Network and inputs (generated unless files are given):
  --neurons N         1024, 4096, 16384 or 65536 (default 1024)
  --layers L          1..1920 (default 120)
  --inputs M          generated images, or the most images a --features file may name (default 60000)
  --seed S            generator seed (default 1)
  --weights DIR       the challenge's n{N}-l{k}.tsv files (in DIR or DIR/neuron{N})
  --features FILE     the challenge's sparse-images-{N}.tsv
  --truth FILE        the challenge's neuron{N}-l{L}-categories.tsv: checked, exit 1 on mismatch
  --write DIR         write the generated network, inputs and categories in the challenge's format
How to run:
  --mode fused|spmm|spgemm  each image's sparse row through every layer in one fused kernel
                            (--parallel data only; the default there on host cores), dense
                            batches of Y (the default otherwise), or sparse Y
  --parallel data|model     W replicated, images split (default); or W and Y split by neurons
  --backend rma|progress|aggregator
  --batch B           images per dense batch in spmm mode (default: 256 on host
                      cores, every image at once on a device)
  --check             also run the serial reference on rank 0: exit 1 on mismatch
  --quiet             only the JSON line
  --trace             a line per layer: seconds so far and what is still alive
  --no-prepare        make each layer's plan inside the timed inference, at its first
                      product (default: before it, timed apart as prepare_seconds)
)",
             code == 0 ? stdout : stderr);
  std::exit(code);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "tessera-spdnn: {} needs a value\n", a);
        usage(2);
      }
      return argv[++i];
    };
    auto number = [&]() -> long long {
      const std::string v = value();
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0') {
        fmt::print(stderr, "tessera-spdnn: {} needs an integer, not '{}'\n", a, v);
        usage(2);
      }
      return n;
    };
    if (a == "--help" || a == "-h") usage(0);
    else if (a == "--neurons") o.neurons = static_cast<int>(number());
    else if (a == "--layers") o.layers = static_cast<int>(number());
    else if (a == "--inputs") o.inputs = number();
    else if (a == "--seed") o.seed = static_cast<std::uint64_t>(number());
    else if (a == "--weights") o.weights = value();
    else if (a == "--features") o.features = value();
    else if (a == "--truth") o.truth = value();
    else if (a == "--write") o.write = value();
    else if (a == "--batch") o.batch = number();
    else if (a == "--backend") o.backend = value();
    else if (a == "--check") o.check = true;
    else if (a == "--quiet") o.quiet = true;
    else if (a == "--trace") o.trace = true;
    else if (a == "--no-prepare") o.prepare = false;
    else if (a == "--mode") {
      const auto v = value();
      if (v != "spmm" && v != "spgemm" && v != "fused") usage(2);
      o.product = v == "spmm" ? spdnn::mode::spmm : v == "spgemm" ? spdnn::mode::spgemm : spdnn::mode::fused;
    } else if (a == "--parallel") {
      const auto v = value();
      if (v != "model" && v != "data") usage(2);
      o.parallel = v == "model" ? spdnn::scheme::model : spdnn::scheme::data;
    } else {
      fmt::print(stderr, "tessera-spdnn: unknown option '{}'\n", a);
      usage(2);
    }
  }
  auto refuse = [](bool bad, const std::string& why) {
    if (!bad) return;
    fmt::print(stderr, "tessera-spdnn: {}\n", why);
    std::exit(2);
  };
  refuse(o.neurons != 1024 && o.neurons != 4096 && o.neurons != 16384 && o.neurons != 65536,
         fmt::format("--neurons {}: the challenge has 1024, 4096, 16384 or 65536", o.neurons));
  refuse(o.layers < 1 || o.layers > spdnn::challenge_max_layers,
         fmt::format("--layers {}: must be in [1, {}]", o.layers, spdnn::challenge_max_layers));
  refuse(o.inputs < 0, fmt::format("--inputs {}: must not be negative", o.inputs));
  refuse(o.batch < 0, fmt::format("--batch {}: must not be negative", o.batch));
  refuse(o.weights.empty() != o.features.empty(), "--weights and --features go together");
  refuse(!o.write.empty() && !o.weights.empty(), "--write writes generated data; it cannot be used with --weights");
  refuse(o.product == spdnn::mode::fused && o.parallel != spdnn::scheme::data,
         "--mode fused runs data-parallel only (every rank holds every layer whole): use --parallel data");
  // Every backend's policy runs on the same execution space: any of them says the default mode.
  o.product = o.product.value_or(spdnn::default_mode<tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>>(o.parallel));
  refuse(o.batch > 0 && *o.product != spdnn::mode::spmm,
         fmt::format("--batch sets the width of spmm mode's dense batches; the {} mode has none (add --mode spmm)",
                     spdnn::to_string(*o.product)));
  refuse(o.backend != "rma" && o.backend != "progress" && o.backend != "aggregator",
         fmt::format("--backend {}: rma, progress or aggregator", o.backend));
  return o;
}

/// The serial reference's categories (first rank only): the whole problem on one process.
std::vector<std::int64_t> reference(const options& o, double bias, const tessera::communicator& self) {
  std::vector<spdnn::host_sparse<value_type>> layers;
  spdnn::host_sparse<value_type> features;
  if (o.weights.empty()) {
    const spdnn::radixnet net(o.neurons, o.seed);
    for (int l = 1; l <= o.layers; ++l) layers.push_back(spdnn::radixnet_layer<value_type>(net, l));
    features = spdnn::generated_features<value_type>(spdnn::feature_generator(o.neurons, o.seed), o.neurons, 0, o.inputs);
  } else {
    auto to_host = [&](const spdnn::tsv_columns& c, std::int64_t rows) {
      tessera::triplets<value_type> t;
      for (std::size_t e = 0; e < c.size(); ++e) t.push_back(c.first[e], c.second[e], static_cast<value_type>(c.value[e]));
      const auto csr = tessera::host_csr<value_type>::from_triplets(rows, o.neurons, t);
      spdnn::host_sparse<value_type> h;
      h.rows = csr.rows;
      h.cols = csr.cols;
      h.row_ptr.assign(csr.row_ptr.begin(), csr.row_ptr.end());
      h.col_idx.assign(csr.col_idx.begin(), csr.col_idx.end());
      h.values = csr.values;
      return h;
    };
    for (int l = 1; l <= o.layers; ++l)
      layers.push_back(to_host(spdnn::read_tsv(self, spdnn::weight_file(o.weights, o.neurons, l), spdnn::weights_layout(o.neurons)),
                               o.neurons));
    const auto f = spdnn::read_tsv(self, o.features, spdnn::features_layout(o.neurons, o.inputs));
    std::int64_t images = 0;
    for (auto i : f.first) images = std::max(images, i + 1);
    features = to_host(f, images);
  }
  return spdnn::reference_categories<value_type>(layers, features, static_cast<value_type>(bias),
                                                 static_cast<value_type>(spdnn::challenge_ymax));
}

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

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  auto env_options = tessera::environment_options::from_environment_variables();
  if (o.backend == "progress") env_options.progress_ranks = true;
  // Batches make and drop Views of the same sizes: keep the memory (threads stop faulting it in
  // again together). TESSERA_RETAIN_FREED_MEMORY=0 turns it off.
  if (std::getenv("TESSERA_RETAIN_FREED_MEMORY") == nullptr) env_options.retain_freed_memory = true;
  tessera::environment env(argc, argv, env_options);
  try {
    if (o.backend == "rma") return run<tessera::mpi_rma>(o, env.world());
    if (o.backend == "aggregator") return run<tessera::aggregator>(o, env.world());
    return run<tessera::progress_rank>(o, env.world());
  } catch (const tessera::error& e) {
    if (env.world().rank() == 0) fmt::print(stderr, "tessera-spdnn: {}\n", e.what());
    return 1;
  }
}
