// Must NOT compile: `int` is not a storage policy. The test expects tessera's
// static_assert message in the compiler output.
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/distribution/row_block.hpp>
#include <tessera/policy.hpp>

int main() {
  using bad = tessera::policy<tessera::row_block, int, tessera::mpi_rma>;
  return sizeof(bad);
}
