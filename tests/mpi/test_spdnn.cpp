// The SpDNN example (examples/spdnn): every variant against the serial
// reference, its traffic from the counters, the challenge's files written and
// read back, and malformed files rejected with file and line.
#include "test_support.hpp"

#include "spdnn/challenge_files.hpp"
#include "spdnn/inference.hpp"
#include "spdnn/reference.hpp"
#include "spdnn/tsv.hpp"
#include "spdnn/tsv_rows.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace spdnn_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

// A small network whose images neither all die nor all survive: 1024 neurons,
// 12 layers (two RadiX-Net blocks, so a permutation is crossed), a milder bias
// than the challenge's so that about a third of the images are categories.
constexpr int neurons = 1024, layers = 12;
constexpr double bias = -0.2;
constexpr std::uint64_t seed = 7;

std::vector<std::int64_t> reference_for(std::int64_t images) {
  const spdnn::radixnet net(neurons, seed);
  std::vector<spdnn::host_sparse<float>> w;
  for (int l = 1; l <= layers; ++l) w.push_back(spdnn::radixnet_layer<float>(net, l));
  const auto y = spdnn::generated_features<float>(spdnn::feature_generator(neurons, seed), neurons, 0, images);
  return spdnn::reference_categories<float>(w, y, static_cast<float>(bias), 32.0f);
}

template <class Backend>
std::vector<std::int64_t> distributed(spdnn::scheme parallel, spdnn::mode product, std::int64_t images,
                                      std::int64_t batch = 0) {
  using P = policy<row_block, csr, Backend>;
  const auto& world = test::world();
  const auto self = communicator::duplicate(MPI_COMM_SELF);
  const auto& comm = parallel == spdnn::scheme::model ? world : self;
  const bool row_form = spdnn::uses_row_form(parallel, product);
  const spdnn::feature_generator gen(neurons, seed);
  spdnn::feature_source source;
  source.generator = &gen;
  source.images = images;
  const auto problem = spdnn::make_problem<float, P>(
      world, parallel, product, neurons,
      spdnn::generated_layers<float, P>(comm, spdnn::radixnet(neurons, seed), layers, row_form), source, comm);
  spdnn::inference_settings settings;
  settings.bias = bias;
  settings.product = product;
  settings.batch = batch;
  return spdnn::infer<float, P>(world, problem, settings).categories;
}

template <class Backend>
void check_every_variant() {
  for (std::int64_t images : {std::int64_t{300}, std::int64_t{3}}) {  // 3: some ranks hold no image
    const auto expected = reference_for(images);
    if (images == 300) REQUIRE((expected.size() > 30 && expected.size() < 270));  // a real mix
    for (auto parallel : {spdnn::scheme::model, spdnn::scheme::data})
      for (auto product : {spdnn::mode::spmm, spdnn::mode::spgemm, spdnn::mode::fused})
        for (std::int64_t batch : {std::int64_t{0}, std::int64_t{16}}) {
          if (product != spdnn::mode::spmm && batch != 0) continue;
          if (product == spdnn::mode::fused && parallel == spdnn::scheme::model) continue;  // refused: see below
          INFO("images " << images << ", " << spdnn::to_string(parallel) << " parallel, " << spdnn::to_string(product)
                         << ", batch " << batch);
          CHECK(distributed<Backend>(parallel, product, images, batch) == expected);
        }
  }
}

/// Rank r's halo under model parallelism for W'(1): the neurons outside r's
/// rows that feed r's output neurons, straight from the RadiX-Net definition.
std::int64_t expected_halo_rows(int rank, int ranks) {
  const row_block::mapping split(ranks, neurons, neurons);
  const spdnn::radixnet net(neurons, seed);
  std::set<std::int64_t> needed;
  for (int i = 0; i < neurons; ++i)
    for (int j : net.row_columns(1, i))
      if (split.row_owner(j) == rank && split.row_owner(i) != rank) needed.insert(i);
  return static_cast<std::int64_t>(needed.size());
}

