// Must NOT compile: block_cyclic_2d splits rows over grid columns, so it lacks the capability
// spgemm needs (whole rows on each rank). The test expects tessera's static_assert sentence.
#include <tessera/tessera.hpp>

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  using P = tessera::policy<tessera::block_cyclic_2d, tessera::csr, tessera::mpi_rma>;
  const auto a = tessera::generate::laplacian_2d<double, P>(env.world(), 8);
  return static_cast<int>(tessera::spgemm(a, a).global_nnz());
}
