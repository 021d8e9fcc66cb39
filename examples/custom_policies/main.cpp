// tessera-custom-policies: three policies written outside the library (a row-cyclic distribution,
// a sliced-ELLPACK storage, a backend that traces every one-sided operation) run spmm, spgemm and
// transpose next to the built-ins, on the same R-MAT matrix. Each result is compared with
// row_block x csr x mpi_rma; the table shows what each combination sent, from the library's
// counters, and the tracing backend's log says which operations moved it.
//
//   mpirun -n 4 tessera-custom-policies --scale 10
//
// The operations are compiled in units of their own (operations.hpp: spmm.cpp, spgemm.cpp,
// transpose.cpp) and declared extern here.
#include "operations.hpp"

#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

using custom_policies::block_csr;

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

}  // namespace

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  const auto& comm = env.world();
  int scale = 10;
  for (int k = 1; k < argc; ++k) {
    if (std::string_view(argv[k]) == "--scale" && k + 1 < argc) scale = std::atoi(argv[++k]);
    else {
      if (comm.rank() == 0) fmt::print(stderr, "usage: tessera-custom-policies [--scale S]\n");
      return 2;
    }
  }

  // The reference: row_block x csr (Y row-major on rank 0).
  const auto a_ref = tessera::generate::rmat<double, block_csr>(comm, scale);
  tessera::dist_dense<double, block_csr> x_ref(comm, a_ref.num_cols(), 4);
  x_ref.fill([](tessera::global_index i, tessera::global_index j) { return static_cast<double>((i + 3 * j) % 7); });
  std::vector<double> y_ref;
  if (auto y = tessera::spmm(a_ref, x_ref).gather_to_root()) y_ref = std::move(*y);
  const auto c_ref = tessera::spgemm(a_ref, a_ref);
  const auto t_ref = tessera::transpose(a_ref);

  const outcome results[] = {
      run<block_csr>(comm, scale, a_ref, y_ref, c_ref, t_ref),
      run<custom_policies::cyclic_csr>(comm, scale, a_ref, y_ref, c_ref, t_ref),
      run<custom_policies::cyclic_csc>(comm, scale, a_ref, y_ref, c_ref, t_ref),
      run<custom_policies::cyclic_coo>(comm, scale, a_ref, y_ref, c_ref, t_ref),
      run<custom_policies::cyclic_ell>(comm, scale, a_ref, y_ref, c_ref, t_ref),
      run<custom_policies::cyclic_ell_traced>(comm, scale, a_ref, y_ref, c_ref, t_ref),
  };
  const char* names[] = {"row_block x csr x mpi_rma",         "row_cyclic x csr x mpi_rma",
                         "row_cyclic x csc x mpi_rma",        "row_cyclic x coo x aggregator",
                         "row_cyclic x sliced_ell x mpi_rma", "row_cyclic x sliced_ell x tracing"};
  bool all_equal = true;
  if (comm.rank() == 0)
    fmt::print("R-MAT scale {} on {} ranks: bytes sent, all ranks (largest rank)\n{:<32} {:>22} {:>22} {:>22}  {}\n",
               scale, comm.size(), "policy", "spmm (k = 4)", "spgemm A*A", "transpose", "equal to row_block x csr");
  for (std::size_t p = 0; p < std::size(results); ++p) {
    const auto& r = results[p];
    all_equal = all_equal && r.equal;
    auto cell = [](const tessera::traffic_summary& t) { return fmt::format("{} ({})", t.total.bytes, t.max_per_rank.bytes); };
    if (comm.rank() == 0)
      fmt::print("{:<32} {:>22} {:>22} {:>22}  {}\n", names[p], cell(r.spmm), cell(r.spgemm), cell(r.transpose),
                 r.equal ? "yes" : "NO");
  }
  // The tracing backend's log of the last run (building the matrix included), summed over ranks.
  std::map<std::string_view, std::pair<std::uint64_t, std::uint64_t>> by_kind;  // count, bytes
  for (const auto& e : custom::trace_log()) {
    by_kind[e.what].first += 1;
    by_kind[e.what].second += e.bytes;
  }
  if (comm.rank() == 0) fmt::print("\ntracing backend, operations logged by all ranks:\n");
  for (const std::string_view what : {"allocate", "exchange", "barrier", "get", "put", "fetch_add", "accumulate"}) {
    const auto count = comm.sum(by_kind[what].first), bytes = comm.sum(by_kind[what].second);
    if (comm.rank() == 0) fmt::print("  {:<10} {:>8} operations {:>12} bytes\n", what, count, bytes);
  }
  return all_equal ? 0 : 1;
}
