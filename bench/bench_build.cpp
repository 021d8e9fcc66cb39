// bench_build: assembling a distributed matrix from triplets that live on other
// ranks, and reading it back from a Matrix Market file in parallel.
//
// "build": every rank holds its entries of A with rows and columns swapped, so
// almost every entry belongs to another rank (an all-to-all of nnz records),
// and build_from_triplets routes, sorts and sums them into A^T.
// "read_matrix_market": A written to a file, then read by all ranks.
#include "support/bench_common.hpp"

#include <filesystem>
#include <unistd.h>

template <class Backend>
void run(const tessera::communicator& comm, const tessera::bench::args& args) {
  using P = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  {
    const auto a = tessera::bench::input_matrix<double, P>(comm, args);
    auto swapped = tessera::local_triplets(a);
    std::swap(swapped.rows, swapped.cols);

    auto report = [&](std::string_view op, double seconds, const tessera::dist_matrix<double, P>& out,
                      const tessera::traffic_summary& traffic) {
      const double checksum = tessera::bench::checksum(out);
      const double rss = tessera::bench::peak_rss_mb(comm);
      if (comm.rank() == 0)
        fmt::print(
            "{{\"bench\": \"build\", \"op\": \"{}\", \"matrix\": \"{}\", \"np\": {}, \"threads\": {}, \"backend\": \"{}\", \"seconds\": {:.6f}, "
            "\"reps\": {}, \"nnz_out\": {}, \"checksum\": {:.10g}, \"bytes_sent\": {}, \"messages_sent\": {}, "
            "\"peak_rss_mb\": {:.1f}, \"entries_per_second\": {:.4g}}}\n",
            op, tessera::bench::matrix_name(args), comm.size(), tessera::bench::threads(), args.backend, seconds, args.reps, out.global_nnz(),
            checksum, traffic.total.bytes, traffic.total.messages, rss, static_cast<double>(a.global_nnz()) / seconds);
    };

    std::optional<tessera::dist_matrix<double, P>> at;
    comm.stats().reset();
    const double build_seconds = tessera::bench::median_seconds(comm, args.reps, [&] {
      at.emplace(tessera::build_from_triplets<double, P>(comm, a.num_cols(), a.num_rows(), swapped));
    });
    auto per_run = [&](const std::string& scope) { return tessera::bench::traffic_per_run(comm, scope, args.reps); };
    report("build", build_seconds, *at, per_run("build"));

    std::vector<long> pid{static_cast<long>(::getpid())};
    comm.broadcast(pid, 0);
    const auto path = (std::filesystem::temp_directory_path() / fmt::format("tessera-bench-{}.mtx", pid[0])).string();
    tessera::write_matrix_market(a, path);
    std::optional<tessera::dist_matrix<double, P>> read;
    comm.stats().reset();
    const double read_seconds = tessera::bench::median_seconds(
        comm, args.reps, [&] { read.emplace(tessera::read_matrix_market<double, P>(comm, path)); });
    report("read_matrix_market", read_seconds, *read, per_run("build"));
    comm.barrier();
    if (comm.rank() == 0) std::filesystem::remove(path);
  }
}

int main(int argc, char** argv) {
  const auto args = tessera::bench::parse(argc, argv);
  tessera::environment env(argc, argv, tessera::bench::environment_for(args.backend));
  return tessera::bench::with_backend(args.backend, [&]<class Backend>() { run<Backend>(env.world(), args); });
}
