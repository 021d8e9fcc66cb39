// The backend conformance suite (tessera/testing/backend_conformance.hpp, the checks a user runs
// on their own backend) on mpi_rma, aggregator (direct and 2-hop, 1-record and huge buffers),
// progress_rank (when the test runs with progress ranks: see tests/CMakeLists.txt), the tracing
// backend of examples/custom_policies, and a backend built from the primitives; then the traffic
// each built-in counts, exactly as it documents it.
#include "test_support.hpp"

#include "../../examples/custom_policies/tracing_backend.hpp"

#include <tessera/testing/backend_conformance.hpp>

#include <algorithm>
#include <numeric>
#include <set>

namespace backends_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

// A scope name used once per call, so counts never mix between checks.
std::string fresh_scope(const char* what) {
  static int serial = 0;
  return fmt::format("{}-{}", what, serial++);
}

// Traffic of contiguous and strided gets from every other rank, exactly as each backend documents it.
template <class Ctx>
void check_get_counters(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  auto seg = ctx.template allocate<double>(63);
  ctx.barrier();
  const std::string scope = fresh_scope("gets");
  const strided_region sub{8, 5, 4, 7};
  std::vector<double> contiguous(10), packed(sub.elements());
  {
    stats_scope counting(comm, scope);
    ctx.barrier();
    for (int t = 0; t < p; ++t) {
      if (t == me) continue;
      ctx.get(seg, t, 3, std::span<double>(contiguous));
      ctx.get_strided(seg, t, sub, std::span<double>(packed));
    }
    ctx.barrier();
  }
  const traffic mine = comm.stats().of(scope);
  const std::uint64_t data = (10 + sub.elements()) * sizeof(double);
  if constexpr (std::is_same_v<Ctx, mpi_rma::context>) {
    CHECK(mine.messages == 2 * static_cast<std::uint64_t>(p - 1));
    CHECK(mine.bytes == static_cast<std::uint64_t>(p - 1) * data);
  } else if constexpr (std::is_same_v<Ctx, progress_rank::context>) {
    std::uint64_t remote = 0;
    for (int t = 0; t < p; ++t) remote += t != me && !ctx.on_my_node(t) ? 1 : 0;
    CHECK(mine.messages == 2 * remote);
    CHECK(mine.bytes == remote * (2 * progress_rank::header_bytes + data));
  } else {
    // Requests (frame + 56-byte header) out, replies (frame + 8-byte id + data) back, times the hops each takes.
    const auto& transport = ctx.messages();
    const std::uint64_t frame = transport.frame_header_bytes();
    std::uint64_t expected_bytes = 0, frames = 0;
    for (int o = 0; o < p; ++o)
      for (int t = 0; t < p; ++t) {
        if (o == t) continue;
        const auto there = static_cast<std::uint64_t>(conveyor::hops(o, t, p, transport.options().route));
        const auto back = static_cast<std::uint64_t>(conveyor::hops(t, o, p, transport.options().route));
        expected_bytes += there * 2 * (frame + 56) + back * (2 * (frame + 8) + data);
        frames += 2 * (there + back);
      }
    const auto total = reduce_traffic(comm, mine).total;
    INFO("messages " << total.messages << " of at most " << frames << " frames");
    CHECK(total.bytes == expected_bytes);
    CHECK(total.messages <= frames);
    CHECK(total.messages >= (p > 1 ? 1u : 0u));
  }
}

// Records of a mailbox: none lost, none duplicated, and exactly the messages and bytes the buffer size implies.
template <class Ctx>
void check_mailbox_traffic(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  struct tagged {
    std::int32_t origin;
    std::int32_t sequence;
  };
  constexpr int per_peer = 257;
  std::vector<int> seen(static_cast<std::size_t>(p * per_peer), 0);
  auto& transport = ctx.messages();
  mailbox<tagged> box(transport, [&](int origin, const tagged& t) {
    CHECK(t.origin == origin);
    ++seen[static_cast<std::size_t>(t.origin * per_peer + t.sequence)];
  });
  const std::string scope = fresh_scope("mailbox");
  {
    // Open the scope on every rank before anyone sends: forwards and replies count where they are sent.
    stats_scope counting(comm, scope);
    ctx.barrier();
    for (int s = 0; s < per_peer; ++s)
      for (int d = 0; d < p; ++d) box.push((d + me) % p, tagged{me, s});
    box.drain();
  }
  for (int v : seen) REQUIRE(v == 1);
  const traffic mine = comm.stats().of(scope);
  const std::uint64_t frame = transport.frame_header_bytes() + sizeof(tagged);
  const auto route = transport.options().route;
  std::uint64_t expected_total = 0;
  for (int o = 0; o < p; ++o)
    for (int d = 0; d < p; ++d) expected_total += frame * per_peer * static_cast<std::uint64_t>(conveyor::hops(o, d, p, route));
  CHECK(reduce_traffic(comm, mine).total.bytes == expected_total);
  if (route == routing::direct) {
    const std::uint64_t per_buffer = std::max<std::uint64_t>(1, transport.options().buffer_bytes / frame);
    INFO("records per buffer " << per_buffer);
    CHECK(mine.messages == static_cast<std::uint64_t>(p - 1) * ((per_peer + per_buffer - 1) / per_buffer));
  } else {
    CHECK(transport.peers_contacted() <= 2 * (conveyor::grid_columns(p) - 1));
  }
}

