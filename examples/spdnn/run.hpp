#pragma once
// tessera-spdnn's pieces, each compiled in a translation unit of its own: main.cpp (the options,
// the serial reference), run_<backend>.cpp (reading, checking and timing under one backend) and
// mode_<mode>.cpp (one mode's inference, for every backend). Under nvcc the example was one unit
// of 250 s; no unit now compiles more than one backend's run or one mode's kernels
// (docs/getting-started.md#compile-time).
#include "spdnn/problem.hpp"

#include <tessera/comm/communicator.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spdnn::cli {

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

/// The command line, checked (exits with a message on bad options).
options parse(int argc, char** argv);

/// The serial reference's categories (first rank only): the whole problem on one process.
std::vector<std::int64_t> reference(const options& o, double bias, const tessera::communicator& self);

/// Read or generate the problem, infer, check and print the JSON line, under one backend
/// (run_<backend>.cpp instantiates it). Returns the exit status.
template <class Backend>
int run(const options& o, const tessera::communicator& world);

}  // namespace spdnn::cli
