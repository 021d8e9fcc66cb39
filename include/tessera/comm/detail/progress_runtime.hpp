#pragma once
/// @file
/// The process layout and the server loop of progress ranks (Global Arrays'
/// MPI-PR design): one process per node serves one-sided requests against the
/// node's shared-memory windows, so compute ranks never need to poll.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/comm/detail/progress_runtime.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include <mpi.h>

#include "../../core/error.hpp"
#include "../mpi_check.hpp"
#include "progress_service.hpp"
#include "remote_op.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <thread>
#include <vector>

namespace tessera::detail {

enum progress_tag : int {
  tag_request = 0x7e60,  ///< remote_header (+ inline payload)
  tag_payload = 0x7e61,  ///< the payload of the preceding request, when not inline
  tag_control = 0x7e62,  ///< control_message
  tag_reply_first = 0x8000,
};

enum class control_kind : std::uint32_t { allocate = 1, release = 2, shutdown = 3 };
struct control_message {
  control_kind kind = control_kind::shutdown;
  std::uint32_t segment = 0;
  std::uint64_t element_size = 0;
};

/// remote_header::unused bit: the payload follows the header in the same message.
inline constexpr std::uint16_t payload_inline = 1;

/// Who is what, after the environment split the processes.
class progress_runtime final : public progress_service {
 public:
  /// Collective over MPI_COMM_WORLD. `ranks_per_node` > 0 emulates nodes of that many processes.
  explicit progress_runtime(int ranks_per_node) {
    TESSERA_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &server_comm_));
    TESSERA_MPI(MPI_Comm_set_errhandler(server_comm_, MPI_ERRORS_RETURN));
    int world_rank = 0;
    MPI_Comm_rank(server_comm_, &world_rank);
    MPI_Comm physical;
    TESSERA_MPI(MPI_Comm_split_type(server_comm_, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &physical));
    if (ranks_per_node > 0) {
      int physical_rank = 0;
      MPI_Comm_rank(physical, &physical_rank);
      TESSERA_MPI(MPI_Comm_split(physical, physical_rank / ranks_per_node, physical_rank, &node_comm_));
      MPI_Comm_free(&physical);
    } else {
      node_comm_ = physical;
    }
    MPI_Comm_set_errhandler(node_comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(node_comm_, &node_rank_);
    MPI_Comm_size(node_comm_, &node_size_);
    int node_id = world_rank;
    TESSERA_MPI(MPI_Bcast(&node_id, 1, MPI_INT, 0, node_comm_));

    int world_size = 0;
    MPI_Comm_size(server_comm_, &world_size);
    const int mine[3] = {node_id, node_rank_, node_size_};
    std::vector<int> all(3 * static_cast<std::size_t>(world_size));
    TESSERA_MPI(MPI_Allgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, server_comm_));
    int smallest_node = INT32_MAX;
    for (int w = 0; w < world_size; ++w) smallest_node = std::min(smallest_node, all[3 * static_cast<std::size_t>(w) + 2]);
    // Every rank sees the same table, so every rank raises the same error.
    TESSERA_REQUIRE(smallest_node >= 2, invalid_argument,
                    "progress ranks need at least 2 processes per node (one serves, the others compute); a node "
                    "here has {} (run more ranks, or raise ranks_per_node)",
                    smallest_node);

