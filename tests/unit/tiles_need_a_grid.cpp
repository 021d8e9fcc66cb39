// Must NOT compile: tile storage over a row distribution. Rows are not tiles; the test expects
// tessera's static_assert sentence naming the capability the distribution lacks.
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/distribution/row_block.hpp>
#include <tessera/policy.hpp>
#include <tessera/storage/tiles.hpp>

int main() {
  using P = tessera::policy<tessera::row_block, tessera::tiles, tessera::mpi_rma>;
  return static_cast<int>(sizeof(P));
}
