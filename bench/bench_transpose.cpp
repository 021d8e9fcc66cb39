// bench_transpose: A^T by routing triplets and by slots (histogram + fetch_add + put), one JSON line each.
//
//   mpiexec -n 2 bench_transpose --rmat 14 [--backend rma|progress|aggregator] [--reps 3]
//                [--distribution row_block|block_cyclic_2d|replicated_columns] [--grid PxQ] [--block B]
//
// On a grid distribution there is one algorithm (to the transposed grid), reported as "grid".
#include "support/bench_common.hpp"

#include <string_view>
#include <vector>

namespace {

template <class Backend, class Distribution>
void run(const tessera::communicator& comm, const tessera::bench::args& args, const Distribution& distribution,
         bool with_slots) {
  using Rows = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  using P = tessera::policy<Distribution, tessera::csr, Backend>;
  const auto a = tessera::redistribute<P>(tessera::bench::input_matrix<double, Rows>(comm, args), distribution);
  constexpr bool rows = tessera::whole_row_mapping<typename P::mapping_type>;
  for (auto algorithm : {tessera::transpose_algorithm::route, tessera::transpose_algorithm::slots}) {
    if ((!rows || !with_slots) && algorithm == tessera::transpose_algorithm::slots) continue;
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
  // --algorithms route (this benchmark's own option; default route,slots): the fine-grained slots
  // algorithm is host-side work per entry, seconds on a GPU build for millions of entries.
  bool with_slots = true;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--algorithms" && i + 1 < argc)
      with_slots = std::string_view(argv[++i]).find("slots") != std::string_view::npos;
    else
      rest.push_back(argv[i]);
  }
  int rest_count = static_cast<int>(rest.size());
  char** rest_args = rest.data();
  const auto args = tessera::bench::parse(rest_count, rest_args);
  tessera::environment env(rest_count, rest_args, tessera::bench::environment_for(args.backend));
  int status = 0;
  const int known = tessera::bench::with_backend(args.backend, [&]<class Backend>() {
    status = tessera::bench::with_distribution(
        args, [&]<class Distribution>(const Distribution& d) { run<Backend>(env.world(), args, d, with_slots); });
  });
  return known != 0 ? known : status;
}
