// tessera-custom-policies: the run of row_cyclic x sliced_ell, under mpi_rma and the tracing backend (compare.hpp).
#include "compare.hpp"

TESSERA_DEMO_RUN(, demo::cyclic_ell);
TESSERA_DEMO_RUN(, demo::cyclic_ell_traced);
