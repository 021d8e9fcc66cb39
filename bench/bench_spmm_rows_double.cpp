// bench_spmm's products by rows in double, for every backend (bench_spmm_runs.hpp says why the benchmark is split).
#include "bench_spmm_products.hpp"

template void bench_spmm::run_rows<tessera::mpi_rma, double>(const tessera::communicator&, const tessera::bench::args&,
                                                          const bench_spmm::settings&);
template void bench_spmm::run_rows<tessera::aggregator, double>(const tessera::communicator&, const tessera::bench::args&,
                                                             const bench_spmm::settings&);
template void bench_spmm::run_rows<tessera::progress_rank, double>(const tessera::communicator&, const tessera::bench::args&,
                                                                const bench_spmm::settings&);
