#pragma once
// bench_spmm's products under one backend, each backend's compiled in a unit of its own
// (bench_spmm_<backend>.cpp): under nvcc the benchmark as one unit took 381 s to compile.
#include "support/bench_common.hpp"

#include <string>
#include <vector>

namespace bench_spmm {

/// bench_spmm's own options (the rest are bench_common's args).
struct settings {
  std::vector<long> widths{1, 16, 64};
  double stream_gbs = 0;  ///< STREAM triad of these ranks, GB/s; 0: not stated
  bool streaming = true, single = false, only_tessera = false, gather_roof = false;
};

/// Every product --distribution, --type and --kernels ask for, under Backend; the exit status.
template <class Backend>
int run_under(const tessera::communicator& comm, const tessera::bench::args& args, const settings& s);

}  // namespace bench_spmm
