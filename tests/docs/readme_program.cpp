// README.md's "Ten lines" program, whole and line for line (test_docs_snippets_readme checks the
// page against this file); test_docs_readme_program runs it on the A.mtx that
// test_docs_reference_snippets wrote.
#include <tessera/comm/mpi_rma.hpp>              // only what the program uses: a backend,
#include <tessera/distribution/row_block.hpp>     // a distribution, the storages,
#include <tessera/environment.hpp>
#include <tessera/matrix/convert.hpp>             // and one header per operation
#include <tessera/matrix/matrix_market.hpp>       // (<tessera/tessera.hpp> includes them all)
#include <tessera/ops/spgemm_default.hpp>         // (spgemm.hpp adds the kernels options pick)
#include <tessera/ops/transpose.hpp>
#include <tessera/storage/csc.hpp>
#include <tessera/storage/csr.hpp>
int main(int argc, char** argv) {
  tessera::environment env(argc, argv);                          // MPI + Kokkos, finalised in order
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  auto A = tessera::read_matrix_market<double, P>(env.world(), "A.mtx");   // parallel read
  auto B = tessera::convert<tessera::csc>(A);                   // same matrix, other storage
  auto C = tessera::spgemm(A, A);                               // fetches only the rows of A it needs
  auto At = tessera::transpose(A);
  fmt::print("{} nonzeros; traffic: {}\n", A.global_nnz(), env.world().stats());
}
