#pragma once
/// @file
/// The backend conformance suite, for a researcher's own backend: the checks tessera runs on
/// mpi_rma, aggregator and progress_rank, as functions a user calls from their own test.
///
/// @code
/// my_backend::context ctx(world);
/// tessera::testing::check_backend(ctx);   // throws tessera::error on every rank if a check fails
/// @endcode
///
/// Each check is collective (call it on every rank of ctx.comm()), compares every result exactly
/// against what the semantics of docs/communication.md imply, and raises one tessera::error on
/// every rank if any rank saw a difference: its message names the check, the operation and the
/// first wrong value, and error::origin_rank() the rank that saw it. The checks use no test
/// framework, so they run under doctest, GoogleTest, Catch2 or a plain main().
///
/// The checks call only what `backend_context` states (plus accumulate_strided where the context
/// has it, as every one_sided_api context does). What is checked: get/put (contiguous,
/// non-blocking and blocking, from allocated and exposed memory), block-strided get/put with local
/// strides, accumulate (integer and floating point), fetch_add (uniqueness of the old values under contention, a histogram), mailboxes
/// (delivery, handlers that send, a permutation), and the argument errors the API promises.
/// Traffic counters are not checked here: what a backend counts is its own (tests/mpi/
/// test_backends.cpp checks the built-ins' counts exactly).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_TESTING_BACKEND_CONFORMANCE_HPP
#endif

#include "../comm/mailbox.hpp"
#include "../comm/request.hpp"
#include "../comm/segment.hpp"
#include "../concepts/backend.hpp"
#include "../core/error.hpp"
#include "../core/format.hpp"
#include "../generators/detail/counter_rng.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tessera::testing {

namespace detail {

/// Collects the first wrong result of one check on this rank; `finish` raises it on every rank.
class verdict {
 public:
  explicit verdict(const char* check) : check_(check) {}

  template <class... Args>
  void expect(bool holds, fmt::format_string<Args...> what, Args&&... args) {
    if (holds || !first_.empty()) return;
    first_ = fmt::format(what, std::forward<Args>(args)...);
  }
  [[nodiscard]] bool failed() const noexcept { return !first_.empty(); }

  /// Collective: throw on every rank if any rank saw a wrong result.
  void finish(const communicator& comm) const {
    comm.collectively([&] {
      if (!first_.empty())
        throw std::runtime_error(::tessera::detail::formatted("backend conformance: check '{}' failed on rank {}: {}", check_,
                                                         comm.rank(), first_));
    });
  }

 private:
  const char* check_;
  std::string first_;
};

[[nodiscard]] inline double code(int rank, std::size_t i) { return rank * 1000.0 + static_cast<double>(i) + 0.5; }
[[nodiscard]] inline std::size_t extent_of(int rank) { return 40 + 13 * static_cast<std::size_t>(rank); }
[[nodiscard]] inline std::uint64_t word(std::uint64_t stream, int rank, int index) {
  return tessera::detail::random_word(stream, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(index));
}

/// Offsets of the ranks' parts when every rank holds extent_of(rank) elements.
[[nodiscard]] inline std::vector<std::size_t> starts_of(int ranks) {
  std::vector<std::size_t> starts(static_cast<std::size_t>(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r) starts[static_cast<std::size_t>(r) + 1] = starts[static_cast<std::size_t>(r)] + extent_of(r);
  return starts;
}
[[nodiscard]] inline int owner_in(const std::vector<std::size_t>& starts, std::size_t g) {
  return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), g) - starts.begin()) - 1;
}

}  // namespace detail

