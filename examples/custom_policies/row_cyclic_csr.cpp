// tessera-custom-policies: the run of row_cyclic with the built-in csr and csc storages, mpi_rma (compare.hpp).
#include "compare.hpp"

TESSERA_DEMO_RUN(, demo::cyclic_csr);
TESSERA_DEMO_RUN(, demo::cyclic_csc);
