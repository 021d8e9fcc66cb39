#pragma once
/// @file
/// node_shared_array<T>: each rank's elements in one shared-memory window per
/// node (MPI_Win_allocate_shared), so that a rank reads its node peers' data in
/// place, with plain loads, instead of copying it through a backend.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_NODE_SHARED_ARRAY_HPP
#endif

#include <mpi.h>

#include "../core/error.hpp"
#include "../core/huge_pages.hpp"
#include "communicator.hpp"
#include "mpi_check.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace tessera {

namespace detail {
/// The last node_shared_array id handed out in this process (see node_shared_array::id).
inline std::uint64_t last_node_shared_id = 0;
}  // namespace detail

/// How a node_shared_array lays the parts of a node's ranks out in its window.
enum class node_layout {
  /// Each rank's part in pages of its own, first touched by its owner (MPI's
  /// `alloc_shared_noncontig`): the parts are separate arrays.
  separate_pages,
  /// The parts of a node one after another in rank order, as one array (node_span): a kernel
  /// reads every part on the node through one base pointer and an offset (offset_on_node).
  contiguous,
};

/// `n` elements on each rank of a communicator, allocated in its node's
/// shared-memory window: a rank reads (and may write) the elements of every
/// rank on its node in place.
///
/// Made collectively; destroyed collectively over each node (MPI_Win_free):
/// destroy arrays in the same order on every rank. Plain loads and stores
/// are ordered across ranks by sync() on both sides of a barrier:
/// `writer: store; sync(); barrier` then `reader: barrier; sync(); load`.
template <class T>
  requires std::is_trivially_copyable_v<T>
class node_shared_array {
 public:
  /// Collective over `comm`: `n` elements on this rank. `ranks_per_node` > 0
  /// emulates nodes of that many consecutive ranks within each real node (to
  /// test code that treats node peers and other ranks apart on one machine).
  node_shared_array(const communicator& comm, std::size_t n, int ranks_per_node = 0,
                    node_layout layout = node_layout::separate_pages)
      : comm_(comm), layout_(layout) {
    const int fewest = comm.min(ranks_per_node), most = comm.max(ranks_per_node);
    TESSERA_REQUIRE(fewest == most && fewest >= 0, invalid_argument,
                    "node_shared_array: ranks_per_node must be the same non-negative count on every rank (got {} to {})",
                    fewest, most);
    try {
      create(n, ranks_per_node);
    } catch (...) {
      release();  // no destructor runs for a constructor that throws
      throw;
    }
  }

  node_shared_array(const node_shared_array&) = delete;
  node_shared_array& operator=(const node_shared_array&) = delete;

