// The spmm mode's steps for every backend (modes.hpp, run.hpp).
#include "modes.hpp"
#include "spdnn/dense_inference.hpp"

SPDNN_DENSE_MODE(, tessera::mpi_rma);
SPDNN_DENSE_MODE(, tessera::aggregator);
SPDNN_DENSE_MODE(, tessera::progress_rank);
