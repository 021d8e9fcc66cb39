// bench_spgemm: C = A * A and C = A * A^T (plus-times), one JSON line each.
//
//   mpiexec -n 2 bench_spgemm --rmat 14 [--backend rma|progress|aggregator] [--reps 3]
//                [--distribution row_block|block_cyclic_2d|replicated_columns] [--grid PxQ] [--layers C] [--block B]
//                [--stages S] [--prefetch on|off]
//
// With a grid distribution the input (built by rows) is redistributed first and the product is
// sparse SUMMA (--layers 1) or its 3-D form (--layers C); bytes_per_rank_max is the busiest rank's.
#include "support/bench_common.hpp"

namespace {

template <class Backend, class Distribution>
void run(const tessera::communicator& comm, const tessera::bench::args& args, const Distribution& distribution) {
  using Rows = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  using P = tessera::policy<Distribution, tessera::csr, Backend>;
  const auto a = tessera::redistribute<P>(tessera::bench::input_matrix<double, Rows>(comm, args), distribution);
  const auto at = tessera::transpose(a);
  for (const auto& [op, b] : {std::pair<const char*, const tessera::dist_matrix<double, P>*>{"A*A", &a},
                              std::pair<const char*, const tessera::dist_matrix<double, P>*>{"A*At", &at}}) {
    if (a.num_cols() != b->num_rows()) continue;
    std::optional<tessera::dist_matrix<double, P>> c;
    comm.stats().reset();
    const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] {
      c.reset();  // the previous product goes first (else two products count in peak_rss_mb)
      c.emplace(tessera::spgemm(a, *b, tessera::spgemm_options{.layers = args.layers, .stages = args.stages, .prefetch_next_stage = args.prefetch}));
    });
    const auto traffic = tessera::bench::traffic_per_run(comm, "spgemm", args.reps);
    const double checksum = tessera::bench::checksum(*c);
    const double rss = tessera::bench::peak_rss_mb(comm);
    if (comm.rank() == 0)
      fmt::print("{{\"bench\": \"spgemm\", \"op\": \"{}\", \"matrix\": \"{}\", \"np\": {}, \"threads\": {}, \"backend\": \"{}\", "
                 "\"distribution\": \"{}\", \"grid\": \"{}\", \"layers\": {}, \"stages\": {}, \"prefetch\": {}, "
                 "\"seconds\": {:.6f}, \"reps\": {}, \"nnz_in\": {}, \"nnz_out\": {}, \"checksum\": {:.10g}, "
                 "\"bytes_sent\": {}, \"messages_sent\": {}, \"bytes_per_rank_max\": {}, \"peak_rss_mb\": {:.1f}}}\n",
                 op, tessera::bench::matrix_name(args), comm.size(), tessera::bench::threads(), Backend::name(),
                 Distribution::name(), tessera::bench::grid_name(a.mapping()), args.layers, args.stages, args.prefetch, seconds, args.reps,
                 a.global_nnz(), c->global_nnz(), checksum, traffic.total.bytes, traffic.total.messages,
                 traffic.max_per_rank.bytes, rss);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = tessera::bench::parse(argc, argv);
  tessera::environment env(argc, argv, tessera::bench::environment_for(args.backend));
  int status = 0;
  const int known = tessera::bench::with_backend(args.backend, [&]<class Backend>() {
    status = tessera::bench::with_distribution(
        args, [&]<class Distribution>(const Distribution& d) { run<Backend>(env.world(), args, d); });
  });
  return known != 0 ? known : status;
}