// The public suite (tessera/testing/backend_conformance.hpp), then what each built-in counts.
template <class Ctx>
void run_conformance(Ctx& ctx) {
  CHECK_NOTHROW(testing::check_backend(ctx));
  check_get_counters(ctx);
  check_mailbox_traffic(ctx);
}

aggregator::options aggregation(std::size_t buffer_bytes, routing route) {
  aggregator::options o;
  o.messaging.buffer_bytes = buffer_bytes;
  o.messaging.route = route;
  return o;
}

}  // namespace

TEST_CASE("conformance: mpi_rma") {
  mpi_rma::context ctx(test::world());
  run_conformance(ctx);
}

TEST_CASE("conformance: mpi_rma with 1-record mailbox buffers") {
  mpi_rma::options o;
  o.messaging.buffer_bytes = 1;
  mpi_rma::context ctx(test::world(), o);
  CHECK_NOTHROW(testing::check_mailboxes(ctx));
  check_mailbox_traffic(ctx);
}

TEST_CASE("conformance: aggregator, direct, default buffers") {
  aggregator::context ctx(test::world());
  run_conformance(ctx);
}

TEST_CASE("conformance: aggregator, direct, 1-record buffers") {
  aggregator::context ctx(test::world(), aggregation(1, routing::direct));
  run_conformance(ctx);
}

TEST_CASE("conformance: aggregator, 2-hop, 1-record buffers") {
  aggregator::context ctx(test::world(), aggregation(1, routing::two_hop));
  run_conformance(ctx);
}

TEST_CASE("conformance: aggregator, 2-hop, huge buffers") {
  aggregator::context ctx(test::world(), aggregation(std::size_t{64} << 20, routing::two_hop));
  run_conformance(ctx);
}

TEST_CASE("conformance: progress_rank") {
  if (!test::progress_ranks_running()) {
    // Without progress ranks the backend refuses, on every rank, with a message that says how to start them.
    CHECK_THROWS_WITH_AS(progress_rank::context(test::world()), doctest::Contains("no progress ranks"), error);
    return;
  }
  progress_rank::context ctx(test::world());
  // CMake runs this with the real node (1) and with 2 emulated nodes.
  const char* per_node = std::getenv("TESSERA_RANKS_PER_NODE");
  CHECK(ctx.num_nodes() == (per_node != nullptr && std::atoi(per_node) > 0 ? 2 : 1));
  run_conformance(ctx);
  progress_rank::options small_inline;
  small_inline.inline_bytes = 0;  // every payload in its own message
  progress_rank::context separate(test::world(), small_inline);
  CHECK_NOTHROW(testing::check_get_put(separate));
  CHECK_NOTHROW(testing::check_strided(separate));
  CHECK_NOTHROW(testing::check_accumulate(separate));
}

TEST_CASE("two_hop routing: every rank talks to at most 2 sqrt(P) peers, every route at most 2 hops") {
  for (int size : {1, 2, 3, 4, 5, 7, 9, 10, 16, 17, 64, 100}) {
    const int columns = conveyor::grid_columns(size);
    for (int o = 0; o < size; ++o) {
      std::set<int> peers;
      for (int d = 0; d < size; ++d) {
        const int first = conveyor::next_hop(o, d, size, routing::two_hop);
        REQUIRE(first >= 0);
        REQUIRE(first < size);
        if (first != o) peers.insert(first);
        const int second = conveyor::next_hop(first, d, size, routing::two_hop);
        REQUIRE((first == d || second == d));
      }
      CHECK(static_cast<int>(peers.size()) <= 2 * columns);
    }
  }
}

