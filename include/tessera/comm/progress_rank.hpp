#pragma once
/// @file
/// progress_rank: Global Arrays' MPI-PR design. Segments live in MPI
/// shared-memory windows of each node; a rank reads and writes its own node's
/// segments directly, and sends a small request to the progress rank of
/// another node, which copies out of (or into) shared memory and replies.
/// Needs an environment started with progress ranks.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PROGRESS_RANK_HPP
#endif

// Seen by tessera::instantiations' extern declarations (instantiations/declarations.hpp).
#define TESSERA_COMPONENT_progress_rank 1

#include <mpi.h>

#include "buckets.hpp"
#include "communicator.hpp"
#include "conveyor.hpp"
#include "detail/progress_runtime.hpp"
#include "detail/remote_op.hpp"
#include "one_sided_api.hpp"
#include "personalised_exchange.hpp"

#include <atomic>
#include <cstring>
#include <memory>
#include <set>
#include <span>
#include <string_view>
#include <vector>

namespace tessera {

/// The progress-rank backend.
///
/// Counts, per request to another node's progress rank: one message (two when
/// a put's payload exceeds inline_bytes and follows separately) and the bytes
/// the request moves both ways: its 56-byte header, the payload sent, and the
/// data of the reply. Accesses to the own node's shared memory are not
/// messages and are not counted. Mailboxes run on a direct conveyor among the
/// compute ranks.
struct progress_rank : alltoall_exchanges {
  static constexpr std::string_view name() noexcept { return "progress"; }
  /// Gets and puts complete without the target calling tessera (see is_passive_target).
  static constexpr bool passive_target = true;

  struct options {
    conveyor_options messaging{};      ///< the conveyor behind mailboxes
    std::size_t inline_bytes = 8192;   ///< put payloads up to this size travel inside the request message
  };

  /// Bytes of the header of every request.
  static constexpr std::size_t header_bytes = sizeof(detail::remote_header);

  class context;
};

namespace detail {
struct shared_segment_state final : segment_state {
  MPI_Win window = MPI_WIN_NULL;
  std::vector<std::byte*> node_bases;  ///< by node rank
  progress_runtime* runtime = nullptr;
  ~shared_segment_state() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized || window == MPI_WIN_NULL) return;
    // Nobody may still be addressing this segment when its server frees it.
    MPI_Barrier(runtime->compute_comm());
    if (runtime->is_leader()) {
      control_message c{control_kind::release, id, element_size};
      MPI_Send(&c, sizeof c, MPI_BYTE, runtime->my_server(), tag_control, runtime->server_comm());
    }
    MPI_Win_free(&window);
  }
};
/// A segment of a one-rank context: private memory, addressed only by its owner.
struct private_segment_state final : segment_state {
  std::vector<std::byte> owned;
};
}  // namespace detail

/// Per-communicator state of progress_rank. Collective over the environment's compute ranks.
class progress_rank::context : public one_sided_api<progress_rank::context> {
 public:
  explicit context(const communicator& comm, progress_rank::options options = {})
      : comm_(comm),
        options_(options),
        // A one-rank communicator (a data-parallel rank's own) reaches nobody else: no server needed,
        // but the environment must still have progress ranks, so a missing option fails at any size.
        runtime_(comm.size() == 1 ? (require_runtime_exists(), nullptr) : require_runtime(comm)),
        messages_(std::make_unique<conveyor>(comm, options.messaging)) {}

  [[nodiscard]] const communicator& comm() const noexcept { return comm_; }
  [[nodiscard]] conveyor& messages() noexcept { return *messages_; }
  /// Number of (possibly emulated) nodes the compute ranks span.
  [[nodiscard]] int num_nodes() const { return runtime_ == nullptr ? 1 : runtime_->num_nodes(); }
  /// Whether compute rank `rank` shares this rank's node (and so is accessed directly).
  [[nodiscard]] bool on_my_node(int rank) const { return runtime_ == nullptr || runtime_->on_my_node(rank); }

