// The backend conformance suite: the same checks, every result compared exactly,
// on mpi_rma, aggregator (direct and 2-hop, 1-record and huge buffers) and
// progress_rank (when the test runs with progress ranks: see tests/CMakeLists.txt).
#include "test_support.hpp"

#include <tessera/generators/detail/counter_rng.hpp>

#include <algorithm>
#include <numeric>
#include <set>

using namespace tessera;
using tessera::detail::random_word;

namespace {

// A scope name used once per call, so counts never mix between checks.
std::string fresh_scope(const char* what) {
  static int serial = 0;
  return fmt::format("{}-{}", what, serial++);
}

double code(int rank, std::size_t i) { return rank * 1000.0 + static_cast<double>(i) + 0.5; }
std::size_t extent_of(int rank) { return 40 + 13 * static_cast<std::size_t>(rank); }

template <class Ctx>
void check_get_put(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  auto seg = ctx.template allocate<double>(extent_of(me));
  for (std::size_t i = 0; i < seg.local().size(); ++i) seg.local()[i] = code(me, i);
  // A user's own memory, exposed (progress_rank copies it into shared memory).
  std::vector<double> mine(extent_of(me));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = -code(me, i);
  auto exposed = ctx.expose(std::span<double>(mine));
  ctx.barrier();

  constexpr int gets = 120;
  std::vector<std::vector<double>> got(gets);
  std::vector<std::tuple<int, std::size_t, bool>> where(gets);
  std::vector<request> pending;
  for (int k = 0; k < gets; ++k) {
    const auto w = random_word(7, static_cast<std::uint64_t>(me), static_cast<std::uint64_t>(k));
    const int t = static_cast<int>(w % static_cast<std::uint64_t>(p));
    const std::size_t len = 1 + (w >> 8) % extent_of(t);
    const std::size_t off = (w >> 24) % (extent_of(t) - len + 1);
    const bool from_exposed = (w >> 40) % 3 == 0;
    got[static_cast<std::size_t>(k)].assign(len, 0.0);
    where[static_cast<std::size_t>(k)] = {t, off, from_exposed};
    auto& target = from_exposed ? exposed : seg;
    if (k % 2) pending.push_back(ctx.get_nb(target, t, off, std::span<double>(got[static_cast<std::size_t>(k)])));
    else ctx.get(target, t, off, std::span<double>(got[static_cast<std::size_t>(k)]));
  }
  wait_all(pending);
  for (int k = 0; k < gets; ++k) {
    const auto [t, off, from_exposed] = where[static_cast<std::size_t>(k)];
    for (std::size_t i = 0; i < got[static_cast<std::size_t>(k)].size(); ++i)
      REQUIRE(got[static_cast<std::size_t>(k)][i] == (from_exposed ? -1.0 : 1.0) * code(t, off + i));
  }

  // Puts: rank o writes its own block of every rank's mailbox segment.
  constexpr std::size_t block = 5;
  auto board = ctx.template allocate<double>(block * static_cast<std::size_t>(p));
  std::fill(board.local().begin(), board.local().end(), -1.0);
  ctx.barrier();
  std::vector<std::vector<double>> sources(static_cast<std::size_t>(p));
  pending.clear();
  for (int t = 0; t < p; ++t) {
    auto& src = sources[static_cast<std::size_t>(t)];
    for (std::size_t i = 0; i < block; ++i) src.push_back(code(me, 100 * static_cast<std::size_t>(t) + i));
    const std::size_t at = static_cast<std::size_t>(me) * block;
    if (t % 2) pending.push_back(ctx.put_nb(board, t, at, std::span<const double>(src)));
    else {
      ctx.put(board, t, at, std::span<const double>(src));
      ctx.flush(t);
    }
  }
  wait_all(pending);
  ctx.barrier();
  for (int o = 0; o < p; ++o)
    for (std::size_t i = 0; i < block; ++i)
      REQUIRE(board.local()[static_cast<std::size_t>(o) * block + i] == code(o, 100 * static_cast<std::size_t>(me) + i));
  ctx.barrier();
}

template <class Ctx>
void check_strided(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  constexpr std::size_t rows = 9, ld = 7;
  auto matrix = ctx.template allocate<double>(rows * ld);
  for (std::size_t i = 0; i < rows * ld; ++i) matrix.local()[i] = code(me, i);
  auto target = ctx.template allocate<double>(rows * ld);
  std::fill(target.local().begin(), target.local().end(), 0.0);
  ctx.barrier();

  const int from = (me + 1) % p;
  const strided_region sub{2 * ld + 1, 5, 4, ld};  // rows 2..6, columns 1..4
  std::vector<double> packed(sub.elements());
  ctx.get_strided(matrix, from, sub, std::span<double>(packed));
  for (std::size_t b = 0; b < 5; ++b)
    for (std::size_t c = 0; c < 4; ++c) REQUIRE(packed[b * 4 + c] == code(from, (2 + b) * ld + 1 + c));

  std::vector<double> spaced(4 * 6 + 4, -1.0);  // local leading dimension 6
  auto pending = ctx.get_strided_nb(matrix, from, sub, std::span<double>(spaced), 6);
  pending.wait();
  for (std::size_t b = 0; b < 5; ++b)
    for (std::size_t c = 0; c < 6 && b * 6 + c < spaced.size(); ++c)
      REQUIRE(spaced[b * 6 + c] == (c < 4 ? code(from, (2 + b) * ld + 1 + c) : -1.0));

  // Put a 3x4 block (rows 1..3, columns 2..5) into the next rank's target, from a local layout with ld 5.
  const int to = (me + 1) % p;
  const strided_region dest{1 * ld + 2, 3, 4, ld};
  std::vector<double> source(2 * 5 + 4);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = code(me, 500 + i);
  ctx.put_strided(target, to, dest, std::span<const double>(source), 5);
  ctx.barrier();
  const int writer = (me - 1 + p) % p;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < ld; ++c) {
      const bool inside = r >= 1 && r <= 3 && c >= 2 && c <= 5;
      const double expected = inside ? code(writer, 500 + (r - 1) * 5 + (c - 2)) : 0.0;
      REQUIRE(target.local()[r * ld + c] == expected);
    }
  ctx.barrier();
}