/// Random contiguous gets (blocking and not, from allocate()d and expose()d memory) and puts of
/// every rank into every rank.
template <backend_context Context>
void check_get_put(Context& ctx) {
  using detail::code;
  using detail::extent_of;
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  detail::verdict verdict("get_put");
  auto seg = ctx.template allocate<double>(extent_of(me));
  for (std::size_t i = 0; i < seg.local().size(); ++i) seg.local()[i] = code(me, i);
  std::vector<double> mine(extent_of(me));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = -code(me, i);
  auto exposed = ctx.expose(std::span<double>(mine));
  ctx.barrier();

  constexpr int gets = 120;
  std::vector<std::vector<double>> got(gets);
  std::vector<std::tuple<int, std::size_t, bool>> where(gets);
  std::vector<request> pending;
  for (int k = 0; k < gets; ++k) {
    const auto w = detail::word(7, me, k);
    const int t = static_cast<int>(w % static_cast<std::uint64_t>(p));
    const std::size_t len = 1 + (w >> 8) % extent_of(t);
    const std::size_t off = (w >> 24) % (extent_of(t) - len + 1);
    const bool from_exposed = (w >> 40) % 3 == 0;
    auto& into = got[static_cast<std::size_t>(k)];
    into.assign(len, 0.0);
    where[static_cast<std::size_t>(k)] = {t, off, from_exposed};
    auto& target = from_exposed ? exposed : seg;
    if (k % 2) pending.push_back(ctx.get_nb(target, t, off, std::span<double>(into)));
    else ctx.get(target, t, off, std::span<double>(into));
  }
  wait_all(pending);
  for (int k = 0; k < gets; ++k) {
    const auto [t, off, from_exposed] = where[static_cast<std::size_t>(k)];
    const auto& values = got[static_cast<std::size_t>(k)];
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double expected = (from_exposed ? -1.0 : 1.0) * code(t, off + i);
      verdict.expect(values[i] == expected, "{} get of {} elements from rank {} at offset {}: element {} is {}, expected {}",
                     from_exposed ? "exposed-memory" : "allocated-memory", values.size(), t, off, i, values[i], expected);
    }
  }

  // Puts: rank o writes its own block of every rank's board.
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
    if (t % 2) {
      pending.push_back(ctx.put_nb(board, t, at, std::span<const double>(src)));
    } else {
      ctx.put(board, t, at, std::span<const double>(src));
      ctx.flush(t);
    }
  }
  wait_all(pending);
  ctx.barrier();
  for (int o = 0; o < p; ++o)
    for (std::size_t i = 0; i < block; ++i) {
      const double seen = board.local()[static_cast<std::size_t>(o) * block + i];
      const double expected = code(o, 100 * static_cast<std::size_t>(me) + i);
      verdict.expect(seen == expected, "element {} of rank {}'s put is {} after a barrier, expected {}", i, o, seen, expected);
    }
  ctx.barrier();
  verdict.finish(comm);
}

/// Block-strided gets and puts (a submatrix of a row-major matrix), packed and with a local stride.
template <backend_context Context>
void check_strided(Context& ctx) {
  using detail::code;
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  detail::verdict verdict("strided");
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
    for (std::size_t c = 0; c < 4; ++c)
      verdict.expect(packed[b * 4 + c] == code(from, (2 + b) * ld + 1 + c),
                     "packed strided get from rank {}: block {} element {} is {}, expected {}", from, b, c,
                     packed[b * 4 + c], code(from, (2 + b) * ld + 1 + c));

  std::vector<double> spaced(4 * 6 + 4, -1.0);  // local stride 6: the gaps must stay untouched
  ctx.get_strided_nb(matrix, from, sub, std::span<double>(spaced), 6).wait();
  for (std::size_t b = 0; b < 5; ++b)
    for (std::size_t c = 0; c < 6 && b * 6 + c < spaced.size(); ++c) {
      const double expected = c < 4 ? code(from, (2 + b) * ld + 1 + c) : -1.0;
      verdict.expect(spaced[b * 6 + c] == expected, "strided get with local stride 6: block {} element {} is {}, expected {}",
                     b, c, spaced[b * 6 + c], expected);
    }

  // A 3x4 block (rows 1..3, columns 2..5) into the next rank, from a local layout with stride 5.
  const int to = (me + 1) % p;
  const strided_region dest{1 * ld + 2, 3, 4, ld};
  std::vector<double> source(2 * 5 + 4);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = code(me, 500 + i);
  ctx.put_strided_nb(target, to, dest, std::span<const double>(source), 5).wait();
  ctx.barrier();
  const int writer = (me - 1 + p) % p;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < ld; ++c) {
      const bool inside = r >= 1 && r <= 3 && c >= 2 && c <= 5;
      const double expected = inside ? code(writer, 500 + (r - 1) * 5 + (c - 2)) : 0.0;
      verdict.expect(target.local()[r * ld + c] == expected, "strided put from rank {}: ({}, {}) is {}, expected {}",
                     writer, r, c, target.local()[r * ld + c], expected);
    }
  ctx.barrier();
  verdict.finish(comm);
}

