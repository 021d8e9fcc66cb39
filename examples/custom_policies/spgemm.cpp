// tessera-custom-policies: spgemm for every policy of the example, compiled here once (operations.hpp).
#define CUSTOM_POLICIES_OPERATIONS_UNIT
#include "operations.hpp"

CUSTOM_POLICIES_FOR_EACH(CUSTOM_POLICIES_SPGEMM, )