void write_lines(const std::string& path, const std::string& text) {
  if (test::world().rank() == 0) std::ofstream(path) << text;
  test::world().barrier();
}

}  // namespace

TEST_CASE_TEMPLATE("every SpDNN variant finds the serial reference's categories", B, mpi_rma, aggregator) {
  check_every_variant<B>();
}

TEST_CASE("every SpDNN variant on progress ranks" * doctest::skip(!test::progress_ranks_requested())) {
  check_every_variant<progress_rank>();
}

TEST_CASE("model-parallel spmm fetches exactly the rows of Y each rank needs; data-parallel sends nothing") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& world = test::world();
  constexpr std::int64_t images = 64;  // one batch of 64 columns
  const spdnn::feature_generator gen(neurons, seed);
  spdnn::feature_source source;
  source.generator = &gen;
  source.images = images;
  const auto problem = spdnn::make_problem<float, P>(
      world, spdnn::scheme::model, spdnn::mode::spmm, neurons,
      spdnn::generated_layers<float, P>(world, spdnn::radixnet(neurons, seed), 1, false), source, world);
  spdnn::inference_settings settings;
  settings.bias = bias;
  settings.batch = images;
  world.stats().reset();
  (void)spdnn::infer<float, P>(world, problem, settings);
  const auto traffic = reduce_traffic(world, "spmm");
  std::int64_t expected = 0;
  for (int r = 0; r < world.size(); ++r) expected += expected_halo_rows(r, world.size()) * images * std::int64_t{sizeof(float)};
  CHECK(traffic.total.bytes == static_cast<std::uint64_t>(expected));
  if (world.size() == 1) CHECK(expected == 0);

  for (auto product : {spdnn::mode::spmm, spdnn::mode::spgemm, spdnn::mode::fused}) {
    world.stats().reset();
    (void)distributed<mpi_rma>(spdnn::scheme::data, product, 100);
    CHECK(reduce_traffic(world).total.bytes == 0);
  }
}

