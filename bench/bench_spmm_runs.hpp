#pragma once
// bench_spmm's products, declared here and compiled in three units of their own, each for every
// backend: products by rows in double (bench_spmm_rows_double.cpp) and in float
// (bench_spmm_rows_float.cpp), and on grids (bench_spmm_grid.cpp). Under nvcc the benchmark as
// one unit took 381 s to compile; what it compiles depends on the value type and the
// distribution, hardly on the backend (one backend's unit took 179 of the 209 s of g++).
#include "support/bench_common.hpp"

#include <string>
#include <vector>

namespace bench_spmm {

/// bench_spmm's own options (the rest are bench_common's args).
struct settings {
  std::vector<long> widths{1, 16, 64};
  double stream_gbs = 0;  ///< STREAM triad of these ranks, GB/s; 0: not stated
  bool streaming = true, single = false, only_tessera = false, gather_roof = false;
  bool x_node_shared = false;  ///< --x-memory node_shared: X in node-shared memory (share_on_node)
  tessera::x_in_place read_x_in_place = tessera::x_in_place::automatic;  ///< --x-in-place
  /// --order: A renumbered within each rank first (reorder; outside the timing), X permuted alike.
  tessera::row_ordering order = tessera::row_ordering::natural;
  tessera::reorder_scope order_scope = tessera::reorder_scope::within_ranks;  ///< --order-scope
  bool order_split_by_nonzeros = false;  ///< --order-split nonzeros: whole_matrix's rows split by nonzeros
};

/// The products of an A by rows (row_block) at every width, with tessera's kernel and (unless
/// only_tessera) Kokkos-Kernels', in value type T: one JSON line each.
template <class Backend, class T>
void run_rows(const tessera::communicator& comm, const tessera::bench::args& args, const settings& s);

/// The 2-D products of an A on a grid distribution, X and Y by rows or along A's grid (--vectors).
template <class Backend, class Distribution>
void run_grid(const tessera::communicator& comm, const tessera::bench::args& args, const settings& s,
              const Distribution& distribution);

}  // namespace bench_spmm
