// spdnn::cli::run under the mpi_rma backend (run.hpp says why the example is split).
#include "run_backend.hpp"

#include <tessera/comm/mpi_rma.hpp>

template int spdnn::cli::run<tessera::mpi_rma>(const spdnn::cli::options&, const tessera::communicator&);
