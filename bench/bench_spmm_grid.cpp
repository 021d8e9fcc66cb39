// bench_spmm's products on grids, for every backend and grid distribution (bench_spmm_runs.hpp).
#include "bench_spmm_products.hpp"

#define BENCH_SPMM_GRID(BACKEND, DISTRIBUTION)                                                                          \
  template void bench_spmm::run_grid<BACKEND, DISTRIBUTION>(const tessera::communicator&, const tessera::bench::args&, \
                                                            const bench_spmm::settings&, const DISTRIBUTION&)
BENCH_SPMM_GRID(tessera::mpi_rma, tessera::block_cyclic_2d);
BENCH_SPMM_GRID(tessera::mpi_rma, tessera::replicated_columns);
BENCH_SPMM_GRID(tessera::aggregator, tessera::block_cyclic_2d);
BENCH_SPMM_GRID(tessera::aggregator, tessera::replicated_columns);
BENCH_SPMM_GRID(tessera::progress_rank, tessera::block_cyclic_2d);
BENCH_SPMM_GRID(tessera::progress_rank, tessera::replicated_columns);