    std::map<int, int> server_of_node;
    for (int w = 0; w < world_size; ++w) {
      const auto* row = &all[3 * static_cast<std::size_t>(w)];
      if (row[1] == row[2] - 1) server_of_node[row[0]] = w;
    }
    for (int w = 0; w < world_size; ++w) {
      const auto* row = &all[3 * static_cast<std::size_t>(w)];
      if (row[1] == row[2] - 1) continue;
      compute_world_.push_back(w);
      compute_node_.push_back(row[0]);
      compute_node_rank_.push_back(row[1]);
      compute_server_.push_back(server_of_node[row[0]]);
      if (row[0] == node_id) ++node_clients_;
    }
    node_id_ = node_id;
    is_server_ = node_rank_ == node_size_ - 1;
    leader_ = node_rank_ == 0 && !is_server_;
    my_server_ = server_of_node[node_id];
    TESSERA_MPI(MPI_Comm_split(server_comm_, is_server_ ? MPI_UNDEFINED : 0, world_rank, &compute_comm_));
    void* tag_ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(server_comm_, MPI_TAG_UB, &tag_ub, &found);
    tag_limit_ = found ? *static_cast<int*>(tag_ub) : 32767;
  }

  progress_runtime(const progress_runtime&) = delete;
  progress_runtime& operator=(const progress_runtime&) = delete;

  [[nodiscard]] bool is_server() const noexcept override { return is_server_; }
  /// Lowest compute rank of this node: it tells the server to join window creation.
  [[nodiscard]] bool is_leader() const noexcept { return leader_; }
  [[nodiscard]] MPI_Comm compute_comm() const noexcept override { return compute_comm_; }
  [[nodiscard]] MPI_Comm server_comm() const noexcept { return server_comm_; }
  [[nodiscard]] MPI_Comm node_comm() const noexcept { return node_comm_; }
  [[nodiscard]] int my_server() const noexcept { return my_server_; }
  [[nodiscard]] int num_nodes() const noexcept {
    std::vector<int> nodes(compute_node_);
    std::sort(nodes.begin(), nodes.end());
    return static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  }

  /// For compute rank c (in compute_comm order): its server's world rank, its
  /// rank in its node communicator, whether it shares this process's node.
  [[nodiscard]] int server_of(int c) const { return compute_server_.at(static_cast<std::size_t>(c)); }
  [[nodiscard]] int node_rank_of(int c) const { return compute_node_rank_.at(static_cast<std::size_t>(c)); }
  [[nodiscard]] bool on_my_node(int c) const { return compute_node_.at(static_cast<std::size_t>(c)) == node_id_; }
  [[nodiscard]] int num_compute() const noexcept { return static_cast<int>(compute_world_.size()); }

  /// The next segment number (allocation is collective over the compute ranks, so all agree).
  std::uint32_t next_segment() noexcept { return next_segment_++; }
  /// A reply tag for the next request.
  int next_reply_tag() noexcept {
    const int span = std::min(tag_limit_, 1 << 30) - tag_reply_first;
    const int t = tag_reply_first + static_cast<int>(next_tag_++ % static_cast<std::uint64_t>(span));
    return t;
  }

  /// Where each process of this node has its part of a shared-memory window, by node rank.
  [[nodiscard]] std::vector<std::byte*> node_bases(MPI_Win window) const {
    std::vector<std::byte*> bases(static_cast<std::size_t>(node_size_));
    for (int q = 0; q < node_size_; ++q) {
      MPI_Aint size = 0;
      int unit = 0;
      void* ptr = nullptr;
      TESSERA_MPI(MPI_Win_shared_query(window, q, &size, &unit, &ptr));
      bases[static_cast<std::size_t>(q)] = static_cast<std::byte*>(ptr);
    }
    return bases;
  }

  /// The server loop: returns once every compute rank of this node said shutdown.
  void stop_server() noexcept override {
    control_message stop{control_kind::shutdown, 0, 0};
    MPI_Send(&stop, sizeof stop, MPI_BYTE, my_server_, tag_control, server_comm_);
  }

  void serve() override {
    int clients = node_clients_;
    std::vector<std::byte> message, payload, answer;
    int idle = 0;
    while (clients > 0) {
      int arrived = 0;
      MPI_Status status;
      TESSERA_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, server_comm_, &arrived, &status));
      if (!arrived) {
        // Back off when idle: on an oversubscribed node a spinning server steals the compute ranks' cores.
        if (++idle > 256) std::this_thread::sleep_for(std::chrono::microseconds(idle > 4096 ? 200 : 20));
        continue;
      }
      idle = 0;
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      message.resize(static_cast<std::size_t>(bytes));
      TESSERA_MPI(MPI_Recv(message.data(), bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, server_comm_,
                           MPI_STATUS_IGNORE));
      if (status.MPI_TAG == tag_control) {
        control_message c;
        std::memcpy(&c, message.data(), sizeof c);
        if (c.kind == control_kind::shutdown) --clients;
        else if (c.kind == control_kind::allocate) join_allocation(c);
        else if (c.kind == control_kind::release) join_release(c);
        continue;
      }
      remote_header h;
      std::memcpy(&h, message.data(), sizeof h);
      const std::byte* in = message.data() + sizeof h;
      const std::size_t incoming = request_bytes(h);
      if (incoming > 0 && !(h.unused & payload_inline)) {
        payload.resize(incoming);
        TESSERA_MPI(MPI_Recv(payload.data(), static_cast<int>(incoming), MPI_BYTE, status.MPI_SOURCE, tag_payload,
                             server_comm_, MPI_STATUS_IGNORE));
        in = payload.data();
      }
      std::byte* base = nullptr;
      if (h.kind != remote_kind::flush) {
        auto it = windows_.find(h.segment);
        TESSERA_REQUIRE(it != windows_.end(), internal, "progress rank: request for unknown segment {}", h.segment);
        base = it->second.bases.at(static_cast<std::size_t>(node_rank_of(h.target)));
      }
      answer.resize(reply_bytes(h));
      apply_remote(h, base, in, answer.data());
      if (h.kind == remote_kind::get || h.kind == remote_kind::fetch_add || h.kind == remote_kind::flush)
        TESSERA_MPI(MPI_Send(answer.data(), static_cast<int>(answer.size()), MPI_BYTE, status.MPI_SOURCE,
                             static_cast<int>(h.request_id), server_comm_));
    }
  }

 private:
  struct window {
    MPI_Win handle = MPI_WIN_NULL;
    std::vector<std::byte*> bases;  ///< by node rank
  };

  void join_allocation(const control_message& c) {
    window w;
    void* base = nullptr;
    TESSERA_MPI(MPI_Win_allocate_shared(0, static_cast<int>(c.element_size), MPI_INFO_NULL, node_comm_, &base,
                                        &w.handle));
    w.bases = node_bases(w.handle);
    windows_.emplace(c.segment, std::move(w));
  }

  void join_release(const control_message& c) {
    auto it = windows_.find(c.segment);
    if (it == windows_.end()) return;
    MPI_Win_free(&it->second.handle);
    windows_.erase(it);
  }

  MPI_Comm server_comm_ = MPI_COMM_NULL;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm compute_comm_ = MPI_COMM_NULL;
  int node_rank_ = 0;
  int node_size_ = 1;
  int node_id_ = 0;
  int node_clients_ = 0;
  int my_server_ = 0;
  bool is_server_ = false;
  bool leader_ = false;
  int tag_limit_ = 32767;
  std::uint32_t next_segment_ = 0;
  std::uint64_t next_tag_ = 0;
  std::vector<int> compute_world_, compute_node_, compute_node_rank_, compute_server_;
  std::map<std::uint32_t, window> windows_;
};

/// The runtime of this process, if the environment split off progress ranks (the only
/// progress_service there is).
inline progress_runtime* active_progress_runtime() noexcept {
  return static_cast<progress_runtime*>(active_progress_service());
}

/// Registers the runtime with the environment in every program that includes this header (the
/// progress_rank backend does): dynamic initialisation of an inline variable, before main.
inline const bool progress_runtime_registered = [] {
  registered_progress_service() = [](int ranks_per_node) -> std::unique_ptr<progress_service> {
    return std::make_unique<progress_runtime>(ranks_per_node);
  };
  return true;
}();

}  // namespace tessera::detail
