// bench_spmm's products under the progress_rank backend (bench_spmm_runs.hpp says why the benchmark is split).
#include "bench_spmm_backend.hpp"

template int bench_spmm::run_under<tessera::progress_rank>(const tessera::communicator&, const tessera::bench::args&,
                                                  const bench_spmm::settings&);
