// tessera-custom-policies: the run of row_cyclic x coo x aggregator (compare.hpp).
#include "compare.hpp"

TESSERA_DEMO_RUN(, demo::cyclic_coo);