TEST_CASE("the challenge's files written by the generator read back to the same network and answer") {
  using P = policy<row_block, csr, aggregator>;
  const auto& world = test::world();
  constexpr std::int64_t images = 120;
  const auto dir = test::scratch_path("challenge");
  const auto expected = reference_for(images);
  if (world.rank() == 0) spdnn::write_challenge_files(dir, neurons, layers, images, seed, expected);
  world.barrier();

  for (bool row_form : {false, true}) {
    const auto generated = spdnn::generated_layers<float, P>(world, spdnn::radixnet(neurons, seed), layers, row_form);
    const auto read = spdnn::read_layers<float, P>(world, dir, neurons, layers, row_form);
    REQUIRE(read.size() == generated.size());
    for (std::size_t l = 0; l < read.size(); ++l) test::require_equal(read[l], gather_to_all(generated[l]));
    // Each rank whole, each file read by one rank and its block sent to the others.
    const auto self = communicator::duplicate(MPI_COMM_SELF);
    const auto once = spdnn::read_layers_once<float, P>(world, self, dir, neurons, layers, row_form);
    REQUIRE(once.size() == generated.size());
    for (std::size_t l = 0; l < once.size(); ++l) {
      CHECK(once[l].comm().size() == 1);
      test::require_equal(once[l], gather_to_all(generated[l]));
    }
  }
  // A malformed layer file read by one rank fails on every rank, naming the file and line; with two
  // malformed files, the lower layer's.
  {
    const auto bad = test::scratch_path("challenge-bad");
    if (world.rank() == 0) {
      std::filesystem::create_directories(bad);
      for (int l = 1; l <= layers; ++l)
        std::filesystem::copy_file(spdnn::weight_file(dir, neurons, l), fmt::format("{}/n{}-l{}.tsv", bad, neurons, l),
                                   std::filesystem::copy_options::overwrite_existing);
    }
    for (int l : {layers, 2}) write_lines(fmt::format("{}/n{}-l{}.tsv", bad, neurons, l), "1\t2\t0.5\n3\tx\t0.5\n");
    const auto self = communicator::duplicate(MPI_COMM_SELF);
    try {
      (void)spdnn::read_layers_once<float, P>(world, self, bad, neurons, layers, false);
      FAIL("no exception");
    } catch (const error& e) {
      CHECK(e.kind() == error_kind::parse_error);
      CHECK(e.message().find(fmt::format("n{}-l2.tsv:2: column 'x' is not an integer", neurons)) != std::string::npos);
    }
  }
  const auto lines = spdnn::read_tsv(world, fmt::format("{}/sparse-images-{}.tsv", dir, neurons),
                                     {3, std::numeric_limits<std::int64_t>::max(), neurons, "image", "neuron"});
  for (auto parallel : {spdnn::scheme::model, spdnn::scheme::data})
    for (auto product : {spdnn::mode::spmm, spdnn::mode::spgemm, spdnn::mode::fused}) {
      if (product == spdnn::mode::fused && parallel == spdnn::scheme::model) continue;
      const auto self = communicator::duplicate(MPI_COMM_SELF);
      const auto& comm = parallel == spdnn::scheme::model ? world : self;
      spdnn::feature_source source;
      source.file = &lines;
      const auto problem = spdnn::make_problem<float, P>(
          world, parallel, product, neurons,
          spdnn::read_layers<float, P>(comm, dir, neurons, layers, spdnn::uses_row_form(parallel, product)), source,
          comm);
      CHECK(problem.total_images <= images);
      spdnn::inference_settings settings;
      settings.bias = bias;
      settings.product = product;
      CHECK(spdnn::infer<float, P>(world, problem, settings).categories == expected);
    }
  // Data parallelism from the lines as each rank read them (what tessera-spdnn does).
  for (auto product : {spdnn::mode::spmm, spdnn::mode::spgemm, spdnn::mode::fused}) {
    const auto self = communicator::duplicate(MPI_COMM_SELF);
    const bool row_form = spdnn::uses_row_form(spdnn::scheme::data, product);
    auto rows = spdnn::read_tsv_rows<float>(world, fmt::format("{}/sparse-images-{}.tsv", dir, neurons),
                                            spdnn::features_layout(neurons, images));
    CHECK(rows.in_order);
    const auto problem = spdnn::make_problem<float, P>(
        world, spdnn::scheme::data, product, neurons,
        spdnn::read_layers_once<float, P>(world, self, dir, neurons, layers, row_form), rows, images, self);
    spdnn::inference_settings settings;
    settings.bias = bias;
    settings.product = product;
    CHECK(spdnn::infer<float, P>(world, problem, settings).categories == expected);
  }
  const auto truth = spdnn::read_tsv(world, fmt::format("{}/neuron{}-l{}-categories.tsv", dir, neurons, layers),
                                     {1, images, 1, "image"});
  auto all = world.allgather_concatenated(truth.first);
  std::sort(all.begin(), all.end());
  CHECK(all == expected);
}