  /// Collective: `n` elements on this rank, in its node's shared-memory window.
  template <class T>
    requires std::is_trivially_copyable_v<T>
  segment<T> allocate(std::size_t n) {
    if (runtime_ == nullptr) {
      auto mine = std::make_shared<detail::private_segment_state>();
      mine->id = next_private_id_++;
      mine->element_size = sizeof(T);
      mine->owned.resize(n * sizeof(T));
      mine->local_base = mine->owned.data();
      mine->extents = {n};
      return segment<T>(std::move(mine));
    }
    auto state = std::make_shared<detail::shared_segment_state>();
    state->id = runtime_->next_segment();
    state->element_size = sizeof(T);
    state->rank = comm_.rank();
    state->runtime = runtime_;
    // A server blocks in the node's window creation until all its node's compute ranks join; were one
    // of them still waiting for a reply from another node's (equally blocked) server, that would be a
    // cycle. After this barrier no compute rank waits for anything before joining.
    comm_.barrier();
    if (runtime_->is_leader()) {
      detail::control_message c{detail::control_kind::allocate, state->id, sizeof(T)};
      TESSERA_MPI(MPI_Send(&c, sizeof c, MPI_BYTE, runtime_->my_server(), detail::tag_control, runtime_->server_comm()));
    }
    void* base = nullptr;
    TESSERA_MPI(MPI_Win_allocate_shared(static_cast<MPI_Aint>(n * sizeof(T)), static_cast<int>(sizeof(T)),
                                        MPI_INFO_NULL, runtime_->node_comm(), &base, &state->window));
    state->node_bases = runtime_->node_bases(state->window);
    state->local_base = static_cast<std::byte*>(base);
    // Also the point after which every node's server knows the segment.
    const auto all = comm_.allgather(static_cast<std::uint64_t>(n));
    state->extents.assign(all.begin(), all.end());
    return segment<T>(std::move(state));
  }

  /// Collective: a shared-memory copy of `memory` (the server cannot read
  /// another process's private memory). Results live in segment.local().
  template <class T>
    requires std::is_trivially_copyable_v<T>
  segment<T> expose(std::span<T> memory) {
    auto seg = allocate<T>(memory.size());
    if (!memory.empty()) std::memcpy(seg.local().data(), memory.data(), memory.size_bytes());
    return seg;
  }

  request start_get(const segment_state& s, int rank, const strided_region& r, std::byte* local,
                    std::size_t local_stride) {
    if (const std::byte* base = direct_base(s, rank)) {
      if (local_stride == r.block_length) {
        detail::pack_region(base, r, s.element_size, local);
      } else {
        staging_.resize(r.elements() * s.element_size);
        detail::pack_region(base, r, s.element_size, staging_.data());
        unpack_strided(local, r, local_stride, s.element_size, staging_.data());
      }
      return {};
    }
    auto h = detail::make_header(detail::remote_kind::get, s, rank, r, scalar_code::opaque);
    auto pending = std::make_unique<reply_state>();
    pending->region = r;
    pending->local = local;
    pending->local_stride = local_stride;
    pending->element_size = s.element_size;
    std::byte* into = local;
    if (local_stride != r.block_length && r.count > 1) {
      pending->staging.resize(r.elements() * s.element_size);
      into = pending->staging.data();
    }
    post_request(h, rank, {}, into, r.elements() * s.element_size, pending->handle);
    return request(std::move(pending));
  }

  request start_put(const segment_state& s, int rank, const strided_region& r, const std::byte* local,
                    std::size_t local_stride) {
    return write(detail::remote_kind::put, s, rank, r, local, local_stride, scalar_code::opaque);
  }
  request start_accumulate(const segment_state& s, int rank, const strided_region& r, const std::byte* local,
                           std::size_t local_stride, scalar_code scalar) {
    return write(detail::remote_kind::accumulate, s, rank, r, local, local_stride, scalar);
  }