/// Accumulates of every rank into every rank, integer and floating point, contiguous and strided.
template <backend_context Context>
void check_accumulate(Context& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  detail::verdict verdict("accumulate");
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
  // Every second element once more, as one strided call, where the context has the strided form
  // (one_sided_api gives it; backend_context does not ask for it).
  constexpr bool strided = requires(const segment<std::int64_t>& seg, std::span<const std::int64_t> from) {
    ctx.accumulate_strided(seg, 0, strided_region{}, from);
  };
  if constexpr (strided)
    for (int t = 0; t < p; ++t)
      ctx.accumulate_strided(integers, t, strided_region{0, n / 2, 1, 2}, std::span<const std::int64_t>(ones.data(), n / 2));
  wait_all(pending);
  ctx.barrier();
  const std::int64_t s = static_cast<std::int64_t>(p) * (p + 1) / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t expected = 3 * s + (strided && i % 2 == 0 ? s : 0);
    verdict.expect(integers.local()[i] == expected, "int64 accumulate: element {} is {}, expected {}", i,
                   integers.local()[i], expected);
    verdict.expect(reals.local()[i] == static_cast<double>(3 * s), "double accumulate: element {} is {}, expected {}", i,
                   reals.local()[i], 3 * s);
  }
  ctx.barrier();
  verdict.finish(comm);
}

/// fetch_add under contention (every old value seen exactly once) and a random histogram.
template <backend_context Context>
void check_fetch_add(Context& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  detail::verdict verdict("fetch_add");
  auto counter = ctx.template allocate<std::int64_t>(1);
  counter.local()[0] = 0;
  constexpr int k = 40;
  ctx.barrier();
  std::vector<std::int64_t> olds(k);
  for (int i = 0; i < k; ++i) {
    if (i % 2) olds[static_cast<std::size_t>(i)] = ctx.fetch_add(counter, 0, 0, 1);
    else ctx.fetch_add_nb(counter, 0, 0, 1, olds[static_cast<std::size_t>(i)]).wait();
  }
  ctx.barrier();  // before plain MPI: some backends serve requests only inside their own calls
  std::vector<std::int64_t> all(static_cast<std::size_t>(k * p));
  TESSERA_MPI(MPI_Allgather(olds.data(), k, MPI_INT64_T, all.data(), k, MPI_INT64_T, comm.get()));
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i)
    verdict.expect(all[i] == static_cast<std::int64_t>(i),
                   "{} fetch_adds of 1 on one counter did not return each of 0..{} once (sorted, position {} holds {})",
                   all.size(), all.size() - 1, i, all[i]);
  ctx.barrier();
  if (me == 0)
    verdict.expect(counter.local()[0] == static_cast<std::int64_t>(k * p), "the counter holds {} after {} fetch_adds of 1",
                   counter.local()[0], k * p);

  constexpr std::size_t bins = 32;
  constexpr int updates = 300;
  auto histogram = ctx.template allocate<std::int64_t>(bins);
  std::fill(histogram.local().begin(), histogram.local().end(), 0);
  ctx.barrier();
  for (int u = 0; u < updates; ++u) {
    const auto w = detail::word(11, me, u);
    (void)ctx.fetch_add(histogram, static_cast<int>(w % static_cast<std::uint64_t>(p)), (w >> 16) % bins, 1);
  }
  ctx.barrier();
  std::vector<std::int64_t> expected(bins, 0);
  for (int o = 0; o < p; ++o)
    for (int u = 0; u < updates; ++u) {
      const auto w = detail::word(11, o, u);
      if (static_cast<int>(w % static_cast<std::uint64_t>(p)) == me) ++expected[(w >> 16) % bins];
    }
  for (std::size_t b = 0; b < bins; ++b)
    verdict.expect(histogram.local()[b] == expected[b], "fetch_add histogram: bin {} holds {}, expected {}", b,
                   histogram.local()[b], expected[b]);
  ctx.barrier();
  verdict.finish(comm);
}

