// Must NOT compile: an element-wise operation on a tile-stored matrix. The test expects tessera's
// sentence naming what the operation works on and the way out (to_elements).
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/distribution/block_cyclic_2d.hpp>
#include <tessera/environment.hpp>
#include <tessera/matrix/make_block_sparse.hpp>
#include <tessera/ops/elementwise.hpp>
#include <tessera/storage/tiles.hpp>

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  using P = tessera::policy<tessera::block_cyclic_2d, tessera::tiles, tessera::mpi_rma>;
  const auto tiling = tessera::tiled_range::uniform(8, 4);
  const tessera::block_cyclic_2d::mapping m(tessera::process_grid::squarest(env.world().size()), tiling, tiling);
  const auto all = [](std::size_t, std::size_t) { return true; };
  const auto one = [](tessera::global_index, tessera::global_index) { return 1.0; };
  const auto a = tessera::make_block_sparse<double, P>(env.world(), m, all, one);
  return static_cast<int>(tessera::prune(a, [](double v) { return v < 0.5; }).global_nnz());
}
