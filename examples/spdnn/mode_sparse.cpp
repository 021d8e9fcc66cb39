// The spgemm mode's steps for every backend (modes.hpp, run.hpp).
#include "modes.hpp"
#include "spdnn/sparse_inference.hpp"

SPDNN_SPARSE_MODE(, tessera::mpi_rma);
SPDNN_SPARSE_MODE(, tessera::aggregator);
SPDNN_SPARSE_MODE(, tessera::progress_rank);
