#pragma once
// Writing a generated network in the challenge's own file layout, so that the
// file-reading path can be exercised (and other codes fed) without the
// challenge's downloads.

#include "make_problem.hpp"
#include "network.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace spdnn {

/// Write DIR/neuron{N}/n{N}-l{l}.tsv for l = 1..L, DIR/sparse-images-{N}.tsv and
/// DIR/neuron{N}-l{L}-categories.tsv (1-based, tab-separated). Not collective:
/// call it on one rank.
inline void write_challenge_files(const std::string& dir, int neurons, int layers, std::int64_t inputs,
                                  std::uint64_t seed, const std::vector<std::int64_t>& categories) {
  const auto root = std::filesystem::path(dir);
  std::filesystem::create_directories(root / fmt::format("neuron{}", neurons));
  const radixnet net(neurons, seed);
  for (int l = 1; l <= layers; ++l) {
    std::ofstream out(root / fmt::format("neuron{}", neurons) / fmt::format("n{}-l{}.tsv", neurons, l));
    for (int i = 0; i < neurons; ++i)
      for (int j : net.row_columns(l, i)) out << i + 1 << '\t' << j + 1 << '\t' << challenge_weight << '\n';
    TESSERA_REQUIRE(out.good(), io_error, "cannot write layer {} under {}", l, dir);
  }
  const feature_generator gen(neurons, seed);
  std::ofstream images(root / fmt::format("sparse-images-{}.tsv", neurons));
  for (std::int64_t r = 0; r < inputs; ++r)
    for (int n : gen.image(r)) images << r + 1 << '\t' << n + 1 << "\t1\n";
  std::ofstream truth(root / fmt::format("neuron{}-l{}-categories.tsv", neurons, layers));
  for (auto c : categories) truth << c + 1 << '\n';
  TESSERA_REQUIRE(images.good() && truth.good(), io_error, "cannot write the inputs or categories under {}", dir);
}

}  // namespace spdnn