template <class Ctx>
void check_accumulate(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  constexpr std::size_t n = 16;
  auto integers = ctx.template allocate<std::int64_t>(n);
  auto reals = ctx.template allocate<double>(n);
  std::fill(integers.local().begin(), integers.local().end(), 0);
  std::fill(reals.local().begin(), reals.local().end(), 0.0);
  ctx.barrier();
  const std::vector<std::int64_t> ones(n, me + 1);
  const std::vector<double> real_ones(n, me + 1.0);
  std::vector<request> pending;
  for (int rep = 0; rep < 3; ++rep)
    for (int t = 0; t < p; ++t) {
      ctx.accumulate(integers, t, 0, std::span<const std::int64_t>(ones));
      pending.push_back(ctx.accumulate_nb(reals, t, 0, std::span<const double>(real_ones)));
    }
  // Every second element once more, as one strided call.
  for (int t = 0; t < p; ++t)
    ctx.accumulate_strided(integers, t, strided_region{0, n / 2, 1, 2}, std::span<const std::int64_t>(ones.data(), n / 2));
  wait_all(pending);
  ctx.barrier();
  const std::int64_t s = static_cast<std::int64_t>(p) * (p + 1) / 2;
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(integers.local()[i] == 3 * s + (i % 2 == 0 ? s : 0));
    REQUIRE(reals.local()[i] == static_cast<double>(3 * s));
  }
  ctx.barrier();
}

template <class Ctx>
void check_fetch_add(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  // One counter on rank 0, hammered by everybody: the old values are 0..P*k-1, each once.
  auto counter = ctx.template allocate<std::int64_t>(1);
  counter.local()[0] = 0;
  constexpr int k = 40;
  ctx.barrier();
  std::vector<std::int64_t> olds(k);
  for (int i = 0; i < k; ++i) {
    if (i % 2) olds[static_cast<std::size_t>(i)] = ctx.fetch_add(counter, 0, 0, 1);
    else ctx.fetch_add_nb(counter, 0, 0, 1, olds[static_cast<std::size_t>(i)]).wait();
  }
  ctx.barrier();  // before plain MPI: the aggregator's targets serve only inside tessera calls
  std::vector<std::int64_t> all(static_cast<std::size_t>(k * p));
  TESSERA_MPI(MPI_Allgather(olds.data(), k, MPI_INT64_T, all.data(), k, MPI_INT64_T, comm.get()));
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) REQUIRE(all[i] == static_cast<std::int64_t>(i));
  ctx.barrier();
  if (me == 0) REQUIRE(counter.local()[0] == static_cast<std::int64_t>(k * p));

  // The bale histogram: random +1s everywhere, checked against a replay of every rank's stream.
  constexpr std::size_t bins = 32;
  constexpr int updates = 300;
  auto histogram = ctx.template allocate<std::int64_t>(bins);
  std::fill(histogram.local().begin(), histogram.local().end(), 0);
  ctx.barrier();
  for (int u = 0; u < updates; ++u) {
    const auto w = random_word(11, static_cast<std::uint64_t>(me), static_cast<std::uint64_t>(u));
    (void)ctx.fetch_add(histogram, static_cast<int>(w % static_cast<std::uint64_t>(p)), (w >> 16) % bins, 1);
  }
  ctx.barrier();
  std::vector<std::int64_t> expected(bins, 0);
  for (int o = 0; o < p; ++o)
    for (int u = 0; u < updates; ++u) {
      const auto w = random_word(11, static_cast<std::uint64_t>(o), static_cast<std::uint64_t>(u));
      if (static_cast<int>(w % static_cast<std::uint64_t>(p)) == me) ++expected[(w >> 16) % bins];
    }
  for (std::size_t b = 0; b < bins; ++b) REQUIRE(histogram.local()[b] == expected[b]);
  ctx.barrier();
}