  ~node_shared_array() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) release();
  }

  /// This rank's elements.
  [[nodiscard]] std::span<T> local() const noexcept { return local_; }
  /// Whether `rank` (of the communicator) is on this rank's node, so that peer(rank) can be read in place.
  [[nodiscard]] bool on_node(int rank) const {
    check_rank(rank);
    return node_of_[static_cast<std::size_t>(rank)] == node_of_[static_cast<std::size_t>(comm_.rank())];
  }
  /// The elements of `rank`, a rank on this node.
  [[nodiscard]] std::span<T> peer(int rank) const {
    TESSERA_REQUIRE(on_node(rank), invalid_argument,
                    "node_shared_array: rank {} is on another node than rank {}; its elements cannot be read in place",
                    rank, comm_.rank());
    return peers_[static_cast<std::size_t>(rank)];
  }
  /// Whether the system may back this node's window with transparent huge pages (Linux: the
  /// window's `THPeligible` in /proc/self/smaps; /dev/shm mounted `huge=advise` or `huge=always`).
  /// Reading rows spread over megabytes of 4 KiB pages misses the TLB at nearly every read: spmm
  /// reads X in place by default only when this holds (docs/operations.md).
  [[nodiscard]] bool huge_pages() const noexcept { return huge_pages_; }
  /// The layout the array was made with.
  [[nodiscard]] node_layout layout() const noexcept { return layout_; }
  /// The whole window of this rank's node, every part of it in rank order (node_layout::contiguous
  /// only; throws otherwise).
  [[nodiscard]] std::span<T> node_span() const {
    TESSERA_REQUIRE(layout_ == node_layout::contiguous, invalid_argument,
                    "node_shared_array: node_span() needs an array made with node_layout::contiguous");
    return node_span_;
  }
  /// Where the part of `rank`, a rank on this node, starts in node_span() (in elements;
  /// node_layout::contiguous only).
  [[nodiscard]] std::size_t offset_on_node(int rank) const {
    const auto part = peer(rank);
    (void)node_span();
    if (part.empty()) return 0;
    // Both lie in the one window MPI allocated for the node (contiguous layout).
    return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(part.data()) -
                                    reinterpret_cast<std::uintptr_t>(node_span_.data())) / sizeof(T);
  }
  /// The same on every rank of the communicator, and different for every array this process makes.
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  [[nodiscard]] const communicator& comm() const noexcept { return comm_; }
  /// Orders this rank's loads and stores on the window against the other ranks' (MPI_Win_sync).
  void sync() const { TESSERA_MPI(MPI_Win_sync(window_)); }

 private:
  void create(std::size_t n, int ranks_per_node) {
    const auto& comm = comm_;
    const int me = comm.rank();
    TESSERA_MPI(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node_));
    if (ranks_per_node > 0) {
      int physical_rank = 0;
      TESSERA_MPI(MPI_Comm_rank(node_, &physical_rank));
      MPI_Comm emulated = MPI_COMM_NULL;
      TESSERA_MPI(MPI_Comm_split(node_, physical_rank / ranks_per_node, physical_rank, &emulated));
      MPI_Comm_free(&node_);
      node_ = emulated;
    }
    // Each rank's node, named by the lowest rank on it.
    int node_size = 0;
    TESSERA_MPI(MPI_Comm_size(node_, &node_size));
    std::vector<int> node_members(static_cast<std::size_t>(node_size));
    TESSERA_MPI(MPI_Allgather(&me, 1, MPI_INT, node_members.data(), 1, MPI_INT, node_));
    node_of_ = comm.allgather(node_members.front());

    // separate_pages: each rank's part in its own pages (not packed against its neighbours'),
    // first touched by its owner. contiguous: MPI's default, the parts back to back.
    MPI_Info info = MPI_INFO_NULL;
    TESSERA_MPI(MPI_Info_create(&info));
    if (layout_ == node_layout::separate_pages) TESSERA_MPI(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    void* base = nullptr;
    const int status = MPI_Win_allocate_shared(static_cast<MPI_Aint>(n * sizeof(T)), static_cast<int>(sizeof(T)),
                                               info, node_, &base, &window_);
    MPI_Info_free(&info);
    if (status != MPI_SUCCESS)
      throw error(error_kind::mpi_error,
                  ::tessera::detail::formatted("node-shared memory: this MPI refused a shared-memory window (MPI_Win_allocate_shared: {}); "
                              "Open MPI makes them with its osc sm component, which OMPI_MCA_osc=pt2pt (or any list "
                              "without sm) turns off",
                              detail::mpi_error_string(status)),
                  __FILE__, __LINE__);
    TESSERA_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_));
    locked_ = true;
    local_ = {static_cast<T*>(base), n};

    // Node peers' parts, by rank of `comm` (a node communicator orders ranks as `comm` does: key = rank).
    // Their lengths come from the ranks themselves: MPI may report a part rounded up to whole pages.
    const auto extents = comm.allgather(static_cast<std::uint64_t>(n));
    peers_.resize(static_cast<std::size_t>(comm.size()));
    for (int node_rank = 0; node_rank < node_size; ++node_rank) {
      MPI_Aint bytes = 0;
      int unit = 0;
      void* at = nullptr;
      TESSERA_MPI(MPI_Win_shared_query(window_, node_rank, &bytes, &unit, &at));
      const auto rank = static_cast<std::size_t>(node_members[static_cast<std::size_t>(node_rank)]);
      peers_[rank] = std::span<T>(static_cast<T*>(at), static_cast<std::size_t>(extents[rank]));
      // In this rank's mapping of every part it may read: random reads of rows spread over
      // megabytes missed the TLB at nearly every read with 4 KiB pages. Shared memory gets huge
      // pages only where the system allows it (shmem_enabled, tmpfs huge=): docs/communication.md.
      advise_huge_pages(peers_[rank].data(), peers_[rank].size() * sizeof(T));
    }
    for (const int member : node_members)
      if (!peers_[static_cast<std::size_t>(member)].empty()) {
        huge_pages_ = huge_pages_eligible(peers_[static_cast<std::size_t>(member)].data());
        break;
      }
    if (layout_ == node_layout::contiguous) {
      // The node's window runs from its first non-empty part to the end of its last one (MPI may
      // place an empty part anywhere, or nowhere).
      std::uintptr_t begin = 0, end = 0;
      for (const int member : node_members) {
        const auto& part = peers_[static_cast<std::size_t>(member)];
        if (part.empty()) continue;
        const auto at = reinterpret_cast<std::uintptr_t>(part.data());
        TESSERA_REQUIRE(end == 0 || (at >= end && (at - begin) % sizeof(T) == 0), internal,
                        "node_shared_array: MPI laid the parts of a contiguous window out of rank order");
        if (end == 0) begin = at;
        end = at + part.size() * sizeof(T);
      }
      if (end != 0) node_span_ = std::span<T>(reinterpret_cast<T*>(begin), (end - begin) / sizeof(T));
    }
    // Unique in this process and the same on every rank of `comm`.
    id_ = comm.max(detail::last_node_shared_id + 1);
    detail::last_node_shared_id = id_;
  }

  void release() noexcept {
    if (locked_) MPI_Win_unlock_all(window_);
    if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
    if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
    locked_ = false;
  }

  void check_rank(int rank) const {
    TESSERA_REQUIRE(rank >= 0 && rank < comm_.size(), index_out_of_range,
                    "node_shared_array: rank {} is not a rank of the communicator (size {})", rank, comm_.size());
  }

  communicator comm_;
  node_layout layout_ = node_layout::separate_pages;
  std::span<T> node_span_;
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::span<T> local_;
  std::vector<int> node_of_;
  std::vector<std::span<T>> peers_;
  std::uint64_t id_ = 0;
  bool locked_ = false;
  bool huge_pages_ = false;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_NODE_SHARED_ARRAY_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_NODE_SHARED_ARRAY_HPP
#endif
