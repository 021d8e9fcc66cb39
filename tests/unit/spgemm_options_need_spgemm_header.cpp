// Must NOT compile (on a Kokkos without a device backend): spgemm with options, which can pick
// Kokkos-Kernels' SpGEMM, from <tessera/ops/spgemm_default.hpp> alone. The test expects tessera's
// sentence naming the header to include.
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/distribution/row_block.hpp>
#include <tessera/environment.hpp>
#include <tessera/generators/rmat.hpp>
#include <tessera/ops/spgemm_default.hpp>
#include <tessera/storage/csr.hpp>

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  const auto a = tessera::generate::rmat<double, P>(env.world(), 6, 4, 1);
  tessera::spgemm_options<> options;
  options.kernel = tessera::spgemm_kernel::kokkos_kernels;
  return static_cast<int>(tessera::spgemm(a, a, options).global_nnz());
}