namespace {

using feature_entry = std::tuple<std::int64_t, std::int64_t, float>;  // image, neuron, value

/// The features of a data-parallel problem, every rank's, with global image ids (on every rank),
/// after checking that the ranks' images are consecutive ranges covering [0, total_images).
template <class P>
std::vector<feature_entry> all_features(const spdnn::problem<float, P>& p) {
  const auto& world = test::world();
  const auto& y = p.features.front();
  const std::int64_t images_here = p.row_form ? y.num_rows() : y.num_cols();
  const auto first = world.allgather(p.first_image);
  const auto count = world.allgather(images_here);
  std::int64_t next = 0;
  for (std::size_t r = 0; r < first.size(); ++r) {
    INFO("rank " << r);
    CHECK(first[r] == next);
    next += count[r];
  }
  CHECK(next == p.total_images);
  const auto ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local().row_ptr);
  const auto col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local().col_idx);
  const auto val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.local().values);
  const auto map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y.col_map());
  std::vector<std::int64_t> image, neuron;
  std::vector<float> value;
  for (std::size_t r = 0; r + 1 < ptr.extent(0); ++r)
    for (auto e = ptr(r); e < ptr(r + 1); ++e) {
      const auto c = map(static_cast<std::size_t>(col(static_cast<std::size_t>(e))));
      image.push_back(p.first_image + (p.row_form ? static_cast<std::int64_t>(r) : c));
      neuron.push_back(p.row_form ? c : static_cast<std::int64_t>(r));
      value.push_back(val(static_cast<std::size_t>(e)));
    }
  const auto images = world.allgather_concatenated(image);
  const auto neurons_of = world.allgather_concatenated(neuron);
  const auto values = world.allgather_concatenated(value);
  std::vector<feature_entry> out;
  for (std::size_t e = 0; e < images.size(); ++e) out.emplace_back(images[e], neurons_of[e], values[e]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("features read in order stay where they were read; any other file is routed, with the same result") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& world = test::world();
  constexpr int width = 4096;
  // (image, neuron, value) lines, 1-based, and what each case is about.
  struct features_file {
    std::string what;
    std::vector<std::tuple<int, int, int>> lines;
    bool in_order;
  };
  std::vector<features_file> cases;
  {
    features_file skewed{"an image of 3000 lines crosses every share; empty images between and before", {}, true};
    for (int n = 1; n <= 3; ++n) skewed.lines.emplace_back(3, n, n);  // images 1 and 2 have no lines
    for (int n = 1; n <= 3000; ++n) skewed.lines.emplace_back(4, n, 1);
    for (int i = 5; i <= 40; i += 7)
      for (int n = 10; n <= 14; ++n) skewed.lines.emplace_back(i, n, i + n);
    cases.push_back(skewed);
    features_file few{"fewer lines than ranks", {{2, 5, 1}, {2, 9, 2}}, true};
    cases.push_back(few);
    features_file many_images{"many small images, one line each", {}, true};
    for (int i = 1; i <= 500; ++i) many_images.lines.emplace_back(i, 1 + i % 97, 1);
    cases.push_back(many_images);
    features_file swapped = many_images;
    swapped.what = "two lines out of order";
    std::swap(swapped.lines[250], swapped.lines[251]);
    swapped.in_order = false;
    cases.push_back(swapped);
    features_file repeated = skewed;
    repeated.what = "a line repeated (summed, as build_from_triplets does)";
    repeated.lines.insert(repeated.lines.begin() + 1500, repeated.lines[1500]);
    repeated.in_order = false;
    cases.push_back(repeated);
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    INFO("case " << k << ": " << cases[k].what);
    std::string text;
    std::map<std::pair<std::int64_t, std::int64_t>, float> sums;
    for (const auto& [i, n, v] : cases[k].lines) {
      text += fmt::format("{}\t{}\t{}\n", i, n, v);
      sums[{i - 1, n - 1}] += static_cast<float>(v);
    }
    std::vector<feature_entry> expected;
    for (const auto& [at, v] : sums) expected.emplace_back(at.first, at.second, v);
    const auto path = test::scratch_path(fmt::format("features{}.tsv", k));
    write_lines(path, text);
    const auto self = communicator::duplicate(MPI_COMM_SELF);
    for (auto product : {spdnn::mode::fused, spdnn::mode::spmm}) {
      auto rows = spdnn::read_tsv_rows<float>(world, path, spdnn::features_layout(width, 60000));
      // Each rank's own lines are in order unless the break falls in its share; all ranks agree below.
      if (cases[k].in_order) CHECK(rows.in_order);
      CHECK(world.sum(static_cast<std::int64_t>(rows.size())) == static_cast<std::int64_t>(cases[k].lines.size()));
      const auto problem = spdnn::make_problem<float, P>(world, spdnn::scheme::data, product, width, {}, rows, 60000, self);
      CHECK(problem.total_images == std::get<0>(expected.back()) + 1);
      CHECK(all_features(problem) == expected);
    }
  }
  // Model parallelism takes the routed path from the same rows.
  auto rows = spdnn::read_tsv_rows<float>(world, test::scratch_path("features0.tsv"), spdnn::features_layout(width, 60000));
  const auto problem = spdnn::make_problem<float, P>(world, spdnn::scheme::model, spdnn::mode::spmm, width, {}, rows, 60000, world);
  CHECK(problem.features.front().global_nnz() == 3 + 3000 + 30);
}

