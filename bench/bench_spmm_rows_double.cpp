// bench_spmm's products by rows in double, for every backend (bench_spmm_runs.hpp says why the benchmark is split).
#include "bench_spmm_products.hpp"

BENCH_SPMM_ROWS(tessera::mpi_rma, double);
BENCH_SPMM_ROWS(tessera::aggregator, double);
BENCH_SPMM_ROWS(tessera::progress_rank, double);
