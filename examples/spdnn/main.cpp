// tessera-spdnn: Graph Challenge sparse DNN inference on tessera.
// Run with --help for the options; docs/spdnn.md explains the variants. This unit holds the
// options, the serial reference and the choice of backend; run.hpp says where the rest is.
#include "run.hpp"
#include "spdnn/problem.hpp"
#include "spdnn/read_layers.hpp"
#include "spdnn/network.hpp"
#include "spdnn/reference.hpp"
#include "spdnn/tsv.hpp"

#include <tessera/comm/aggregator.hpp>  // the three backends: --backend picks one at run time
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/comm/progress_rank.hpp>
#include <tessera/distribution/row_block.hpp>
#include <tessera/environment.hpp>
#include <tessera/matrix/host_csr.hpp>
#include <tessera/storage/csr.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace spdnn::cli {

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

}  // namespace spdnn::cli

int main(int argc, char** argv) {
  const spdnn::cli::options o = spdnn::cli::parse(argc, argv);
  auto env_options = tessera::environment_options::from_environment_variables();
  if (o.backend == "progress") env_options.progress_ranks = true;
  // Batches make and drop Views of the same sizes: keep the memory (threads stop faulting it in
  // again together). TESSERA_RETAIN_FREED_MEMORY=0 turns it off.
  if (std::getenv("TESSERA_RETAIN_FREED_MEMORY") == nullptr) env_options.retain_freed_memory = true;
  tessera::environment env(argc, argv, env_options);
  try {
    if (o.backend == "rma") return spdnn::cli::run<tessera::mpi_rma>(o, env.world());
    if (o.backend == "aggregator") return spdnn::cli::run<tessera::aggregator>(o, env.world());
    return spdnn::cli::run<tessera::progress_rank>(o, env.world());
  } catch (const tessera::error& e) {
    if (env.world().rank() == 0) fmt::print(stderr, "tessera-spdnn: {}\n", e.what());
    return 1;
  }
}
