// bench_comm: bale's histogram and index-gather on each backend, against a naive
// baseline of one MPI_Accumulate / MPI_Get per element.
//
// histogram:  every rank adds 1 to `updates` random bins of a table spread over all ranks.
// index-gather: every rank reads `updates` random entries of such a table.
// Methods: "mailbox" (a record per update through the backend's conveyor; for
// index-gather a request and a reply record), "onesided" (the backend's
// accumulate / get_nb of one element per update), "naive" (plain MPI RMA, one
// call per element, the baseline of the issue). One JSON line per measurement.
//
//   mpiexec -n 2 bench_comm [--backend rma|progress|aggregator] [--updates N] [--table N]
//                           [--buffer-bytes B] [--routing direct|two_hop] [--reps R] [--seed S]
// With --backend progress, launch one more rank per node (the progress rank).
#include "support/bench_common.hpp"

#include <mpi.h>

#include <algorithm>

namespace {

struct options {
  std::string backend = "aggregator";
  std::size_t updates = std::size_t{1} << 20;  ///< per rank
  std::size_t naive_updates = 0;               ///< per rank for the baseline (default updates / 16)
  std::size_t table = std::size_t{1} << 16;    ///< entries per rank
  std::size_t buffer_bytes = std::size_t{1} << 16;
  tessera::routing route = tessera::routing::direct;
  int reps = 3;
  std::uint64_t seed = 1;
};

[[noreturn]] void usage(int code) {
  fmt::print(code == 0 ? stdout : stderr,
             "usage: bench_comm [--backend rma|progress|aggregator] [--updates N] [--naive-updates N] [--table N] "
             "[--buffer-bytes B] [--routing direct|two_hop] [--reps R] [--seed S]\n");
  std::exit(code);
}

options parse(int argc, char** argv) {
  options o;
  for (int k = 1; k < argc; ++k) {
    const std::string_view arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) usage(2);
      return argv[++k];
    };
    if (arg == "--backend") o.backend = value();
    else if (arg == "--updates") o.updates = std::stoull(value());
    else if (arg == "--naive-updates") o.naive_updates = std::stoull(value());
    else if (arg == "--table") o.table = std::clamp<std::size_t>(std::stoull(value()), 1, 0xffffffffu);  // pick's range
    else if (arg == "--buffer-bytes") o.buffer_bytes = std::stoull(value());
    else if (arg == "--routing") {
      const auto r = value();
      if (r != "direct" && r != "two_hop") usage(2);
      o.route = r == "direct" ? tessera::routing::direct : tessera::routing::two_hop;
    } else if (arg == "--reps") o.reps = std::max(1, std::stoi(value()));
    else if (arg == "--seed") o.seed = std::stoull(value());
    else if (arg == "--help" || arg == "-h") usage(0);
    else usage(2);
  }
  if (o.naive_updates == 0) o.naive_updates = std::max<std::size_t>(1, o.updates / 16);
  return o;
}

/// The random (rank, slot) of update `u` of this rank.
struct target {
  int rank;
  std::uint32_t slot;
};
// splitmix64: a random word that is a pure function of (seed, rank, u), so runs repeat exactly.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
// Rank and slot from the two halves of the word by multiply-shift (Lemire's range reduction):
// the two 64-bit divisions of `w % p` and `w % table` took 40% of an aggregated update's time,
// a cost of the generator that every method paid and none measures.
target pick(const options& o, int me, int p, std::size_t u) {
  const auto w = mix(mix(mix(o.seed) ^ static_cast<std::uint64_t>(me)) ^ u);
  return {static_cast<int>(((w >> 32) * static_cast<std::uint64_t>(p)) >> 32),
          static_cast<std::uint32_t>(((w & 0xffffffffu) * static_cast<std::uint64_t>(o.table)) >> 32)};
}

