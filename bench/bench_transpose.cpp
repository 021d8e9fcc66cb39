// bench_transpose: A^T by routing triplets and by slots (histogram + fetch_add + put), one JSON line each.
//
//   mpiexec -n 2 bench_transpose --rmat 14 [--backend rma|progress|aggregator] [--reps 3]
#include "support/bench_common.hpp"

namespace {

template <class Backend>
void run(const tessera::communicator& comm, const tessera::bench::args& args) {
  using P = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  const auto a = tessera::bench::input_matrix<double, P>(comm, args);
  for (auto algorithm : {tessera::transpose_algorithm::route, tessera::transpose_algorithm::slots}) {
    std::optional<tessera::dist_matrix<double, P>> at;
    comm.stats().reset();
    const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] {
      at.reset();  // the previous result goes first (else two count in peak_rss_mb)
      at.emplace(tessera::transpose(a, algorithm));
    });
    const auto traffic = tessera::bench::traffic_per_run(comm, "transpose", args.reps);
    const double checksum = tessera::bench::checksum(*at);
    const double rss = tessera::bench::peak_rss_mb(comm);
    if (comm.rank() == 0)
      fmt::print("{{\"bench\": \"transpose\", \"algorithm\": \"{}\", \"matrix\": \"{}\", \"np\": {}, \"threads\": {}, \"backend\": \"{}\", "
                 "\"seconds\": {:.6f}, \"reps\": {}, \"nnz_out\": {}, \"checksum\": {:.10g}, \"bytes_sent\": {}, "
                 "\"messages_sent\": {}, \"peak_rss_mb\": {:.1f}}}\n",
                 algorithm == tessera::transpose_algorithm::route ? "route" : "slots", tessera::bench::matrix_name(args),
                 comm.size(), tessera::bench::threads(), Backend::name(), seconds, args.reps, at->global_nnz(), checksum,
                 traffic.total.bytes, traffic.total.messages, rss);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = tessera::bench::parse(argc, argv);
  tessera::environment env(argc, argv, tessera::bench::environment_for(args.backend));
  return tessera::bench::with_backend(args.backend, [&]<class Backend>() { run<Backend>(env.world(), args); });
}
