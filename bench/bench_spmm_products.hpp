#pragma once
// bench_spmm's products (bench_spmm_runs.hpp), included by the units that instantiate them:
// bench_spmm_rows_double.cpp, bench_spmm_rows_float.cpp and bench_spmm_grid.cpp.
#include "bench_spmm_runs.hpp"

#include <chrono>
#include <cstdio>
#include <limits>
#include <sstream>

namespace bench_spmm {

/// The 2-D product of an A on a grid distribution with X and Y by rows (--vectors row_block) or
/// laid out along A's grid (--vectors grid_aligned).
template <class Backend, class Distribution>
void run_grid(const tessera::communicator& comm, const tessera::bench::args& args, const settings& s,
              const Distribution& distribution) {
  using Rows = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  using Aligned = tessera::policy<tessera::row_partition, tessera::csr, Backend>;
  using P = tessera::policy<Distribution, tessera::csr, Backend>;
  const auto a = tessera::redistribute<P>(tessera::bench::input_matrix<double, Rows>(comm, args), distribution);
  const bool aligned = args.vectors == "grid_aligned";
  for (long k : s.widths) {
    const auto fill = [](tessera::global_index i, tessera::global_index j) { return 1.0 / static_cast<double>(1 + (i + j) % 7); };
    const auto measure = [&](auto& x, auto& y) {
      x.fill(fill);
      comm.stats().reset();
      const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] { tessera::spmm(a, x, y); });
      return std::pair{seconds, tessera::bench::traffic_per_run(comm, "spmm", args.reps)};
    };
    double seconds = 0, checksum = 0;
    tessera::traffic_summary traffic;
    if (aligned) {
      tessera::dist_dense<double, Aligned> x(comm, tessera::grid_aligned_rows(a.mapping(), tessera::grid_side::columns), k);
      tessera::dist_dense<double, Aligned> y(comm, tessera::grid_aligned_rows(a.mapping(), tessera::grid_side::rows), k);
      std::tie(seconds, traffic) = measure(x, y);
      checksum = tessera::bench::checksum(y);
    } else {
      tessera::dist_dense<double, Rows> x(comm, a.num_cols(), k);
      tessera::dist_dense<double, Rows> y(comm, a.num_rows(), k);
      std::tie(seconds, traffic) = measure(x, y);
      checksum = tessera::bench::checksum(y);
    }
    const double rss = tessera::bench::peak_rss_mb(comm);
    if (comm.rank() == 0)
      fmt::print("{{\"bench\": \"spmm\", \"matrix\": \"{}\", \"np\": {}, \"threads\": {}, \"backend\": \"{}\", \"kernel\": \"grid\", "
                 "\"distribution\": \"{}\", \"grid\": \"{}\", \"vectors\": \"{}\", \"k\": {}, \"seconds\": {:.6f}, \"reps\": {}, "
                 "\"gflops\": {:.4f}, \"nnz\": {}, \"checksum\": {:.10g}, \"bytes_sent\": {}, \"messages_sent\": {}, "
                 "\"bytes_per_rank_max\": {}, \"peak_rss_mb\": {:.1f}}}\n",
                 tessera::bench::matrix_name(args), comm.size(), tessera::bench::threads(), Backend::name(),
                 Distribution::name(), tessera::bench::grid_name(a.mapping()), aligned ? "grid_aligned" : "row_block", k,
                 seconds, args.reps, 2.0 * static_cast<double>(a.global_nnz()) * static_cast<double>(k) / seconds / 1e9,
                 a.global_nnz(), checksum, traffic.total.bytes, traffic.total.messages, traffic.max_per_rank.bytes, rss);
  }
}