TEST_CASE("fused mode: identical columns computed once, any other network exactly as the reference") {
  using P = policy<row_block, csr, mpi_rma>;
  const auto& world = test::world();
  const auto self = communicator::duplicate(MPI_COMM_SELF);
  const spdnn::feature_generator gen(neurons, seed);
  spdnn::feature_source source;
  source.generator = &gen;
  source.images = 200;

  // RadiX-Net: its columns come in classes of 16 with one value, so the kernel reads 2 entries per
  // row, not 32; in the last layer of each block (6 layers at 1,024 neurons) the two halves of a
  // row's columns meet, in classes of 32: 1 entry per row.
  {
    const auto network = spdnn::generated_layers<float, P>(self, spdnn::radixnet(neurons, seed), layers, true);
    const auto fused = spdnn::fuse_layers(network, neurons);
    constexpr int meeting_layers = layers / 6;
    CHECK(fused.compression() == doctest::Approx(32.0 * layers / (2.0 * (layers - meeting_layers) + meeting_layers)));
    CHECK(fused.widest == neurons / 16);

    // The layout work shared over the ranks (each lays out every P-th layer and broadcasts it): the
    // same arrays as one rank's own.
    const auto shared = spdnn::fuse_layers(world, network, neurons);
    const auto same = [](const auto& a, const auto& b) {
      const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a);
      const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b);
      return ha.extent(0) == hb.extent(0) && std::equal(ha.data(), ha.data() + ha.extent(0), hb.data());
    };
    CHECK(shared.layers == fused.layers);
    CHECK(shared.widest == fused.widest);
    CHECK(shared.weights == fused.weights);
    CHECK(same(shared.row_ptr, fused.row_ptr));
    CHECK(same(shared.class_of, fused.class_of));
    CHECK(same(shared.class_value, fused.class_value));
    CHECK(same(shared.class_at, fused.class_at));
    CHECK(same(shared.iso_value, fused.iso_value));
    CHECK(same(shared.layer_value, fused.layer_value));
    CHECK(same(shared.class_ptr, fused.class_ptr));
    CHECK(same(shared.class_member, fused.class_member));

    // Ranks holding different layers cannot share the work: refused on every rank.
    if (world.size() > 1) {
      auto fewer = spdnn::generated_layers<float, P>(self, spdnn::radixnet(neurons, seed), world.rank() == 0 ? 2 : 3, true);
      test::require_rejected([&] { (void)spdnn::fuse_layers(world, fewer, neurons); }, error_kind::invalid_argument,
                             "must hold the same layers");
    }
  }

  // A network without that structure: random rows (some empty, so some columns too), values of both
  // signs, columns 0-7 identical (one class), columns 8-11 with the same rows as 0-7 but other
  // values (each its own), a duplicate weight (summed when assembled), and a layer of rows whose
  // values differ from entry to entry.
  constexpr int small = 96, deep = 6;
  std::vector<spdnn::host_sparse<float>> host;
  std::vector<dist_matrix<float, P>> network;
  std::mt19937_64 rng(11);
  for (int l = 0; l < deep; ++l) {
    triplets<float> t;
    spdnn::host_sparse<float> w;
    w.cols = small;
    for (int j = 0; j < small; ++j) {
      std::map<std::int64_t, float> row;
      if (j % 13 != 5) {
        for (int e = 0; e < 10; ++e) {
          const auto k = static_cast<std::int64_t>(12 + rng() % (small - 13));  // column small - 1 stays empty
          row[k] += static_cast<float>(static_cast<int>(rng() % 7) - 2) / 8.0f;
        }
        if (j % 3 == 0) {
          const float v = l == 2 ? static_cast<float>(j % 5 + 1) / 16.0f : 0.125f;
          for (std::int64_t k = 0; k < 8; ++k) row[k] = v;
          for (std::int64_t k = 8; k < 12; ++k) row[k] = v * static_cast<float>(k - 6);
        }
      }
      std::vector<std::int64_t> cols;
      std::vector<float> vals;
      for (const auto& [k, v] : row) {
        cols.push_back(k);
        vals.push_back(v);
        if (k == 20) {  // as two entries that assembly sums
          t.push_back(j, k, v / 2);
          t.push_back(j, k, v / 2);
        } else {
          t.push_back(j, k, v);
        }
      }
      w.push_row(cols, vals);
    }
    host.push_back(w);
    network.push_back(build_from_triplets<float, P>(self, small, small, t));
  }
  const spdnn::feature_generator small_gen(small, seed);
  spdnn::feature_source small_source;
  small_source.generator = &small_gen;
  small_source.images = 150;
  const float small_bias = -0.3f;  // 68 of the 150 images are categories
  const auto features = spdnn::generated_features<float>(small_gen, small, 0, small_source.images);
  const auto expected = spdnn::reference_categories<float>(host, features, small_bias, 32.0f);
  CHECK(expected.size() > 10);
  CHECK(expected.size() < 140);
  const auto fused = spdnn::fuse_layers(network, small);
  CHECK(fused.compression() > 1.0);
  CHECK(fused.compression() < 2.0);
  auto problem = spdnn::make_problem<float, P>(world, spdnn::scheme::data, spdnn::mode::fused, small, std::move(network),
                                               small_source, self);
  spdnn::inference_settings settings;
  settings.bias = small_bias;
  settings.product = spdnn::mode::fused;
  CHECK(spdnn::infer<float, P>(world, problem, settings).categories == expected);  // made inside infer
  spdnn::prepare(world, problem, settings);
  REQUIRE(problem.fused != nullptr);
  CHECK(spdnn::infer<float, P>(world, problem, settings).categories == expected);  // prepared

  // Model parallelism splits W: the fused mode refuses it on every rank, saying what to use.
  test::require_rejected(
      [&] {
        (void)spdnn::make_problem<float, P>(world, spdnn::scheme::model, spdnn::mode::fused, neurons,
                                            spdnn::generated_layers<float, P>(world, spdnn::radixnet(neurons, seed), 2, false),
                                            source, world);
      },
      error_kind::invalid_argument, "the fused mode runs data-parallel only");
}

