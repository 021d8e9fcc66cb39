// Builds a distributed Laplacian and checks its global nonzero count; prints the Kokkos it was built with.
#include <tessera/tessera.hpp>

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  const auto A = tessera::generate::laplacian_2d<double, P>(env.world(), 8);
  const tessera::offset_type expected = 5 * 64 - 4 * 8;
  if (env.world().rank() == 0)
    fmt::print("downstream: {} x {}, {} nonzeros, KOKKOS_VERSION={}\n", A.num_rows(), A.num_cols(), A.global_nnz(),
               KOKKOS_VERSION);
  return A.global_nnz() == expected ? 0 : 1;
}