struct measurement {
  std::string op, method, backend;
  std::size_t updates = 0;
  double seconds = 0;
  double checksum = 0;
  std::size_t records_per_buffer = 0;  ///< of the records sent first; 0 where not aggregated
  std::size_t message_bound = 0;       ///< n / records per buffer (+ the same for replies) + P; 0: none
};

void report(const tessera::communicator& comm, const options& o, const measurement& m,
            const tessera::traffic_summary& t) {
  const double rss = tessera::bench::peak_rss_mb(comm);
  const int p = comm.size();
  const auto total_updates = static_cast<double>(m.updates) * p;
  const std::string bound = m.message_bound == 0 ? "null" : fmt::format("{}", m.message_bound);
  if (comm.rank() == 0)
    fmt::print("{{\"bench\": \"comm\", \"op\": \"{}\", \"method\": \"{}\", \"matrix\": \"none\", \"np\": {}, "
               "\"backend\": \"{}\", \"routing\": \"{}\", \"buffer_bytes\": {}, \"updates_per_rank\": {}, "
               "\"table_per_rank\": {}, \"seconds\": {:.6f}, \"reps\": {}, \"updates_per_second\": {:.4g}, "
               "\"checksum\": {:.10g}, \"messages_sent\": {}, \"bytes_sent\": {}, \"max_messages_per_rank\": {}, "
               "\"records_per_buffer\": {}, \"message_bound_per_rank\": {}, \"peak_rss_mb\": {:.1f}}}\n",
               m.op, m.method, p, m.backend, o.route == tessera::routing::direct ? "direct" : "two_hop",
               o.buffer_bytes, m.updates, o.table, m.seconds, o.reps, total_updates / m.seconds, m.checksum,
               t.total.messages, t.total.bytes, t.max_per_rank.messages, m.records_per_buffer, bound, rss);
}

/// Time `run` (median of reps), then count one more run's traffic in a fresh scope.
template <class F>
std::pair<double, tessera::traffic_summary> timed(const tessera::communicator& comm, const options& o,
                                                  const std::string& scope, F&& run) {
  const double seconds = tessera::bench::median_seconds(comm, o.reps, run);
  {
    tessera::stats_scope counting(comm, scope);
    comm.barrier();
    run();
  }
  return {seconds, tessera::reduce_traffic(comm, scope)};
}