/// Mailboxes over the context's messages(): a histogram, an index-gather whose handlers send
/// replies (checked against one-sided gets of the same entries), and a permutation (every
/// record delivered exactly once).
template <backend_context Context>
void check_mailboxes(Context& ctx) {
  using detail::code;
  using detail::extent_of;
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  detail::verdict verdict("mailboxes");

  {
    constexpr std::uint32_t bins = 64;
    constexpr int updates = 2000;
    std::vector<std::int64_t> counts(bins, 0);
    mailbox<std::uint32_t> box(ctx.messages(), [&](int, std::uint32_t bin) { ++counts[bin]; });
    for (int u = 0; u < updates; ++u) {
      const auto w = detail::word(13, me, u);
      box.push(static_cast<int>(w % static_cast<std::uint64_t>(p)), static_cast<std::uint32_t>((w >> 16) % bins));
    }
    box.drain();
    std::vector<std::int64_t> expected(bins, 0);
    for (int o = 0; o < p; ++o)
      for (int u = 0; u < updates; ++u) {
        const auto w = detail::word(13, o, u);
        if (static_cast<int>(w % static_cast<std::uint64_t>(p)) == me) ++expected[(w >> 16) % bins];
      }
    for (std::size_t b = 0; b < bins; ++b)
      verdict.expect(counts[b] == expected[b], "mailbox histogram: bin {} received {} records, expected {}", b, counts[b],
                     expected[b]);
  }

  const auto starts = detail::starts_of(p);
  {
    // bale's index-gather: random entries of a distributed table, one-sided and by request/reply records.
    auto table = ctx.template allocate<double>(extent_of(me));
    for (std::size_t i = 0; i < table.local().size(); ++i) table.local()[i] = code(me, i);
    ctx.barrier();
    constexpr int requests = 400;
    std::vector<std::size_t> wanted(requests);
    for (int k = 0; k < requests; ++k) wanted[static_cast<std::size_t>(k)] = detail::word(17, me, k) % starts.back();
    auto locate = [&](std::size_t g) {
      const int owner = detail::owner_in(starts, g);
      return std::pair<int, std::size_t>{owner, g - starts[static_cast<std::size_t>(owner)]};
    };
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
    verdict.expect(answered == requests, "index-gather: {} of {} replies arrived by the end of drain()", answered, requests);
    for (int k = 0; k < requests; ++k) {
      const auto [owner, local] = locate(wanted[static_cast<std::size_t>(k)]);
      verdict.expect(one_sided[static_cast<std::size_t>(k)] == code(owner, local),
                     "index-gather: a one-sided get of rank {}'s element {} gave {}, expected {}", owner, local,
                     one_sided[static_cast<std::size_t>(k)], code(owner, local));
      verdict.expect(by_messages[static_cast<std::size_t>(k)] == code(owner, local),
                     "index-gather: the reply for rank {}'s element {} carried {}, expected {}", owner, local,
                     by_messages[static_cast<std::size_t>(k)], code(owner, local));
    }
    ctx.barrier();
  }

  {
    // A permutation of a distributed array by records and by puts: every slot filled exactly once.
    const std::size_t n = starts.back();
    std::size_t a = n / 2 + 1;
    while (std::gcd(a, n) != 1) ++a;
    auto destination = [&](std::size_t g) { return (a * g + 7) % n; };
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
      box.push(detail::owner_in(starts, d), item{d, static_cast<double>(g) + 0.25});
    }
    box.drain();

    auto slots = ctx.template allocate<double>(count);
    std::fill(slots.local().begin(), slots.local().end(), -1.0);
    ctx.barrier();
    for (std::size_t g = first; g < first + count; ++g) {
      const std::size_t d = destination(g);
      const int owner = detail::owner_in(starts, d);
      const double value = static_cast<double>(g) + 0.25;
      ctx.put(slots, owner, d - starts[static_cast<std::size_t>(owner)], std::span<const double>(&value, 1));
    }
    ctx.barrier();
    std::vector<std::size_t> source(n);
    for (std::size_t g = 0; g < n; ++g) source[destination(g)] = g;
    for (std::size_t i = 0; i < count; ++i) {
      const double expected = static_cast<double>(source[first + i]) + 0.25;
      verdict.expect(hits[i] == 1, "permutation: slot {} received {} records, expected 1", first + i, hits[i]);
      verdict.expect(received[i] == expected, "permutation by records: slot {} holds {}, expected {}", first + i,
                     received[i], expected);
      verdict.expect(slots.local()[i] == expected, "permutation by puts: slot {} holds {}, expected {}", first + i,
                     slots.local()[i], expected);
    }
    ctx.barrier();
  }
  verdict.finish(comm);
}

