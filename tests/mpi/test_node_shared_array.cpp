// node_shared_array: every rank's part visible in place to its node peers (real and emulated
// nodes), parts of different sizes (empty ones too), agreed ids, and bad input raised on every rank.
#include "test_support.hpp"

#include <vector>

namespace node_shared_array_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

// Rank r holds r + 3 elements, the last rank none: value 1000 * r + e.
std::size_t extent_of(int rank, int ranks) { return rank == ranks - 1 && ranks > 1 ? 0 : static_cast<std::size_t>(rank) + 3; }

error_kind kind_on_every_rank(const communicator& comm, auto&& local_work) {
  try {
    comm.collectively(local_work);
  } catch (const error& e) {
    return e.kind();
  }
  return error_kind::internal;
}

}  // namespace

TEST_CASE("node_shared_array: each rank reads its node peers' parts in place" *
          doctest::skip(test::shared_windows_disabled())) {
  const auto& comm = test::world();
  const int me = comm.rank(), p = comm.size();
  for (const int ranks_per_node : {0, 1, 2}) {
    INFO(ranks_per_node << " ranks per node (0: the real node)");
    node_shared_array<double> array(comm, extent_of(me, p), ranks_per_node);
    REQUIRE(array.local().size() == extent_of(me, p));
    for (std::size_t e = 0; e < array.local().size(); ++e) array.local()[e] = 1000.0 * me + static_cast<double>(e);
    array.sync();
    comm.barrier();
    array.sync();
    for (int r = 0; r < p; ++r) {
      const bool same_node = ranks_per_node == 0 || r / ranks_per_node == me / ranks_per_node;
      CHECK(array.on_node(r) == same_node);
      if (!same_node) continue;
      const auto there = array.peer(r);
      REQUIRE(there.size() == extent_of(r, p));
      for (std::size_t e = 0; e < there.size(); ++e) CHECK(there[e] == 1000.0 * r + static_cast<double>(e));
    }
    if (!array.local().empty()) CHECK(array.peer(me).data() == array.local().data());
    // A write by a peer shows after the next sync-barrier-sync.
    comm.barrier();
    const int left = (me + p - 1) % p;
    if (array.on_node(left) && !array.peer(left).empty()) array.peer(left)[0] = -1.0;
    array.sync();
    comm.barrier();
    array.sync();
    const int right = (me + 1) % p;
    const bool written = array.on_node(right) && !array.local().empty();
    if (!array.local().empty()) CHECK(array.local()[0] == (written ? -1.0 : 1000.0 * me));
    comm.barrier();
  }
}

TEST_CASE("node_shared_array's contiguous layout is one array per node, parts in rank order" *
          doctest::skip(test::shared_windows_disabled())) {
  const auto& comm = test::world();
  const int me = comm.rank(), p = comm.size();
  for (const int ranks_per_node : {0, 1, 2}) {
    INFO(ranks_per_node << " ranks per node (0: the real node)");
    node_shared_array<double> array(comm, extent_of(me, p), ranks_per_node, node_layout::contiguous);
    CHECK(array.layout() == node_layout::contiguous);
    for (std::size_t e = 0; e < array.local().size(); ++e) array.local()[e] = 1000.0 * me + static_cast<double>(e);
    array.sync();
    comm.barrier();
    array.sync();
    const auto node = array.node_span();
    std::size_t expected_at = 0, node_elements = 0;
    for (int r = 0; r < p; ++r) {
      if (!array.on_node(r)) continue;
      node_elements += extent_of(r, p);
      const auto there = array.peer(r);
      if (there.empty()) continue;
      // Consecutive parts of the node's ranks, back to back, read through the node's one array.
      CHECK(array.offset_on_node(r) == expected_at);
      expected_at = array.offset_on_node(r) + there.size();
      for (std::size_t e = 0; e < there.size(); ++e) CHECK(node[array.offset_on_node(r) + e] == 1000.0 * r + static_cast<double>(e));
    }
    CHECK(node.size() == node_elements);
    comm.barrier();
  }
  node_shared_array<double> separate(comm, 2);
  CHECK(kind_on_every_rank(comm, [&] { (void)separate.node_span(); }) == error_kind::invalid_argument);
}

TEST_CASE("node_shared_array ids agree across ranks and differ between arrays" *
          doctest::skip(test::shared_windows_disabled())) {
  const auto& comm = test::world();
  node_shared_array<int> first(comm, 4), second(comm, 0);
  CHECK(second.id() > first.id());
  CHECK(comm.min(first.id()) == comm.max(first.id()));
  CHECK(second.local().empty());
  // Arrays on a sub-communicator that only some ranks join: afterwards the ranks have made different
  // numbers of arrays, and a new array on all of them must still carry one id everywhere.
  MPI_Comm half_raw = MPI_COMM_NULL;
  TESSERA_MPI(MPI_Comm_split(comm.get(), comm.rank() % 2, comm.rank(), &half_raw));
  {
    const auto half = communicator::duplicate(half_raw);
    MPI_Comm_free(&half_raw);
    const int extra = comm.rank() % 2 == 0 ? 3 : 1;
    for (int k = 0; k < extra; ++k) node_shared_array<int> on_half(half, 1);
  }
  node_shared_array<int> third(comm, 2);
  CHECK(comm.min(third.id()) == comm.max(third.id()));
  CHECK(third.id() > second.id());
}

TEST_CASE("node_shared_array rejects bad input on every rank" * doctest::skip(test::shared_windows_disabled())) {
  const auto& comm = test::world();
  const int me = comm.rank(), p = comm.size();
  if (p > 1)
    CHECK(kind_on_every_rank(comm, [&] { node_shared_array<double> bad(comm, 1, me == 0 ? 1 : 2); }) ==
          error_kind::invalid_argument);
  CHECK(kind_on_every_rank(comm, [&] { node_shared_array<double> bad(comm, 1, -1); }) == error_kind::invalid_argument);
  node_shared_array<double> array(comm, 2, 1);  // every rank a node of its own
  CHECK(kind_on_every_rank(comm, [&] { (void)array.on_node(me == 0 ? p : 0); }) == error_kind::index_out_of_range);
  if (p > 1) {
    CHECK(kind_on_every_rank(comm, [&] { (void)array.peer((me + 1) % p); }) == error_kind::invalid_argument);
  }
}

}  // namespace node_shared_array_tests