template <class Backend, class T>
void run_rows(const tessera::communicator& comm, const tessera::bench::args& args, const settings& s) {
  using P = tessera::policy<tessera::row_block, tessera::csr, Backend>;
  const auto input = tessera::bench::input_matrix<T, P>(comm, args);
  comm.barrier();
  const auto reorder_start = std::chrono::steady_clock::now();
  const auto reordered = s.order_split_by_nonzeros
                             ? tessera::reorder(input, s.order, s.order_scope,
                                                tessera::row_block{tessera::row_block::balance::nonzeros})
                             : tessera::reorder(input, s.order, s.order_scope);
  const double reorder_seconds =
      comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - reorder_start).count());
  const auto& a = reordered.matrix;
  // What one product touches at least: A's CSR arrays, the distinct rows of X A's columns name, Y.
  const auto local_rows = static_cast<double>(a.local_rows());
  const double a_bytes = comm.sum((local_rows + 1) * sizeof(tessera::offset_type) +
                                  static_cast<double>(a.local().nnz()) * (sizeof(tessera::local_index) + sizeof(T)));
  const double x_row_count = comm.sum(static_cast<double>(a.col_map().extent(0)));
  const double y_row_count = comm.sum(local_rows);
  for (auto kernel : {tessera::spmm_kernel::tessera, tessera::spmm_kernel::kokkos_kernels})
  for (long k : s.widths) {
    if (s.only_tessera && kernel != tessera::spmm_kernel::tessera) continue;
    if (s.x_node_shared && kernel != tessera::spmm_kernel::tessera) continue;  // read in place by tessera's kernel only
    tessera::dist_dense<T, P> x(comm, input.mapping(), k);  // in A's numbering, then permuted as A was
    x.fill([](tessera::global_index i, tessera::global_index j) { return T(1) / static_cast<T>(1 + (i + j) % 7); });
    if (s.order != tessera::row_ordering::natural || s.order_split_by_nonzeros)
      x = tessera::permute_rows(x, reordered.permutation);
    if constexpr (std::is_same_v<typename P::memory_space, Kokkos::HostSpace>) {
      if (s.x_node_shared) x = tessera::share_on_node(x);
    } else if (s.x_node_shared) {
      if (comm.rank() == 0) std::fprintf(stderr, "bench_spmm: --x-memory node_shared needs host memory; X stays private\n");
    }
    tessera::dist_dense<T, P> y(comm, a.mapping(), k);
    tessera::spmm_options options{.kernel = kernel};
    options.read_x_in_place = s.read_x_in_place;
    if (!s.streaming) options.streaming_store_bytes = std::numeric_limits<std::size_t>::max();
    auto& plan = tessera::spmm_plan_for(a, x, options);  // the inspector, outside the timing
    comm.stats().reset();
    const double seconds = tessera::bench::median_seconds(comm, args.reps, [&] { plan.apply(a, x, y); });
    const auto traffic = tessera::bench::traffic_per_run(comm, "spmm", args.reps);
    const double checksum = tessera::bench::checksum(y);
    const std::uint64_t halo = comm.sum(static_cast<std::uint64_t>(plan.halo_rows()));
    const bool in_place = plan.agree_x_rows_read(x) == tessera::spmm_plan<T, P>::x_rows_read::in_place;
    const bool x_shared_huge_pages = comm.min(x.node_shared() != nullptr && x.node_shared()->huge_pages() ? 1 : 0) == 1;
    const double rss = tessera::bench::peak_rss_mb(comm);
    const double bytes_min = a_bytes + (x_row_count + y_row_count) * static_cast<double>(k) * sizeof(T);
    const double gbs = bytes_min / seconds / 1e9;
    std::string fraction = s.stream_gbs > 0 ? fmt::format(", \"stream_gbs\": {:.3f}, \"bandwidth_fraction\": {:.3f}",
                                                        s.stream_gbs, gbs / s.stream_gbs)
                                          : std::string{};
    if (s.gather_roof && kernel == tessera::spmm_kernel::tessera && std::is_same_v<T, double>) {
      const auto x_rows = static_cast<std::size_t>(x.local_rows()) + plan.halo_rows();
      const auto gather = tessera::bench::random_row_gather(comm, x_rows, static_cast<int>(k), a.local().nnz(), 3);
      if (gather)
        fraction += fmt::format(", \"gather_roof_seconds\": {:.6f}, \"gather_fraction\": {:.3f}", gather->seconds,
                                gather->seconds / seconds);
    }
    if (comm.rank() == 0)
      fmt::print("{{\"bench\": \"spmm\", \"matrix\": \"{}\", \"type\": \"{}\", \"np\": {}, \"threads\": {}, \"backend\": \"{}\", \"kernel\": \"{}\", \"k\": {}, "
                 "\"order\": \"{}\", \"order_scope\": \"{}\", \"order_split\": \"{}\", \"reorder_seconds\": {:.4f}, \"x_memory\": \"{}\", \"x_shared_huge_pages\": {}, \"x_rows_read\": \"{}\", \"streaming_stores\": {}, \"seconds\": {:.6f}, \"reps\": {}, \"gflops\": {:.4f}, \"nnz\": {}, \"checksum\": {:.10g}, "
                 "\"halo_rows\": {}, \"bytes_sent\": {}, \"messages_sent\": {}, \"peak_rss_mb\": {:.1f}, "
                 "\"bytes_min\": {:.0f}, \"bandwidth_gbs\": {:.3f}{}}}\n",
                 tessera::bench::matrix_name(args), sizeof(T) == 4 ? "float" : "double", comm.size(), tessera::bench::threads(), Backend::name(),
                 kernel == tessera::spmm_kernel::tessera ? "tessera" : "kokkos_kernels", k,
                 tessera::to_string(s.order), s.order_scope == tessera::reorder_scope::whole_matrix ? "whole_matrix" : "within_ranks",
                 s.order_split_by_nonzeros ? "nonzeros" : "as_before", reorder_seconds,
                 s.x_node_shared ? "node_shared" : "private", x_shared_huge_pages, in_place ? "in_place" : "fetched", s.streaming ? "\"auto\"" : "\"off\"", seconds, args.reps,
                 2.0 * static_cast<double>(a.global_nnz()) * static_cast<double>(k) / seconds / 1e9, a.global_nnz(),
                 checksum, halo, traffic.total.bytes, traffic.total.messages, rss, bytes_min, gbs, fraction);
  }
}

}  // namespace bench_spmm

// Explicit instantiations for the units: BENCH_SPMM_ROWS(tessera::mpi_rma, double) compiles the
// products by rows in double under mpi_rma; BENCH_SPMM_GRID likewise for a grid distribution.
#define BENCH_SPMM_ROWS(BACKEND, T)                                                                              \
  template void bench_spmm::run_rows<BACKEND, T>(const tessera::communicator&, const tessera::bench::args&, \
                                                 const bench_spmm::settings&)
#define BENCH_SPMM_GRID(BACKEND, DISTRIBUTION)                                                                          \
  template void bench_spmm::run_grid<BACKEND, DISTRIBUTION>(const tessera::communicator&, const tessera::bench::args&, \
                                                            const bench_spmm::settings&, const DISTRIBUTION&)
