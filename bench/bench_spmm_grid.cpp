// bench_spmm's products on grids, for every backend and grid distribution (bench_spmm_runs.hpp).
#include "bench_spmm_products.hpp"

BENCH_SPMM_GRID(tessera::mpi_rma, tessera::block_cyclic_2d);
BENCH_SPMM_GRID(tessera::mpi_rma, tessera::replicated_columns);
BENCH_SPMM_GRID(tessera::aggregator, tessera::block_cyclic_2d);
BENCH_SPMM_GRID(tessera::aggregator, tessera::replicated_columns);
BENCH_SPMM_GRID(tessera::progress_rank, tessera::block_cyclic_2d);
BENCH_SPMM_GRID(tessera::progress_rank, tessera::replicated_columns);