TEST_CASE("fused mode's output classes: the hash runs are checked exactly, and a collision falls back to the columns") {
  // 10 outputs over 6 input rows: 0, 3 and 7 identical; 1 and 8 identical but for one -0.0 against
  // 0.0 (one value, as the reference sums them); 2 with 0's rows and other values; 4 with 0's values
  // on other rows; 5 a subset of 0; 6 and 9 empty (one class).
  spdnn::host_layer w;
  const std::vector<std::vector<std::pair<std::int64_t, double>>> rows{
      {{0, 0.5}, {1, -0.0}, {2, 0.25}, {3, 0.5}, {7, 0.5}, {8, 0.0}},
      {{0, 1.5}, {2, 2.0}, {3, 1.5}, {4, 0.5}, {5, 1.5}, {7, 1.5}},
      {{1, 3.0}, {4, 1.5}, {8, 3.0}},
      {},
      {{0, -1.0}, {2, -1.0}, {3, -1.0}, {7, -1.0}},
      {{1, 2.0}, {4, -1.0}, {8, 2.0}}};
  w.row_ptr.push_back(0);
  for (const auto& row : rows) {
    for (const auto& [k, v] : row) {
      w.columns.push_back(k);
      w.values.push_back(v);
    }
    w.row_ptr.push_back(static_cast<tessera::offset_type>(w.columns.size()));
  }
  constexpr int outputs = 10;
  const std::vector<std::int32_t> expected{0, 1, 2, 0, 3, 4, 5, 0, 1, 5};  // numbered by first member
  std::int32_t classes = 0;
  CHECK(spdnn::output_classes(w, outputs, classes) == expected);
  CHECK(classes == 6);

  const auto digests = spdnn::digest_columns(w, outputs);
  classes = 0;
  const auto by_hash = spdnn::classes_by_hash(w, digests, classes);
  REQUIRE(by_hash.has_value());
  CHECK(*by_hash == expected);
  classes = 0;
  CHECK(spdnn::output_classes_by_columns(w, outputs, digests, classes) == expected);
  CHECK(classes == 6);

  // Every column given one hash (a collision of all of them): the exact check refuses the runs and
  // the column-by-column comparison still finds the same classes.
  auto collided = digests;
  std::fill(collided.hash.begin(), collided.hash.end(), std::uint64_t{42});
  CHECK_FALSE(spdnn::classes_by_hash(w, collided, classes).has_value());
  classes = 0;
  CHECK(spdnn::output_classes_by_columns(w, outputs, collided, classes) == expected);
  CHECK(classes == 6);
  // Equal entry counts but other rows (4 against 0 at the same hash): refused as well.
  auto pair = digests;
  pair.hash[4] = pair.hash[0];
  CHECK_FALSE(spdnn::classes_by_hash(w, pair, classes).has_value());
}

