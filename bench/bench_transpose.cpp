// bench_transpose: A^T by routing triplets and by slots (histogram + fetch_add + put), one JSON line each.
//
//   mpiexec -n 2 bench_transpose --rmat 14 [--backend rma|progress|aggregator] [--reps 3]
//                [--distribution row_block|block_cyclic_2d|replicated_columns] [--grid PxQ] [--block B]
//
// On a grid distribution there is one algorithm (to the transposed grid), reported as "grid".
#include "support/bench_common.hpp"

namespace {

template <class Backend, class Distribution>
void run(const tessera::communicator& comm, const tessera::bench::args& args, const Distribution& distribution) {
  using Rows = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  using P = tessera::policy<Distribution, tessera::csr, Backend>;
  const auto a = tessera::redistribute<P>(tessera::bench::input_matrix<double, Rows>(comm, args), distribution);
  constexpr bool rows = tessera::whole_row_mapping<typename P::mapping_type>;
  for (auto algorithm : {tessera::transpose_algorithm::route, tessera::transpose_algorithm::slots}) {
    if (!rows && algorithm == tessera::transpose_algorithm::slots) continue;
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
                 "\"distribution\": \"{}\", \"grid\": \"{}\", "
                 "\"seconds\": {:.6f}, \"reps\": {}, \"nnz_out\": {}, \"checksum\": {:.10g}, \"bytes_sent\": {}, "
                 "\"messages_sent\": {}, \"bytes_per_rank_max\": {}, \"peak_rss_mb\": {:.1f}}}\n",
                 !rows ? "grid" : algorithm == tessera::transpose_algorithm::route ? "route" : "slots",
                 tessera::bench::matrix_name(args), comm.size(), tessera::bench::threads(), Backend::name(),
                 Distribution::name(), tessera::bench::grid_name(a.mapping()), seconds, args.reps, at->global_nnz(),
                 checksum, traffic.total.bytes, traffic.total.messages, traffic.max_per_rank.bytes, rss);
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
