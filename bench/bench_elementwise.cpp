// bench_elementwise: A + A^T (a square A symmetrised: two structures, the same row split), the
// row sums and the column sums of A, and A without its values below 1.5 (prune: R-MAT keeps its
// repeated edges, the Laplacian its diagonal), one JSON line each. The transpose is made once,
// outside the timing.
//
//   mpiexec -n 2 bench_elementwise --rmat 16 [--backend rma|progress|aggregator] [--reps 5]
#include "support/bench_common.hpp"

#include <optional>

namespace {

// prune's predicate: a functor at namespace scope, so that it is callable in any execution space.
struct below_one_and_a_half {
  KOKKOS_INLINE_FUNCTION bool operator()(const double v) const { return v < 1.5; }
};

template <class Backend>
void run(const tessera::communicator& comm, const tessera::bench::args& args) {
  using P = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  const auto a = tessera::bench::input_matrix<double, P>(comm, args);
  if (a.num_rows() != a.num_cols()) {
    if (comm.rank() == 0) fmt::print(stderr, "bench_elementwise: A + A^T needs a square matrix\n");
    return;
  }
  const auto at = tessera::transpose(a);
  auto report = [&](const char* op, double seconds, tessera::offset_type nnz_out, double checksum) {
    const double rss = tessera::bench::peak_rss_mb(comm);
    if (comm.rank() == 0)
      fmt::print("{{\"bench\": \"elementwise\", \"op\": \"{}\", \"matrix\": \"{}\", \"np\": {}, \"threads\": {}, "
                 "\"backend\": \"{}\", \"seconds\": {:.6f}, \"reps\": {}, \"nnz_in\": {}, \"nnz_out\": {}, "
                 "\"checksum\": {:.10g}, \"peak_rss_mb\": {:.1f}}}\n",
                 op, tessera::bench::matrix_name(args), comm.size(), tessera::bench::threads(), Backend::name(),
                 seconds, args.reps, a.global_nnz(), nnz_out, checksum, rss);
  };
  {
    std::optional<tessera::dist_matrix<double, P>> sum;
    const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] {
      sum.reset();
      sum.emplace(tessera::add(a, at));
    });
    report("add", seconds, sum->global_nnz(), tessera::bench::checksum(*sum));
  }
  {
    std::optional<tessera::dist_dense<double, P>> sums;
    const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] {
      sums.reset();
      sums.emplace(tessera::reduce_rows(a));
    });
    report("reduce_rows", seconds, a.global_nnz(), tessera::bench::checksum(*sums));
  }
  {
    std::optional<tessera::dist_dense<double, P>> sums;
    const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] {
      sums.reset();
      sums.emplace(tessera::reduce_columns(a));
    });
    report("reduce_columns", seconds, a.global_nnz(), tessera::bench::checksum(*sums));
  }
  {
    std::optional<tessera::dist_matrix<double, P>> kept;
    const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] {
      kept.reset();
      kept.emplace(tessera::prune(a, below_one_and_a_half{}));
    });
    report("prune", seconds, kept->global_nnz(), tessera::bench::checksum(*kept));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = tessera::bench::parse(argc, argv);
  tessera::environment env(argc, argv, tessera::bench::environment_for(args.backend));
  return tessera::bench::with_backend(args.backend, [&]<class Backend>() { run<Backend>(env.world(), args); });
}