/// The argument errors of the one-sided API, raised on every rank with the promised kind.
template <backend_context Context>
void check_argument_errors(Context& ctx) {
  const auto& comm = ctx.comm();
  const int p = comm.size(), me = comm.rank();
  detail::verdict verdict("argument_errors");
  auto seg = ctx.template allocate<double>(10);
  auto empty = ctx.template allocate<double>(me == p - 1 ? 0 : 10);  // the last rank exposes nothing
  std::vector<double> buffer(8);
  ctx.barrier();
  auto kind_on_every_rank = [&](auto&& local_work) -> int {
    try {
      comm.collectively(local_work);
    } catch (const error& e) {
      return static_cast<int>(e.kind());
    }
    return 0;
  };
  auto expect_kind = [&](int seen, error_kind wanted, const char* what) {
    verdict.expect(seen == static_cast<int>(wanted), "{}: raised {}, expected {}", what,
                   seen == 0 ? std::string("nothing") : std::string(to_string(static_cast<error_kind>(seen))),
                   to_string(wanted));
  };
  expect_kind(kind_on_every_rank([&] { if (me == 0) ctx.get(seg, p, 0, std::span<double>(buffer)); }),
              error_kind::index_out_of_range, "a get from a rank outside the communicator");
  expect_kind(kind_on_every_rank([&] { if (me == 0) ctx.get(empty, p - 1, 0, std::span<double>(buffer)); }),
              error_kind::index_out_of_range, "a get beyond an empty rank's segment");
  expect_kind(kind_on_every_rank([&] { if (me == p - 1) ctx.put(seg, 0, 5, std::span<const double>(buffer)); }),
              error_kind::index_out_of_range, "a put past the end of the target's segment");
  expect_kind(kind_on_every_rank([&] {
                if (me == 0) ctx.get_strided(seg, 0, strided_region{0, 2, 4, 3}, std::span<double>(buffer));
              }),
              error_kind::invalid_argument, "a strided get whose stride is shorter than its blocks");
  expect_kind(kind_on_every_rank([&] {
                if (me == 0) ctx.get_strided(seg, 0, strided_region{0, 2, 3, 3}, std::span<double>(buffer.data(), 5));
              }),
              error_kind::invalid_argument, "a strided get into a local buffer too small for it");
  // Zero-length transfers are fine, even against an empty rank.
  ctx.get(empty, p - 1, 0, std::span<double>(buffer.data(), 0));
  ctx.barrier();
  verdict.finish(comm);
}

/// Every check above, in order. Collective; throws tessera::error on every rank at the first
/// check that fails anywhere.
template <backend_context Context>
void check_backend(Context& ctx) {
  check_get_put(ctx);
  check_strided(ctx);
  check_accumulate(ctx);
  check_fetch_add(ctx);
  check_mailboxes(ctx);
  check_argument_errors(ctx);
}

}  // namespace tessera::testing

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_TESTING_BACKEND_CONFORMANCE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_TESTING_BACKEND_CONFORMANCE_HPP
#endif