TEST_CASE("a progress_rank context on a one-rank communicator works locally, without a server" * doctest::skip(!test::progress_ranks_requested())) {
  const auto self = communicator::duplicate(MPI_COMM_SELF);
  progress_rank::context ctx(self);
  auto seg = ctx.allocate<double>(8);
  const std::vector<double> values{1, 2, 3, 4, 5, 6, 7, 8};
  ctx.put(seg, 0, 0, std::span<const double>(values));
  ctx.accumulate(seg, 0, 2, std::span<const double>(values.data(), 2));
  std::vector<double> back(8);
  ctx.get(seg, 0, 0, std::span<double>(back));
  CHECK(back == std::vector<double>{1, 2, 4, 6, 5, 6, 7, 8});
  auto counter = ctx.allocate<std::int64_t>(1);
  CHECK(ctx.fetch_add(counter, 0, 0, 5) == 0);
  CHECK(ctx.fetch_add(counter, 0, 0, 1) == 5);
  ctx.barrier();
  CHECK(self.stats().total().messages == 0);
}

// [primitives backend]
// A backend written from the primitives alone: one_sided_api<context> builds the full API
// (argument checks, blocking and contiguous forms) on top of them. This one forwards to
// mpi_rma's primitives, and can be told to get one thing wrong, to show that the conformance
// suite catches it.
enum class flaw { none, accumulate_drops_last_element, get_ignores_local_stride };

struct forwarding {
  static constexpr std::string_view name() noexcept { return "forwarding"; }
  struct options {
    flaw bug = flaw::none;
  };
  class context : public tessera::one_sided_api<context> {
   public:
    context(const tessera::communicator& comm, options o) : inner_(comm), bug_(o.bug) {}

    [[nodiscard]] const tessera::communicator& comm() const { return inner_.comm(); }
    tessera::conveyor& messages() { return inner_.messages(); }
    template <class T>
    tessera::segment<T> allocate(std::size_t n) {
      return inner_.allocate<T>(n);
    }
    template <class T>
    tessera::segment<T> expose(std::span<T> memory) {
      return inner_.expose(memory);
    }

    tessera::request start_get(const tessera::segment_state& s, int rank, const tessera::strided_region& r,
                               std::byte* local, std::size_t local_stride) {
      if (bug_ == flaw::get_ignores_local_stride) local_stride = r.block_length;
      return inner_.start_get(s, rank, r, local, local_stride);
    }
    tessera::request start_put(const tessera::segment_state& s, int rank, const tessera::strided_region& r,
                               const std::byte* local, std::size_t local_stride) {
      return inner_.start_put(s, rank, r, local, local_stride);
    }
    tessera::request start_accumulate(const tessera::segment_state& s, int rank, tessera::strided_region r,
                                      const std::byte* local, std::size_t local_stride, tessera::scalar_code scalar) {
      if (bug_ == flaw::accumulate_drops_last_element && r.count == 1 && r.block_length > 1) --r.block_length;
      return inner_.start_accumulate(s, rank, r, local, local_stride, scalar);
    }
    tessera::request start_fetch_add(const tessera::segment_state& s, int rank, std::size_t offset,
                                     std::int64_t value, std::int64_t* old) {
      return inner_.start_fetch_add(s, rank, offset, value, old);
    }
    void flush(int rank) { inner_.flush(rank); }
    void flush_all() { inner_.flush_all(); }
    void barrier() { inner_.barrier(); }

   private:
    tessera::mpi_rma::context inner_;
    flaw bug_;
  };

  template <class T>
  tessera::buckets<T> exchange(const tessera::communicator& comm, const tessera::buckets<T>& outgoing) const {
    return tessera::personalised_exchange(comm, outgoing);
  }
};
static_assert(tessera::one_sided_primitives<forwarding::context>);
static_assert(tessera::communication_backend<forwarding>);
// [primitives backend]

TEST_CASE("conformance: a backend built from the primitives passes the public suite") {
  // [run the suite]
  forwarding::context ctx(test::world(), {});
  tessera::testing::check_backend(ctx);
  // [run the suite]
}