template <class Ctx>
void check_mailbox_histogram(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  constexpr std::uint32_t bins = 64;
  constexpr int updates = 2000;
  std::vector<std::int64_t> counts(bins, 0);
  mailbox<std::uint32_t> box(ctx.messages(), [&](int, std::uint32_t bin) { ++counts[bin]; });
  for (int u = 0; u < updates; ++u) {
    const auto w = random_word(13, static_cast<std::uint64_t>(me), static_cast<std::uint64_t>(u));
    box.push(static_cast<int>(w % static_cast<std::uint64_t>(p)), static_cast<std::uint32_t>((w >> 16) % bins));
  }
  box.drain();
  std::vector<std::int64_t> expected(bins, 0);
  for (int o = 0; o < p; ++o)
    for (int u = 0; u < updates; ++u) {
      const auto w = random_word(13, static_cast<std::uint64_t>(o), static_cast<std::uint64_t>(u));
      if (static_cast<int>(w % static_cast<std::uint64_t>(p)) == me) ++expected[(w >> 16) % bins];
    }
  REQUIRE(counts == expected);
}

// bale's index-gather: read random entries of a distributed table, one-sided and by request/reply records.
template <class Ctx>
void check_index_gather(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  auto table = ctx.template allocate<double>(extent_of(me));
  for (std::size_t i = 0; i < table.local().size(); ++i) table.local()[i] = code(me, i);
  std::vector<std::size_t> starts(static_cast<std::size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r) starts[static_cast<std::size_t>(r) + 1] = starts[static_cast<std::size_t>(r)] + extent_of(r);
  auto locate = [&](std::size_t g) {
    const int owner = static_cast<int>(std::upper_bound(starts.begin(), starts.end(), g) - starts.begin()) - 1;
    return std::pair<int, std::size_t>{owner, g - starts[static_cast<std::size_t>(owner)]};
  };
  ctx.barrier();
  constexpr int requests = 400;
  std::vector<std::size_t> wanted(requests);
  for (int k = 0; k < requests; ++k)
    wanted[static_cast<std::size_t>(k)] = random_word(17, static_cast<std::uint64_t>(me), static_cast<std::uint64_t>(k)) % starts.back();

  std::vector<double> one_sided(requests, 0.0);
  std::vector<request> pending;
  for (int k = 0; k < requests; ++k) {
    const auto [owner, local] = locate(wanted[static_cast<std::size_t>(k)]);
    pending.push_back(ctx.get_nb(table, owner, local, std::span<double>(&one_sided[static_cast<std::size_t>(k)], 1)));
  }
  wait_all(pending);

  struct ask {
    std::uint64_t local;
    std::int32_t slot;
  };
  struct answer {
    double value;
    std::int32_t slot;
  };
  std::vector<double> by_messages(requests, 0.0);
  int answered = 0;
  mailbox<answer> answers(ctx.messages(), [&](int, const answer& a) {
    by_messages[static_cast<std::size_t>(a.slot)] = a.value;
    ++answered;
  });
  mailbox<ask> asks(ctx.messages(), [&](int origin, const ask& q) {
    answers.push(origin, answer{table.local()[q.local], q.slot});  // a handler that sends: drain waits for it
  });
  for (int k = 0; k < requests; ++k) {
    const auto [owner, local] = locate(wanted[static_cast<std::size_t>(k)]);
    asks.push(owner, ask{local, k});
  }
  asks.drain();
  REQUIRE(answered == requests);
  for (int k = 0; k < requests; ++k) {
    const auto [owner, local] = locate(wanted[static_cast<std::size_t>(k)]);
    REQUIRE(one_sided[static_cast<std::size_t>(k)] == code(owner, local));
    REQUIRE(by_messages[static_cast<std::size_t>(k)] == code(owner, local));
  }
  ctx.barrier();
}

