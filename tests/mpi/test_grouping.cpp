// Assembly's grouping is deterministic: entries are grouped by row, sorted by column, and
// duplicates are combined in input order, whatever order the (atomic) scatter wrote them in and
// however long the group: an order-sensitive combine ("the last one wins", a cancelling sum) gives
// one answer on every execution space.
#include "test_support.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace grouping_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

using exec = Kokkos::DefaultExecutionSpace;
using mem = exec::memory_space;

struct last_wins {
  KOKKOS_INLINE_FUNCTION double operator()(double, double later) const { return later; }
};

template <class T>
Kokkos::View<const T*, mem> device(const std::vector<T>& host, const char* label) {
  Kokkos::View<T*, mem> v(std::string(label), host.size());
  auto mirror = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < host.size(); ++i) mirror(i) = host[i];
  Kokkos::deep_copy(v, mirror);
  return v;
}

// Groups of the given sizes, columns drawn from [0, distinct_columns), entries shuffled so that no
// group arrives contiguously; checked against a map of (group, column) -> last input position.
void check_grouping(const std::vector<int>& sizes, local_index distinct_columns, unsigned seed) {
  const auto groups = static_cast<local_index>(sizes.size());
  std::mt19937 rng(seed);
  std::vector<local_index> primary, secondary;
  std::vector<double> values;
  for (local_index g = 0; g < groups; ++g)
    for (int k = 0; k < sizes[static_cast<std::size_t>(g)]; ++k) {
      primary.push_back(g);
      secondary.push_back(static_cast<local_index>(rng() % static_cast<unsigned>(distinct_columns)));
      values.push_back(static_cast<double>(primary.size()));  // the input position, 1-based
    }
  // Interleave the groups so that no group arrives contiguously.
  std::vector<std::size_t> order(primary.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<local_index> p2, s2;
  std::vector<double> v2;
  for (std::size_t i : order) {
    p2.push_back(primary[i]);
    s2.push_back(secondary[i]);
    v2.push_back(static_cast<double>(p2.size()));
  }
  const auto grouped = kernels::group_and_sort<exec, local_index, double, mem>(
      exec{}, groups, device(p2, "primary"), device(s2, "secondary"), device(v2, "values"));
  const auto merged = kernels::combine_duplicates(exec{}, grouped, last_wins{});
  const auto ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, merged.ptr);
  const auto keys = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, merged.keys);
  const auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, merged.values);
  // Reference: per (group, key), the last input position.
  std::vector<std::map<local_index, double>> expected(static_cast<std::size_t>(groups));
  for (std::size_t i = 0; i < p2.size(); ++i) expected[static_cast<std::size_t>(p2[i])][s2[i]] = v2[i];
  for (local_index g = 0; g < groups; ++g) {
    INFO("group " << g);
    const auto& want = expected[static_cast<std::size_t>(g)];
    REQUIRE(static_cast<std::size_t>(ptr(g + 1) - ptr(g)) == want.size());
    auto it = want.begin();
    for (offset_type e = ptr(g); e < ptr(g + 1); ++e, ++it) {
      CHECK(keys(e) == it->first);
      CHECK(vals(e) == it->second);
    }
  }
}

}  // namespace

TEST_CASE("group_and_sort + combine_duplicates: sorted groups, duplicates folded in input order") {
  // Group sizes on both sides of the insertion-sort limit, columns in random order with many repeats.
  check_grouping({0, 7, kernels::insertion_sort_limit + 1, 300, 2000}, 40, 7);
}

TEST_CASE("group_and_sort on inputs that the host scatter cuts into one chunk per thread") {
  // ~50,000 entries: several chunks of at least 4096 entries whenever the space has threads, so
  // chunk boundaries fall inside groups and each group's entries come from several chunks.
  std::vector<int> sizes(64);
  for (std::size_t g = 0; g < sizes.size(); ++g) sizes[g] = static_cast<int>((g * 977) % 1571);
  check_grouping(sizes, 300, 11);
  // Many groups, few entries: the chunks' counters would outgrow the entries, so fewer chunks.
  std::vector<int> sparse(200000, 0);
  for (std::size_t g = 0; g < sparse.size(); g += 37) sparse[g] = 3;
  check_grouping(sparse, 5, 13);
}

TEST_CASE("expand_groups inverts a pointer array: empty groups, short ones and ones past the search threshold") {
  // Both of the device algorithms' strategies (a work item per group while every group is short, a
  // search per entry once one is longer than expand_by_search_beyond) against a serial expansion.
  for (const std::vector<int>& sizes : {std::vector<int>{0, 3, 0, 0, 5, 1, 0}, std::vector<int>{0, 3, 0, 0, 400, 1, 0, 2, 0},
                                        std::vector<int>{}, std::vector<int>{0, 0}}) {
    std::vector<offset_type> ptr{0};
    std::vector<local_index> want;
    for (std::size_t g = 0; g < sizes.size(); ++g) {
      ptr.push_back(ptr.back() + sizes[g]);
      want.insert(want.end(), static_cast<std::size_t>(sizes[g]), static_cast<local_index>(g));
    }
    INFO("groups: " << sizes.size() << ", entries: " << want.size());
    const auto group = kernels::expand_groups<exec, mem>(exec{}, device(ptr, "ptr"));
    const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, group);
    REQUIRE(got.extent(0) == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) CHECK(got(k) == want[k]);
  }
}

