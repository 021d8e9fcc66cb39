// bench_spgemm: C = A * A and C = A * A^T (plus-times), one JSON line each.
//
//   mpiexec -n 2 bench_spgemm --rmat 14 [--backend rma|progress|aggregator] [--reps 3]
#include "support/bench_common.hpp"

namespace {

template <class Backend>
void run(const tessera::communicator& comm, const tessera::bench::args& args) {
  using P = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  const auto a = tessera::bench::input_matrix<double, P>(comm, args);
  const auto at = tessera::transpose(a);
  for (const auto& [op, b] : {std::pair<const char*, const tessera::dist_matrix<double, P>*>{"A*A", &a},
                              std::pair<const char*, const tessera::dist_matrix<double, P>*>{"A*At", &at}}) {
    if (a.num_cols() != b->num_rows()) continue;
    std::optional<tessera::dist_matrix<double, P>> c;
    comm.stats().reset();
    const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] {
      c.reset();  // the previous product goes first (else two products count in peak_rss_mb)
      c.emplace(tessera::spgemm(a, *b));
    });
    const auto traffic = tessera::bench::traffic_per_run(comm, "spgemm", args.reps);
    const double checksum = tessera::bench::checksum(*c);
    const double rss = tessera::bench::peak_rss_mb(comm);
    if (comm.rank() == 0)
      fmt::print("{{\"bench\": \"spgemm\", \"op\": \"{}\", \"matrix\": \"{}\", \"np\": {}, \"threads\": {}, \"backend\": \"{}\", "
                 "\"seconds\": {:.6f}, \"reps\": {}, \"nnz_in\": {}, \"nnz_out\": {}, \"checksum\": {:.10g}, "
                 "\"bytes_sent\": {}, \"messages_sent\": {}, \"peak_rss_mb\": {:.1f}}}\n",
                 op, tessera::bench::matrix_name(args), comm.size(), tessera::bench::threads(), Backend::name(), seconds, args.reps,
                 a.global_nnz(), c->global_nnz(), checksum, traffic.total.bytes, traffic.total.messages,
                 rss);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = tessera::bench::parse(argc, argv);
  tessera::environment env(argc, argv, tessera::bench::environment_for(args.backend));
  return tessera::bench::with_backend(args.backend, [&]<class Backend>() { run<Backend>(env.world(), args); });
}