TEST_CASE("malformed TSV files are rejected with the file and line, on every rank") {
  const auto& world = test::world();
  const spdnn::tsv_layout weights{3, 8, 8, "row", "column"};
  struct bad_file {
    std::string text, where, what;
  };
  const std::vector<bad_file> cases = {
      {"1\t2\t0.5\n2\t3\t0.5\n3\t4\n", ":3:", "expected 3 tab-separated fields, found 2"},
      {"1\t2\t0.5\n\n2\tx\t0.5\n", ":3:", "column 'x' is not an integer"},  // blank line 2 still counts
      {"1\t9\t0.5\n", ":1:", "column 9 is outside [1, 8]"},
      {"1\t2\t0.5\n0\t2\t0.5\n", ":2:", "row 0 is outside [1, 8]"},
      {"1\t2\tabc\n", ":1:", "value 'abc' is not a finite number"},
      {"1\t2\t0.5\t7\n", ":1:", "expected 3 tab-separated fields, found more"},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto path = test::scratch_path(fmt::format("bad{}.tsv", k));
    write_lines(path, cases[k].text);
    INFO("case " << k);
    try {
      (void)spdnn::read_tsv(world, path, weights);
      FAIL("no exception");
    } catch (const error& e) {
      CHECK(e.kind() == error_kind::parse_error);
      CHECK(e.message().find(path + cases[k].where) != std::string::npos);
      CHECK(e.message().find(cases[k].what) != std::string::npos);
    }
  }
  // A good file splits over the ranks without losing or repeating a line.
  std::string text;
  for (int i = 1; i <= 8; ++i)
    for (int j = 1; j <= 8; ++j) text += fmt::format("{}\t{}\t{}\n", i, j, i * 10 + j);
  const auto good = test::scratch_path("good.tsv");
  write_lines(good, text);
  const auto lines = spdnn::read_tsv(world, good, weights);
  CHECK(world.sum(static_cast<std::int64_t>(lines.size())) == 64);
  for (std::size_t e = 0; e < lines.size(); ++e)
    CHECK(lines.value[e] == static_cast<double>((lines.first[e] + 1) * 10 + lines.second[e] + 1));
  CHECK_THROWS_AS((void)spdnn::read_tsv(world, test::scratch_path("missing.tsv"), weights), error);
}

}  // namespace spdnn_tests
