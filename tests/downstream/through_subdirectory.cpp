// The add_subdirectory route of test_downstream: the same targets and the same Kokkos as through
// the installed package, checked with a small program (the full one, main.cpp, is built once,
// through the package: building it twice cost minutes of a busy 2-core machine for no coverage).
#include <tessera/tessera.hpp>

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  const auto a = tessera::generate::laplacian_2d<double, P>(env.world(), 8);
  const tessera::offset_type expected = 5 * 64 - 4 * 8;
  if (env.world().rank() == 0)
    fmt::print("downstream (add_subdirectory): {} nonzeros; KOKKOS_VERSION={}\n", a.global_nnz(), KOKKOS_VERSION);
  return a.global_nnz() == expected ? 0 : 1;
}