template <class Backend>
void run_backend(const tessera::communicator& comm, const options& o) {
  typename Backend::options backend_options;
  backend_options.messaging.buffer_bytes = o.buffer_bytes;
  backend_options.messaging.route = o.route;
  typename Backend::context ctx(comm, backend_options);
  const int p = comm.size(), me = comm.rank();
  const std::string name(Backend::name());
  const std::size_t frame = ctx.messages().frame_header_bytes();
  auto per_buffer = [&](std::size_t record) { return std::max<std::size_t>(1, o.buffer_bytes / (frame + record)); };

  // ---- histogram by mailbox ----
  std::vector<std::int64_t> counts(o.table, 0);
  {
    tessera::mailbox<std::uint32_t> box(ctx.messages(), [&](int, std::uint32_t slot) { ++counts[slot]; });
    auto run = [&] {
      for (std::size_t u = 0; u < o.updates; ++u) {
        const auto t = pick(o, me, p, u);
        box.push(t.rank, t.slot);
      }
      box.drain();
    };
    const auto [seconds, traffic] = timed(comm, o, "histogram-mailbox-" + name, run);
    double local = 0;
    for (auto c : counts) local += static_cast<double>(c);
    // The bound on messages per rank: n / (records per buffer) + P.
    const std::size_t bound = o.updates / per_buffer(4) + static_cast<std::size_t>(p);
    report(comm, o, {"histogram", "mailbox", name, o.updates, seconds, comm.sum(local), per_buffer(4), bound}, traffic);
  }

  // Per-element one-sided traffic is as slow as the baseline except on the
  // aggregator, so it runs the baseline's count there.
  const std::size_t one_sided_updates = std::is_same_v<Backend, tessera::aggregator> ? o.updates : o.naive_updates;

  // ---- histogram by one-sided accumulate ----
  auto bins = ctx.template allocate<std::int64_t>(o.table);
  std::fill(bins.local().begin(), bins.local().end(), 0);
  ctx.barrier();
  {
    const std::int64_t one = 1;
    auto run = [&] {
      for (std::size_t u = 0; u < one_sided_updates; ++u) {
        const auto t = pick(o, me, p, u);
        ctx.accumulate(bins, t.rank, t.slot, std::span<const std::int64_t>(&one, 1));
      }
      ctx.barrier();
    };
    const auto [seconds, traffic] = timed(comm, o, "histogram-onesided-" + name, run);
    double local = 0;
    for (auto c : bins.local()) local += static_cast<double>(c);
    // An accumulate request: 56-byte header and the 8-byte addend.
    const std::size_t records = std::is_same_v<Backend, tessera::aggregator> ? per_buffer(64) : 0;
    report(comm, o, {"histogram", "onesided", name, one_sided_updates, seconds, comm.sum(local), records,
                     records == 0 ? 0 : one_sided_updates / records + static_cast<std::size_t>(p)},
           traffic);
  }

  // ---- index-gather by request and reply records ----
  auto table = ctx.template allocate<double>(o.table);
  for (std::size_t i = 0; i < o.table; ++i) table.local()[i] = me * 1e6 + static_cast<double>(i);
  ctx.barrier();
  std::vector<double> gathered(o.updates);
  {
    struct ask {
      std::uint32_t slot;
      std::uint32_t index;
    };
    struct answer {
      double value;
      std::uint32_t index;
    };
    tessera::mailbox<answer> answers(ctx.messages(), [&](int, const answer& a) { gathered[a.index] = a.value; });
    tessera::mailbox<ask> asks(ctx.messages(),
                               [&](int origin, const ask& q) { answers.push(origin, {table.local()[q.slot], q.index}); });
    auto run = [&] {
      for (std::size_t u = 0; u < o.updates; ++u) {
        const auto t = pick(o, me, p, u);
        asks.push(t.rank, {t.slot, static_cast<std::uint32_t>(u)});
      }
      asks.drain();
    };
    const auto [seconds, traffic] = timed(comm, o, "ig-mailbox-" + name, run);
    double local = 0;
    for (double v : gathered) local += v;
    // Requests out and replies back: each rank sends about n of each.
    const std::size_t bound = o.updates / per_buffer(sizeof(ask)) + o.updates / per_buffer(sizeof(answer)) +
                              2 * static_cast<std::size_t>(p);
    report(comm, o, {"index_gather", "mailbox", name, o.updates, seconds, comm.sum(local), per_buffer(sizeof(ask)),
                     bound},
           traffic);
  }

  // ---- index-gather by one-sided gets, 1024 in flight ----
  {
    std::vector<tessera::request> pending;
    auto run = [&] {
      for (std::size_t u = 0; u < one_sided_updates; ++u) {
        const auto t = pick(o, me, p, u);
        pending.push_back(ctx.get_nb(table, t.rank, t.slot, std::span<double>(&gathered[u], 1)));
        if (pending.size() == 1024) {
          tessera::wait_all(pending);
          pending.clear();
        }
      }
      tessera::wait_all(pending);
      pending.clear();
      ctx.barrier();
    };
    const auto [seconds, traffic] = timed(comm, o, "ig-onesided-" + name, run);
    double local = 0;
    for (double v : gathered) local += v;
    // Waiting for each window of 1024 gets sends partial buffers, so no buffer bound applies.
    report(comm, o, {"index_gather", "onesided", name, one_sided_updates, seconds, comm.sum(local),
                     std::is_same_v<Backend, tessera::aggregator> ? per_buffer(56) : 0, 0},
           traffic);
  }
}