TEST_CASE("stable_sort_by_key: keys ascending, equal keys in input order") {
  if constexpr (!kernels::has_stable_key_sort<exec>) {
    MESSAGE("skipped: no stable key sort on this execution space");
    return;
  } else {
    for (const std::uint64_t key_count : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{300}, std::uint64_t{70000}}) {
      std::mt19937 rng(static_cast<unsigned>(key_count));
      const std::size_t n = 50000;
      std::vector<std::uint32_t> keys(n), payload(n);
      for (std::size_t i = 0; i < n; ++i) {
        keys[i] = static_cast<std::uint32_t>(rng() % key_count);
        payload[i] = static_cast<std::uint32_t>(i);
      }
      Kokkos::View<std::uint32_t*, mem> k("keys", n), p("payload", n);
      Kokkos::deep_copy(k, Kokkos::View<const std::uint32_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(keys.data(), n));
      Kokkos::deep_copy(p, Kokkos::View<const std::uint32_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(payload.data(), n));
      kernels::stable_sort_by_key(exec{}, k, p, key_count);
      const auto sk = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, k);
      const auto sp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p);
      INFO("key count " << key_count);
      std::vector<std::size_t> reference(n);
      for (std::size_t i = 0; i < n; ++i) reference[i] = i;
      std::stable_sort(reference.begin(), reference.end(), [&](std::size_t x, std::size_t y) { return keys[x] < keys[y]; });
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += sp(i) != reference[i] || sk(i) != keys[reference[i]] ? 1 : 0;
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("scratch arrays: a released buffer serves the next request that fits, two live ones never share, what is kept is bounded") {
  const std::byte* first = nullptr;
  {
    const scratch<double, mem> big(std::size_t{1} << 22);  // 32 MiB: larger than what other tests keep
    REQUIRE(big.view().extent(0) == std::size_t{1} << 22);
    first = reinterpret_cast<const std::byte*>(big.view().data());
  }
  {
    const scratch<double, mem> smaller(std::size_t{3} << 20);
    CHECK(reinterpret_cast<const std::byte*>(smaller.view().data()) == first);
    const scratch<double, mem> another(std::size_t{3} << 20);
    CHECK(another.view().data() != smaller.view().data());
    const scratch<int, mem> none(0);
    CHECK(none.view().extent(0) == 0);
  }
  // What stays kept between calls is bounded, and can be given back.
  release_scratch<mem>();
  CHECK(kept_scratch_bytes<mem>() == 0);
  { const scratch<double, mem> a(1000); }
  CHECK(kept_scratch_bytes<mem>() == 8000);
  keep_scratch_bytes<mem>(4000);  // the 8000-byte buffer is over the limit: freed
  CHECK(kept_scratch_bytes<mem>() == 0);
  { const scratch<double, mem> b(100); }
  CHECK(kept_scratch_bytes<mem>() == 800);
  { const scratch<double, mem> c(1000); }  // allocated, used, and not kept
  CHECK(kept_scratch_bytes<mem>() == 800);
  keep_scratch_bytes<mem>(std::size_t{1} << 30);
  // Written and read back through a kernel: the array is usable memory of its space.
  const scratch<local_index, mem> values(1000);
  const Kokkos::View<local_index*, mem> v = values.view();
  Kokkos::parallel_for("fill", Kokkos::RangePolicy<exec>(0, 1000), KOKKOS_LAMBDA(const int i) { v(i) = 3 * i; });
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  long wrong = 0;
  for (int i = 0; i < 1000; ++i) wrong += host(i) != 3 * i ? 1 : 0;
  CHECK(wrong == 0);
}

TEST_CASE("build_from_triplets folds duplicates in input order, on every rank count") {
  const auto& comm = test::world();
  // Rank 0 holds every entry: row 1 repeats columns in a long, unordered run; row 0 a short one.
  const global_index n = 6;
  triplets<double> t;
  if (comm.rank() == 0) {
    for (int k = 0; k < 200; ++k) t.push_back(1, (k * 7) % 5, static_cast<double>(k));
    for (int k = 0; k < 4; ++k) t.push_back(0, 3 - k % 2, static_cast<double>(100 + k));
  }
  build_options<test::csr_policy, last_wins> options;
  const auto a = build_from_triplets<double, test::csr_policy>(comm, n, n, t, options);
  triplets<double> last;
  for (int c = 0; c < 5; ++c) {
    int k = 199;
    while ((k * 7) % 5 != c) --k;
    last.push_back(1, c, static_cast<double>(k));
  }
  last.push_back(0, 2, 103.0);
  last.push_back(0, 3, 102.0);
  test::require_equal(a, host_csr<double>::from_triplets(n, n, last));
  // A cancelling floating-point sum gives the input-order result: (1e16 + 1) - 1e16 == 0, not 1.
  triplets<double> cancel;
  if (comm.rank() == 0)
    for (double v : {1e16, 1.0, -1e16}) cancel.push_back(n - 1, 0, v);
  const auto s = build_from_triplets<double, test::csr_policy>(comm, n, n, cancel);
  const auto host = gather_to_all(s);
  REQUIRE(host.values.size() == 1);
  CHECK(host.values[0] == (1e16 + 1.0) - 1e16);
}

}  // namespace grouping_tests