  request start_fetch_add(const segment_state& s, int rank, std::size_t offset, std::int64_t value,
                          std::int64_t* old) {
    if (std::byte* base = direct_base(s, rank)) {
      *old = detail::fetch_add_at(base, offset, value);
      return {};
    }
    auto h = detail::make_header(detail::remote_kind::fetch_add, s, rank, strided_region::contiguous(offset, 1),
                                 scalar_code::i64);
    auto pending = std::make_unique<reply_state>();
    post_request(h, rank, std::as_bytes(std::span<const std::int64_t, 1>(&value, 1)),
                 reinterpret_cast<std::byte*>(old), sizeof(std::int64_t), pending->handle);
    return request(std::move(pending));
  }

  /// Remote completion of this rank's writes to `rank`: the server answers a
  /// flush request after every earlier request of this rank.
  void flush(int rank) {
    if (on_my_node(rank)) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      return;
    }
    const int server = runtime_->server_of(rank);
    if (!dirty_servers_.contains(server)) return;
    dirty_servers_.erase(server);
    flush_server(rank);
  }
  void flush_all() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (runtime_ == nullptr) return;
    std::vector<int> targets;
    for (int rank = 0; rank < comm_.size(); ++rank) {
      const int server = runtime_->server_of(rank);
      if (!runtime_->on_my_node(rank) && dirty_servers_.erase(server) > 0) targets.push_back(rank);
    }
    for (int rank : targets) flush_server(rank);
  }
  /// Collective: every rank's operations are complete and visible everywhere.
  void barrier() {
    flush_all();
    comm_.barrier();
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

 private:
  struct reply_state final : request_state {
    MPI_Request handle = MPI_REQUEST_NULL;
    std::vector<std::byte> staging;
    std::byte* local = nullptr;
    strided_region region;
    std::size_t local_stride = 0;
    std::size_t element_size = 0;
    bool test() override {
      int done = 0;
      TESSERA_MPI(MPI_Test(&handle, &done, MPI_STATUS_IGNORE));
      if (done) finish();
      return done != 0;
    }
    void wait() override {
      TESSERA_MPI(MPI_Wait(&handle, MPI_STATUS_IGNORE));
      finish();
    }
    void finish() {
      if (!staging.empty()) unpack_strided(local, region, local_stride, element_size, staging.data());
      staging.clear();
    }
  };

  struct send_state final : request_state {
    MPI_Request handle = MPI_REQUEST_NULL;
    std::vector<std::byte> packed;  ///< keeps a strided payload alive until sent
    bool test() override {
      int done = 0;
      TESSERA_MPI(MPI_Test(&handle, &done, MPI_STATUS_IGNORE));
      return done != 0;
    }
    void wait() override { TESSERA_MPI(MPI_Wait(&handle, MPI_STATUS_IGNORE)); }
  };

  static detail::progress_runtime* require_runtime_exists() {
    auto* runtime = detail::active_progress_runtime();
    TESSERA_REQUIRE(runtime != nullptr, invalid_argument,
                    "progress_rank: the environment has no progress ranks; start it with "
                    "environment_options{{.progress_ranks = true}} (or TESSERA_PROGRESS_RANKS=1 with "
                    "environment_options::from_environment_variables())");
    return runtime;
  }

  static detail::progress_runtime* require_runtime(const communicator& comm) {
    auto* runtime = require_runtime_exists();
    int same = MPI_UNEQUAL;
    TESSERA_MPI(MPI_Comm_compare(comm.get(), runtime->compute_comm(), &same));
    TESSERA_REQUIRE(same == MPI_IDENT || same == MPI_CONGRUENT, invalid_argument,
                    "progress_rank: a context must span all compute ranks of the environment, in order (use "
                    "environment::world())");
    return runtime;
  }

  /// Where `rank`'s part of the segment is, if this process can load and store it directly
  /// (the same node, or a one-rank context); null if it goes through a server.
  std::byte* direct_base(const segment_state& s, int rank) const {
    if (runtime_ == nullptr) return s.local_base;
    if (!runtime_->on_my_node(rank)) return nullptr;
    return shared(s).node_bases[static_cast<std::size_t>(runtime_->node_rank_of(rank))];
  }

  static const detail::shared_segment_state& shared(const segment_state& s) {
    auto* w = dynamic_cast<const detail::shared_segment_state*>(&s);
    TESSERA_REQUIRE(w != nullptr, invalid_argument, "progress_rank: segment {} was not made by a progress_rank context",
                    s.id);
    return *w;
  }

  request write(detail::remote_kind kind, const segment_state& s, int rank, const strided_region& r,
                const std::byte* local, std::size_t local_stride, scalar_code scalar) {
    const std::size_t bytes = r.elements() * s.element_size;
    const bool packed_already = r.count == 1 || local_stride == r.block_length;
    if (std::byte* base = direct_base(s, rank)) {
      const std::byte* in = local;
      if (!packed_already) {
        staging_.resize(bytes);
        pack_strided(local, r, local_stride, s.element_size, staging_.data());
        in = staging_.data();
      }
      auto h = detail::make_header(kind, s, rank, r, scalar);
      detail::apply_write(h, base, in);
      return {};
    }
    auto h = detail::make_header(kind, s, rank, r, scalar);
    dirty_servers_.insert(runtime_->server_of(rank));
    auto sending = std::make_unique<send_state>();
    const std::byte* payload = local;
    if (!packed_already) {
      sending->packed.resize(bytes);
      pack_strided(local, r, local_stride, s.element_size, sending->packed.data());
      payload = sending->packed.data();
    }
    const int server = runtime_->server_of(rank);
    if (bytes <= options_.inline_bytes) {
      h.unused = detail::payload_inline;
      message_.resize(sizeof h + bytes);
      std::memcpy(message_.data(), &h, sizeof h);
      std::memcpy(message_.data() + sizeof h, payload, bytes);
      TESSERA_MPI(MPI_Send(message_.data(), static_cast<int>(message_.size()), MPI_BYTE, server,
                           detail::tag_request, runtime_->server_comm()));
      comm_.stats().record(1, message_.size());
      return {};
    }
    communicator::require_int_count(bytes, "progress_rank payload");
    TESSERA_MPI(MPI_Send(&h, sizeof h, MPI_BYTE, server, detail::tag_request, runtime_->server_comm()));
    TESSERA_MPI(MPI_Isend(payload, static_cast<int>(bytes), MPI_BYTE, server, detail::tag_payload,
                          runtime_->server_comm(), &sending->handle));
    comm_.stats().record(2, sizeof h + bytes);
    return request(std::move(sending));
  }

  // Post the receive of the answer, then send the request (with its small payload inline).
  void post_request(detail::remote_header& h, int rank, std::span<const std::byte> payload, std::byte* answer,
                    std::size_t answer_bytes, MPI_Request& receive) {
    const int server = runtime_->server_of(rank);
    h.request_id = static_cast<std::uint64_t>(runtime_->next_reply_tag());
    h.unused = detail::payload_inline;
    communicator::require_int_count(answer_bytes, "progress_rank reply");
    TESSERA_MPI(MPI_Irecv(answer, static_cast<int>(answer_bytes), MPI_BYTE, server, static_cast<int>(h.request_id),
                          runtime_->server_comm(), &receive));
    message_.resize(sizeof h + payload.size());
    std::memcpy(message_.data(), &h, sizeof h);
    if (!payload.empty()) std::memcpy(message_.data() + sizeof h, payload.data(), payload.size());
    TESSERA_MPI(MPI_Send(message_.data(), static_cast<int>(message_.size()), MPI_BYTE, server, detail::tag_request,
                         runtime_->server_comm()));
    comm_.stats().record(1, message_.size() + answer_bytes);
  }

  void flush_server(int rank) {
    detail::remote_header h;
    h.kind = detail::remote_kind::flush;
    h.target = rank;
    MPI_Request ack;
    post_request(h, rank, {}, nullptr, 0, ack);
    TESSERA_MPI(MPI_Wait(&ack, MPI_STATUS_IGNORE));
  }

  communicator comm_;
  progress_rank::options options_;
  detail::progress_runtime* runtime_;  ///< null for a one-rank context
  std::uint32_t next_private_id_ = 0;
  std::unique_ptr<conveyor> messages_;
  std::set<int> dirty_servers_;
  std::vector<std::byte> staging_;
  std::vector<std::byte> message_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PROGRESS_RANK_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PROGRESS_RANK_HPP
#endif
