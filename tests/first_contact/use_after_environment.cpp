// A matrix or communicator kept past the tessera::environment that started MPI and Kokkos: every
// operation on it must raise a tessera::error that says so, not abort inside Open MPI
// ("MPI_Allreduce called after MPI_FINALIZE") or Kokkos ("allocated after Kokkos::finalize").
// The matrices are leaked on purpose: a View destroyed after Kokkos::finalize is the one misuse
// that cannot be caught (docs/errors.md).
#include <tessera/tessera.hpp>

#include <cstdio>
#include <optional>
#include <string>

int main(int argc, char** argv) {
  using P = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  std::optional<tessera::communicator> world;
  tessera::dist_matrix<double, P>* a = nullptr;
  tessera::dist_dense<double, P>* x = nullptr;
  {
    tessera::environment env(argc, argv);
    world = env.world();
    a = new tessera::dist_matrix<double, P>(tessera::generate::uniform_random<double, P>(env.world(), 20, 20, 3, 7));
    x = new tessera::dist_dense<double, P>(env.world(), a->mapping(), 2);
  }
  int failures = 0;
  const auto expect_refused = [&](const char* what, auto&& operation) {
    try {
      operation();
      std::printf("FAIL: %s ran after the environment ended\n", what);
      ++failures;
    } catch (const tessera::error& e) {
      const bool named = std::string(e.what()).find("finalised (the tessera::environment ended)") != std::string::npos;
      std::printf("%s: %s\n", what, e.what());
      if (!named) ++failures;
    }
  };
  expect_refused("allreduce", [&] { (void)world->sum(1); });
  expect_refused("spgemm", [&] { (void)tessera::spgemm(*a, *a); });
  expect_refused("spmm", [&] { (void)tessera::spmm(*a, *x); });
  expect_refused("transpose", [&] { (void)tessera::transpose(*a); });
  expect_refused("add", [&] { (void)tessera::add(*a, *a); });
  expect_refused("gather_to_all", [&] { (void)tessera::gather_to_all(*a); });
  expect_refused("scale (local)", [&] { (void)tessera::scale(*a, 2.0); });
  expect_refused("convert", [&] { (void)tessera::convert<tessera::csc>(*a); });
  expect_refused("dist_dense", [&] { tessera::dist_dense<double, P> y(*world, 20, 1); });
  int finalized = 0;
  MPI_Finalized(&finalized);
  std::printf("MPI finalised: %s\n%s\n", finalized ? "yes" : "no", failures == 0 ? "every use refused" : "FAILED");
  return failures;
}
