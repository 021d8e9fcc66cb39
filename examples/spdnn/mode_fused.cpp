// The fused mode's steps for every backend (modes.hpp, run.hpp).
#include "modes.hpp"
#include "spdnn/fused_inference.hpp"

SPDNN_FUSED_MODE(, tessera::mpi_rma);
SPDNN_FUSED_MODE(, tessera::aggregator);
SPDNN_FUSED_MODE(, tessera::progress_rank);