TEST_CASE("conformance: the public suite names the check a flawed backend fails, on every rank") {
  auto failure_of = [](flaw bug, auto&& check) -> std::string {
    forwarding::context ctx(test::world(), {bug});
    try {
      check(ctx);
    } catch (const error& e) {
      return e.message();
    }
    return "no failure";
  };
  const auto accumulate = failure_of(flaw::accumulate_drops_last_element,
                                     [](auto& ctx) { testing::check_accumulate(ctx); });
  CHECK_MESSAGE(accumulate.find("check 'accumulate' failed") != std::string::npos, accumulate);
  CHECK_MESSAGE(accumulate.find("element 15") != std::string::npos, accumulate);
  const auto strided = failure_of(flaw::get_ignores_local_stride, [](auto& ctx) { testing::check_strided(ctx); });
  CHECK_MESSAGE(strided.find("check 'strided' failed") != std::string::npos, strided);
  CHECK_MESSAGE(strided.find("local stride 6") != std::string::npos, strided);
  // The flaws leave the other checks passing: each check tests its own operation.
  CHECK(failure_of(flaw::accumulate_drops_last_element, [](auto& ctx) { testing::check_get_put(ctx); }) ==
        "no failure");
}

TEST_CASE("conformance: the tracing backend of examples/custom_policies, over mpi_rma and the aggregator") {
  custom::tracing<mpi_rma>::context over_rma(test::world(), {});
  CHECK_NOTHROW(testing::check_backend(over_rma));
  custom::tracing<aggregator>::context over_aggregator(test::world(), {});
  CHECK_NOTHROW(testing::check_backend(over_aggregator));
}

TEST_CASE_TEMPLATE("planned_exchange: values along a plan and back along its inverse, sizes not agreed again", B,
                   mpi_rma, aggregator) {
  const auto& comm = test::world();
  const int me = comm.rank(), ranks = comm.size();
  // Rank r sends (r + s) % 3 records to rank s, each naming (sender, receiver, position).
  std::vector<std::size_t> counts(static_cast<std::size_t>(ranks));
  for (int s = 0; s < ranks; ++s) counts[static_cast<std::size_t>(s)] = static_cast<std::size_t>((me + s) % 3);
  std::vector<std::size_t> incoming(static_cast<std::size_t>(ranks));
  for (int s = 0; s < ranks; ++s) incoming[static_cast<std::size_t>(s)] = static_cast<std::size_t>((s + me) % 3);
  const planned_exchange plan(planned_exchange::offsets_of(counts), planned_exchange::offsets_of(incoming));
  auto out = plan.send_buffer<std::int64_t>();
  for (int s = 0; s < ranks; ++s)
    for (std::size_t k = 0; k < out.bucket(s).size(); ++k) out.bucket(s)[k] = 10000 * me + 100 * s + static_cast<std::int64_t>(k);
  comm.stats().reset();
  const auto arrived = [&] {
    const stats_scope scope(comm, "planned");
    return exchange_planned(B{}, comm, out, plan);
  }();
  for (int r = 0; r < ranks; ++r) {
    REQUIRE(arrived.bucket(r).size() == incoming[static_cast<std::size_t>(r)]);
    for (std::size_t k = 0; k < arrived.bucket(r).size(); ++k)
      CHECK(arrived.bucket(r)[k] == 10000 * r + 100 * me + static_cast<std::int64_t>(k));
  }
  // The payload only, counted by the sender: no size all-to-all.
  std::uint64_t sent_remote = 0;
  for (int s = 0; s < ranks; ++s)
    if (s != me) sent_remote += counts[static_cast<std::size_t>(s)];
  CHECK(comm.stats().of("planned").bytes == 8 * sent_remote);
  // Back along the inverse, each record doubled in width (two values per record sent).
  const auto back_plan = plan.inverse().scaled(2);
  CHECK(back_plan.sends() == 2 * plan.receives());
  CHECK(back_plan.receives() == 2 * plan.sends());
  auto back = back_plan.send_buffer<std::int64_t>();
  for (std::size_t k = 0; k < arrived.data.size(); ++k) back.data[2 * k] = back.data[2 * k + 1] = arrived.data[k];
  const auto returned = exchange_planned(B{}, comm, back, back_plan);
  REQUIRE(returned.data.size() == 2 * out.data.size());
  for (std::size_t k = 0; k < out.data.size(); ++k) {
    CHECK(returned.data[2 * k] == out.data[k]);
    CHECK(returned.data[2 * k + 1] == out.data[k]);
  }
}

}  // namespace backends_tests
