// bench_peer_tpetra_spmm: Tpetra 13.2's Y = A * X (CrsMatrix::apply on a MultiVector of k columns)
// on the same matrix as bench_spmm. One JSON line per k.
//
//   mpiexec -n 2 bench_peer_tpetra_spmm --rmat 14 [--k 1,16,64] [--reps 5]
#include "tpetra_support.hpp"

#include <Tpetra_MultiVector.hpp>

namespace {

using namespace tessera::bench::peer;

void run(const tessera::communicator& comm, const peer_args& args) {
  const local_csr rows = input_rows(comm, args.base);
  const auto a = tpetra_matrix_from(comm, rows);
  const double rss_before = tessera::bench::peak_rss_mb(comm);
  const auto domain = a->getDomainMap();
  for (long k : args.widths) {
    Tpetra::MultiVector<double> x(domain, static_cast<std::size_t>(k));
    Tpetra::MultiVector<double> y(a->getRangeMap(), static_cast<std::size_t>(k));
    {
      auto h = x.getLocalViewHost(Tpetra::Access::OverwriteAll);
      for (std::size_t i = 0; i < h.extent(0); ++i) {
        const auto g = static_cast<tessera::global_index>(domain->getGlobalElement(static_cast<int>(i)));
        for (std::size_t j = 0; j < h.extent(1); ++j) h(i, j) = x_value(g, static_cast<tessera::global_index>(j));
      }
    }
    const double seconds = tessera::bench::median_seconds(comm, args.base.reps, [&] { a->apply(x, y); });
    double local = 0;
    {
      auto h = y.getLocalViewHost(Tpetra::Access::ReadOnly);
      for (std::size_t i = 0; i < h.extent(0); ++i)
        for (std::size_t j = 0; j < h.extent(1); ++j) local += h(i, j);
    }
    result r = measured(comm, args, "tpetra", "spmm", "apply", rows.global_nnz, seconds);
    r.k = k;
    r.checksum = comm.sum(local);
    r.peak_rss_before_mb = rss_before;
    r.peak_rss_mb = tessera::bench::peak_rss_mb(comm);
    print(comm, r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse(argc, argv);
  tessera::environment env(args.rest_count, args.rest_argv);
  Tpetra::ScopeGuard tpetra(&args.rest_count, &args.rest_argv);
  run(env.world(), args);
  return 0;
}
