#pragma once
// tessera-custom-policies' comparison of one policy with row_block x csr, and the policies it
// runs. Each policy's run is compiled in one unit (main.cpp: the reference's; row_cyclic_csr.cpp,
// row_cyclic_coo.cpp, row_cyclic_sliced_ell.cpp: the others), so that no unit compiles more than two
// policies' products: under nvcc the program as one unit took 224 s to compile.
#include "row_cyclic.hpp"
#include "sliced_ell.hpp"
#include "tracing_backend.hpp"

#include <tessera/tessera.hpp>

#include <vector>

namespace demo {

using block_csr = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;

struct outcome {
  bool equal = true;
  tessera::traffic_summary spmm, spgemm, transpose;
};

// A * X, A * A and A^T under policy P, each compared with the row_block x csr result.
template <class P>
outcome run(const tessera::communicator& comm, int scale, const tessera::dist_matrix<double, block_csr>& a_ref,
            const std::vector<double>& y_ref, const tessera::dist_matrix<double, block_csr>& c_ref,
            const tessera::dist_matrix<double, block_csr>& t_ref) {
  // [use]
  const auto a = tessera::generate::rmat<double, P>(comm, scale);
  tessera::dist_dense<double, P> x(comm, a.num_cols(), 4);
  x.fill([](tessera::global_index i, tessera::global_index j) { return static_cast<double>((i + 3 * j) % 7); });
  comm.stats().reset();
  const auto y = tessera::spmm(a, x);
  const auto c = tessera::spgemm(a, a);
  const auto t = tessera::transpose(a);
  // [use]
  outcome out;
  out.spmm = tessera::reduce_traffic(comm, "spmm");
  out.spgemm = tessera::reduce_traffic(comm, "spgemm");
  out.transpose = tessera::reduce_traffic(comm, "transpose");
  const auto y_all = y.gather_to_root();
  const int y_differs = comm.max(comm.rank() == 0 && *y_all != y_ref ? 1 : 0);
  out.equal = y_differs == 0 && tessera::compare(a, a_ref) && tessera::compare(c, c_ref) && tessera::compare(t, t_ref);
  return out;
}


using cyclic_csr = tessera::policy<custom::row_cyclic, tessera::csr, tessera::mpi_rma>;
using cyclic_csc = tessera::policy<custom::row_cyclic, tessera::csc, tessera::mpi_rma>;
using cyclic_coo = tessera::policy<custom::row_cyclic, tessera::coo, tessera::aggregator>;
using cyclic_ell = tessera::policy<custom::row_cyclic, custom::sliced_ell, tessera::mpi_rma>;
using cyclic_ell_traced = tessera::policy<custom::row_cyclic, custom::sliced_ell, custom::tracing<>>;

}  // namespace demo

// Compiled in the units named above, declared here for main.cpp.
#define TESSERA_DEMO_RUN(EXTERN, P)                                                                              \
  EXTERN template demo::outcome demo::run<P>(const tessera::communicator&, int,                                  \
                                             const tessera::dist_matrix<double, demo::block_csr>&,               \
                                             const std::vector<double>&, const tessera::dist_matrix<double, demo::block_csr>&, \
                                             const tessera::dist_matrix<double, demo::block_csr>&)
TESSERA_DEMO_RUN(extern, demo::cyclic_csr);
TESSERA_DEMO_RUN(extern, demo::cyclic_csc);
TESSERA_DEMO_RUN(extern, demo::cyclic_coo);
TESSERA_DEMO_RUN(extern, demo::cyclic_ell);
TESSERA_DEMO_RUN(extern, demo::cyclic_ell_traced);