// The baseline: plain MPI RMA, one MPI_Accumulate or MPI_Get per element.
// Two windows: MPI_Win_allocate ("naive_allocate": on one node Open MPI serves it
// from shared memory with load/store atomics, far cheaper than any network) and
// MPI_Win_create over private memory ("naive": each call goes through the
// transport, as between nodes).
void run_naive(const tessera::communicator& comm, const options& o, bool allocated) {
  const int p = comm.size(), me = comm.rank();
  if (p == 1) return;  // some MPI builds cannot make a window on one process
  const std::string method = allocated ? "naive_allocate" : "naive";
  MPI_Win window;
  std::int64_t* bins = nullptr;
  std::vector<std::int64_t> private_memory;
  if (allocated) {
    MPI_Win_allocate(static_cast<MPI_Aint>(o.table * sizeof(std::int64_t)), sizeof(std::int64_t), MPI_INFO_NULL,
                     comm.get(), &bins, &window);
  } else {
    private_memory.resize(o.table);
    bins = private_memory.data();
    MPI_Win_create(bins, static_cast<MPI_Aint>(o.table * sizeof(std::int64_t)), sizeof(std::int64_t), MPI_INFO_NULL,
                   comm.get(), &window);
  }
  std::fill(bins, bins + o.table, 0);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
  comm.barrier();
  std::uint64_t remote = 0;
  for (std::size_t u = 0; u < o.naive_updates; ++u) remote += pick(o, me, p, u).rank != me ? 1 : 0;
  const std::int64_t one = 1;
  const double hist_seconds = tessera::bench::median_seconds(comm, o.reps, [&] {
    for (std::size_t u = 0; u < o.naive_updates; ++u) {
      const auto t = pick(o, me, p, u);
      MPI_Accumulate(&one, 1, MPI_INT64_T, t.rank, t.slot, 1, MPI_INT64_T, MPI_SUM, window);
    }
    MPI_Win_flush_all(window);
    comm.barrier();
  });
  MPI_Win_sync(window);
  double local = 0;
  for (std::size_t i = 0; i < o.table; ++i) local += static_cast<double>(bins[i]);
  const auto counted = tessera::reduce_traffic(comm, tessera::traffic{remote, remote * sizeof(std::int64_t)});
  report(comm, o, {"histogram", method, "mpi", o.naive_updates, hist_seconds, comm.sum(local), 0, 0}, counted);

  for (std::size_t i = 0; i < o.table; ++i) reinterpret_cast<double*>(bins)[i] = me * 1e6 + static_cast<double>(i);
  MPI_Win_sync(window);
  comm.barrier();
  std::vector<double> gathered(o.naive_updates);
  const double ig_seconds = tessera::bench::median_seconds(comm, o.reps, [&] {
    for (std::size_t u = 0; u < o.naive_updates; ++u) {
      const auto t = pick(o, me, p, u);
      MPI_Get(&gathered[u], 1, MPI_DOUBLE, t.rank, t.slot, 1, MPI_DOUBLE, window);
      if (u % 1024 == 1023) MPI_Win_flush_all(window);
    }
    MPI_Win_flush_all(window);
    comm.barrier();
  });
  local = 0;
  for (double v : gathered) local += v;
  const auto fetched = tessera::reduce_traffic(comm, tessera::traffic{remote, remote * sizeof(double)});
  report(comm, o, {"index_gather", method, "mpi", o.naive_updates, ig_seconds, comm.sum(local), 0, 0}, fetched);
  MPI_Win_unlock_all(window);
  MPI_Win_free(&window);
}

}  // namespace

int main(int argc, char** argv) {
  const auto o = parse(argc, argv);
  tessera::environment env(argc, argv, tessera::bench::environment_for(o.backend));
  const auto& comm = env.world();
  const int code = tessera::bench::with_backend(o.backend, [&]<class Backend>() { run_backend<Backend>(comm, o); });
  if (code == 0) {
    run_naive(comm, o, false);
    run_naive(comm, o, true);
  }
  return code;
}