// A random permutation of a distributed array, by records and by puts: every slot filled exactly once.
template <class Ctx>
void check_permutation(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  std::vector<std::size_t> starts(static_cast<std::size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r) starts[static_cast<std::size_t>(r) + 1] = starts[static_cast<std::size_t>(r)] + extent_of(r);
  const std::size_t n = starts.back();
  std::size_t a = n / 2 + 1;
  while (std::gcd(a, n) != 1) ++a;
  auto destination = [&](std::size_t g) { return (a * g + 7) % n; };
  auto owner_of = [&](std::size_t g) {
    return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), g) - starts.begin()) - 1;
  };
  const std::size_t first = starts[static_cast<std::size_t>(me)], count = extent_of(me);

  struct item {
    std::uint64_t position;
    double value;
  };
  std::vector<double> received(count, -1.0);
  std::vector<int> hits(count, 0);
  mailbox<item> box(ctx.messages(), [&](int, const item& it) {
    received[it.position - first] = it.value;
    ++hits[it.position - first];
  });
  for (std::size_t g = first; g < first + count; ++g) {
    const std::size_t d = destination(g);
    box.push(owner_of(d), item{d, static_cast<double>(g) + 0.25});
  }
  box.drain();

  auto slots = ctx.template allocate<double>(count);
  std::fill(slots.local().begin(), slots.local().end(), -1.0);
  ctx.barrier();
  for (std::size_t g = first; g < first + count; ++g) {
    const std::size_t d = destination(g);
    const int owner = owner_of(d);
    const double value = static_cast<double>(g) + 0.25;
    ctx.put(slots, owner, d - starts[static_cast<std::size_t>(owner)], std::span<const double>(&value, 1));
  }
  ctx.barrier();
  std::vector<std::size_t> source(n);
  for (std::size_t g = 0; g < n; ++g) source[destination(g)] = g;
  for (std::size_t i = 0; i < count; ++i) {
    REQUIRE(hits[i] == 1);
    REQUIRE(received[i] == static_cast<double>(source[first + i]) + 0.25);
    REQUIRE(slots.local()[i] == static_cast<double>(source[first + i]) + 0.25);
  }
  ctx.barrier();
}

template <class Ctx>
void check_bad_arguments(Ctx& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  auto seg = ctx.template allocate<double>(10);
  auto empty = ctx.template allocate<double>(me == p - 1 ? 0 : 10);  // the last rank exposes nothing
  std::vector<double> buffer(8);
  ctx.barrier();
  auto kind_on_every_rank = [&](auto&& local_work) {
    try {
      comm.collectively(local_work);
    } catch (const error& e) {
      return e.kind();
    }
    return error_kind::internal;
  };
  CHECK(kind_on_every_rank([&] { if (me == 0) ctx.get(seg, p, 0, std::span<double>(buffer)); }) ==
        error_kind::index_out_of_range);
  CHECK(kind_on_every_rank([&] { if (me == 0) ctx.get(empty, p - 1, 0, std::span<double>(buffer)); }) ==
        error_kind::index_out_of_range);
  CHECK(kind_on_every_rank([&] { if (me == p - 1) ctx.put(seg, 0, 5, std::span<const double>(buffer)); }) ==
        error_kind::index_out_of_range);
  CHECK(kind_on_every_rank([&] {
          if (me == 0) ctx.get_strided(seg, 0, strided_region{0, 2, 4, 3}, std::span<double>(buffer));
        }) == error_kind::invalid_argument);
  CHECK(kind_on_every_rank([&] {
          if (me == 0) ctx.get_strided(seg, 0, strided_region{0, 2, 3, 3}, std::span<double>(buffer.data(), 5));
        }) == error_kind::invalid_argument);
  // Zero-length transfers are fine, even against an empty rank.
  ctx.get(empty, p - 1, 0, std::span<double>(buffer.data(), 0));
  ctx.barrier();
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

template <class Ctx>
void run_conformance(Ctx& ctx) {
  check_get_put(ctx);
  check_strided(ctx);
  check_accumulate(ctx);
  check_fetch_add(ctx);
  check_mailbox_histogram(ctx);
  check_index_gather(ctx);
  check_permutation(ctx);
  check_bad_arguments(ctx);
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
  check_mailbox_histogram(ctx);
  check_index_gather(ctx);
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
  if (detail::active_progress_runtime() == nullptr) {
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
  check_get_put(separate);
  check_strided(separate);
  check_accumulate(separate);
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
