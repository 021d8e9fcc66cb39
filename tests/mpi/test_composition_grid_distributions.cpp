// test_composition_grids.cpp for both grid distributions in one unit (TESSERA_TEST_UNITY): each
// half's cases form a doctest suite named after its distribution (--test-suite=block_cyclic_2d).
#define TESSERA_GRID_DISTRIBUTION block_cyclic_2d
#include "test_composition_grids.cpp"
#undef TESSERA_GRID_DISTRIBUTION
#define TESSERA_GRID_DISTRIBUTION replicated_columns
#include "test_composition_grids.cpp"
#undef TESSERA_GRID_DISTRIBUTION
