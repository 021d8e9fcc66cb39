#pragma once
/// @file
/// conveyor: fine-grained messages aggregated into per-destination buffers,
/// with optional 2-hop routing and a collective drain that terminates only
/// when every message pushed anywhere has been handled (bale's conveyors,
/// Chapel's aggregators). Every backend's mailboxes run on it, and the
/// aggregator backend builds its one-sided operations on top of it.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_CONVEYOR_HPP
#endif

#include <mpi.h>

#include "../core/error.hpp"
#include "../core/uninitialized_allocator.hpp"
#include "communicator.hpp"
#include "mpi_check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace tessera {

/// How records travel from origin to destination.
enum class routing {
  direct,   ///< one hop: every rank may exchange buffers with every other rank
  two_hop,  ///< through a virtual sqrt(P) x sqrt(P) grid: along the row, then along the column,
            ///< so each rank exchanges buffers with about 2 sqrt(P) peers
};

/// Settings of a conveyor.
struct conveyor_options {
  /// Capacity of each per-destination buffer. A buffer is sent (non-blocking)
  /// when the next record would not fit; a record larger than this goes alone.
  std::size_t buffer_bytes = std::size_t{1} << 16;
  routing route = routing::direct;
  /// Sends in flight before a pushing rank stops to serve incoming buffers
  /// (0: twice the number of peers, plus 8).
  std::size_t max_in_flight = 0;
};

/// The aggregation engine. Not thread-safe: one conveyor per thread of MPI calls.
///
/// Frames on the wire: [channel u32][length u32] (+ [origin i32][destination i32]
/// with two_hop routing), then `length` payload bytes, packed without padding.
/// Traffic is recorded in the communicator's counters when a buffer is sent:
/// one message and the buffer's bytes, forwarded buffers included; records to
/// oneself are handled locally and never counted.
class conveyor {
 public:
  using handler = std::function<void(int origin, std::span<const std::byte> payload)>;

  /// Collective over `comm`: the conveyor gets its own duplicate for its messages.
  explicit conveyor(const communicator& comm, conveyor_options options = {})
      : comm_(comm), options_(options), rank_(comm.rank()), size_(comm.size()) {
    TESSERA_MPI(MPI_Comm_dup(comm.get(), &wire_));
    TESSERA_MPI(MPI_Comm_set_errhandler(wire_, MPI_ERRORS_RETURN));
    header_bytes_ = options_.route == routing::direct ? 8 : 16;
    grid_columns_ = grid_columns(size_);
    if (options_.max_in_flight == 0) options_.max_in_flight = 2 * static_cast<std::size_t>(peer_bound()) + 8;
    outgoing_.resize(static_cast<std::size_t>(size_));
    contacted_.assign(static_cast<std::size_t>(size_), false);
  }

  conveyor(const conveyor&) = delete;
  conveyor& operator=(const conveyor&) = delete;

  ~conveyor() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    // Buffers still in flight belong to a program that skipped drain(); cancel rather than hang.
    for (auto& r : in_flight_requests_) {
      MPI_Cancel(&r);
      MPI_Request_free(&r);
    }
    MPI_Comm_free(&wire_);
  }

  [[nodiscard]] const communicator& comm() const noexcept { return comm_; }
  [[nodiscard]] const conveyor_options& options() const noexcept { return options_; }
  /// Bytes of framing each record carries on the wire.
  [[nodiscard]] std::size_t frame_header_bytes() const noexcept { return header_bytes_; }

  /// Register the handler of a new channel. Channels are numbered in creation
  /// order, so every rank must create them in the same order.
  std::uint32_t add_channel(handler h) {
    const auto id = next_channel_++;
    channels_.emplace(id, std::move(h));
    return id;
  }
  void remove_channel(std::uint32_t id) { channels_.erase(id); }

  /// Queue one record for `destination`'s handler of `channel`; its payload is
  /// the concatenation of `head` and `tail`. May send a full buffer and serve
  /// incoming ones.
  void send(int destination, std::uint32_t channel, std::span<const std::byte> head,
            std::span<const std::byte> tail = {}) {
    // The hot path of every record: the refusals live out of line so that this stays small
    // enough to be inlined into the caller's loop.
    if (destination < 0 || destination >= size_) [[unlikely]]
      refuse_destination(destination);
    const std::size_t length = head.size() + tail.size();
    if (length > UINT32_MAX) [[unlikely]]
      refuse_length(length);
    // Records to this rank go through outgoing_[rank] like any other (handled at the next progress):
    // no branch on the destination, which random destinations mispredicted half the time.
    enqueue(next_hop(destination), channel, static_cast<std::uint32_t>(length), rank_, destination, head, tail);
  }

  /// Serve what has arrived: complete finished sends, run handlers of records
  /// for this rank, forward records for others. With `eager`, also send every
  /// partially filled buffer (used while waiting, so nothing sits idle).
  void progress(bool eager = false) {
    if (in_progress_) return;
    in_progress_ = true;
    struct reset_flag {
      bool& flag;
      ~reset_flag() { flag = false; }
    } reset{in_progress_};
    complete_sends();
    handle_early();
    handle_self_queue();
    for (int received = 0; received < 64; ++received) {
      int arrived = 0;
      MPI_Status status;
      TESSERA_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, wire_, &arrived, &status));
      if (!arrived) break;
      int bytes = 0;
      TESSERA_MPI(MPI_Get_count(&status, MPI_BYTE, &bytes));
      receive_buffer_.resize(static_cast<std::size_t>(bytes));
      TESSERA_MPI(MPI_Recv(receive_buffer_.data(), bytes, MPI_BYTE, status.MPI_SOURCE, tag, wire_, MPI_STATUS_IGNORE));
      // Handlers may send, which never re-enters progress, so the buffer is stable while parsed;
      // but a handler could call progress() on another path, so parse a private copy.
      frame_bytes message;
      message.swap(receive_buffer_);
      handle_frames(message, status.MPI_SOURCE);
      if (receive_buffer_.capacity() < message.capacity()) receive_buffer_.swap(message);
      handle_self_queue();
    }
    if (eager) flush();
  }

  /// Start sending every non-empty buffer (non-blocking).
  void flush() {
    for (int hop = 0; hop < size_; ++hop)
      if (!outgoing_[static_cast<std::size_t>(hop)].empty()) send_buffer(hop);
  }

  /// Collective: return when every record pushed on any rank, and every record
  /// its handlers pushed in turn, has been handled.
  ///
  /// Rounds of: send everything and wait until it was received; enter a
  /// non-blocking barrier and keep serving until it completes; then one
  /// reduction asks whether any rank still holds or sent records. Synchronous
  /// sends make "received" mean "handled", so a quiet round is the end.
  /// Records handlers send meanwhile go out at once, so a rank that has not
  /// reached drain yet (waiting for a reply) is never starved.
  ///
  /// If a handler threw on any rank since the last drain, every rank throws
  /// here (tessera::error, kind `external` for a non-tessera exception, with the
  /// failing rank), after every record has still been delivered.
  void drain() {
    for (;;) {
      do {
        flush();
        progress();
      } while (busy());
      sent_during_barrier_ = false;
      MPI_Request barrier;
      TESSERA_MPI(MPI_Ibarrier(wire_, &barrier));
      for (int done = 0; !done;) {
        // Eager: a rank still outside drain may be waiting for a reply a handler here just queued.
        progress(true);
        TESSERA_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
      }
      // Whether any rank is still busy, and whether a handler failed anywhere, in one reduction.
      int mine[2] = {busy() || sent_during_barrier_ ? 1 : 0, handler_failure_ ? 1 : 0}, anyone[2] = {0, 0};
      TESSERA_MPI(MPI_Allreduce(mine, anyone, 2, MPI_INT, MPI_MAX, wire_));
      if (anyone[0]) continue;
      if (anyone[1]) comm_.agree(std::exchange(handler_failure_, nullptr));
      return;
    }
  }

  /// The rank a record for `destination` is sent to first.
  [[nodiscard]] int next_hop(int destination) const noexcept {
    return next_hop(rank_, destination, size_, options_.route);
  }

  /// The first hop from `origin` to `destination` among `size` ranks.
  [[nodiscard]] static int next_hop(int origin, int destination, int size, routing route) noexcept {
    if (route == routing::direct) return destination;
    const int columns = grid_columns(size);
    const int my_row = origin / columns, my_col = origin % columns;
    const int dest_row = destination / columns, dest_col = destination % columns;
    if (my_row == dest_row || my_col == dest_col) return destination;
    const int along_row = my_row * columns + dest_col;  // then down dest_col
    if (along_row < size) return along_row;
    return dest_row * columns + my_col;  // the last grid row is short: go down first
  }
  /// Sends a record from `origin` to `destination` takes (0 to oneself).
  [[nodiscard]] static int hops(int origin, int destination, int size, routing route) noexcept {
    if (origin == destination) return 0;
    return next_hop(origin, destination, size, route) == destination ? 1 : 2;
  }
  /// Columns of the virtual grid of two_hop routing: ceil(sqrt(size)).
  [[nodiscard]] static int grid_columns(int size) noexcept {
    int c = 1;
    while (c * c < size) ++c;
    return c;
  }

  /// Distinct ranks this rank has sent buffers to since the conveyor was made.
  [[nodiscard]] int peers_contacted() const noexcept {
    int n = 0;
    for (bool c : contacted_) n += c ? 1 : 0;
    return n;
  }

 private:
  static constexpr int tag = 0x7e57;
  /// Frames are written right after their buffer grows: no zeroing first.
  using frame_bytes = std::vector<std::byte, uninitialized_allocator<std::byte>>;

  [[nodiscard]] int peer_bound() const noexcept {
    return options_.route == routing::direct ? size_ - 1 : 2 * grid_columns_;
  }

  [[nodiscard]] bool busy() const noexcept {
    if (!in_flight_requests_.empty() || !self_queue_.empty()) return true;
    if (!early_.empty() && early_.begin()->first < next_channel_) return true;
    for (const auto& b : outgoing_)
      if (!b.empty()) return true;
    return false;
  }

  void append_frame(frame_bytes& buffer, std::uint32_t channel, std::uint32_t length, int origin,
                    int destination, std::span<const std::byte> head, std::span<const std::byte> tail) const {
    const std::size_t at = buffer.size();
    buffer.resize(at + header_bytes_ + length);
    std::byte* p = buffer.data() + at;
    std::memcpy(p, &channel, 4);
    std::memcpy(p + 4, &length, 4);
    if (header_bytes_ == 16) {
      std::memcpy(p + 8, &origin, 4);
      std::memcpy(p + 12, &destination, 4);
    }
    if (!head.empty()) std::memcpy(p + header_bytes_, head.data(), head.size());
    if (!tail.empty()) std::memcpy(p + header_bytes_ + head.size(), tail.data(), tail.size());
  }

  [[noreturn, gnu::cold, gnu::noinline]] void refuse_destination(int destination) const {
    TESSERA_THROW(index_out_of_range, "conveyor: destination rank {} outside a communicator of {} ranks", destination,
                  size_);
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_length(std::size_t length) {
    TESSERA_THROW(unsupported, "conveyor: a record of {} bytes exceeds 4 GiB", length);
  }

  void enqueue(int hop, std::uint32_t channel, std::uint32_t length, int origin, int destination,
               std::span<const std::byte> head, std::span<const std::byte> tail) {
    auto& buffer = outgoing_[static_cast<std::size_t>(hop)];
    const std::size_t frame = header_bytes_ + length;
    // A buffer holds at most buffer_bytes (unless one frame is larger): exactly the records the
    // counters' bounds expect per message, whatever capacity a reused buffer brings.
    if (buffer.size() + frame > std::min(buffer.capacity(), options_.buffer_bytes)) [[unlikely]]
      make_room(hop, frame);
    append_frame(buffer, channel, length, origin, destination, head, tail);
    if (buffer.size() >= options_.buffer_bytes) [[unlikely]]
      send_buffer(hop);
  }

  /// Room for a frame in outgoing_[hop]: the full buffer goes first, an empty one is sized.
  [[gnu::noinline]] void make_room(int hop, std::size_t frame) {
    auto& buffer = outgoing_[static_cast<std::size_t>(hop)];
    if (!buffer.empty() && buffer.size() + frame > options_.buffer_bytes) send_buffer(hop);
    if (buffer.capacity() < options_.buffer_bytes || buffer.size() + frame > buffer.capacity())
      buffer.reserve(std::max(options_.buffer_bytes, buffer.size() + frame));
  }

  [[gnu::noinline]] void send_buffer(int hop) {
    if (hop == rank_) {
      queue_self();
      return;
    }
    auto& buffer = outgoing_[static_cast<std::size_t>(hop)];
    communicator::require_int_count(buffer.size(), "conveyor buffer");
    MPI_Request r;
    TESSERA_MPI(MPI_Issend(buffer.data(), static_cast<int>(buffer.size()), MPI_BYTE, hop, tag, wire_, &r));
    comm_.stats().record(1, buffer.size());
    contacted_[static_cast<std::size_t>(hop)] = true;
    sent_during_barrier_ = true;
    in_flight_requests_.push_back(r);
    in_flight_buffers_.push_back(std::move(buffer));
    buffer = take_spare();
    // Bound the memory in flight: serve others while waiting for ours to be received.
    // Inside a handler we cannot (no re-entry), so the bound is soft there.
    while (!in_progress_ && in_flight_requests_.size() > options_.max_in_flight) progress();
  }

  frame_bytes take_spare() {
    if (spares_.empty()) return {};
    auto b = std::move(spares_.back());
    spares_.pop_back();
    b.clear();
    return b;
  }

  void complete_sends() {
    if (in_flight_requests_.empty()) return;
    int completed = 0;
    completions_.resize(in_flight_requests_.size());
    TESSERA_MPI(MPI_Testsome(static_cast<int>(in_flight_requests_.size()), in_flight_requests_.data(), &completed,
                             completions_.data(), MPI_STATUSES_IGNORE));
    if (completed <= 0) return;  // MPI_UNDEFINED when none were active
    std::size_t kept = 0;
    for (std::size_t i = 0; i < in_flight_requests_.size(); ++i) {
      if (in_flight_requests_[i] == MPI_REQUEST_NULL) {
        if (spares_.size() < 8) spares_.push_back(std::move(in_flight_buffers_[i]));
        continue;
      }
      in_flight_requests_[kept] = in_flight_requests_[i];
      if (kept != i) in_flight_buffers_[kept] = std::move(in_flight_buffers_[i]);
      ++kept;
    }
    in_flight_requests_.resize(kept);
    in_flight_buffers_.resize(kept);
  }

  void handle_early() {
    while (!early_.empty() && early_.begin()->first < next_channel_) {
      auto records = std::move(early_.begin()->second);
      const auto channel = early_.begin()->first;
      early_.erase(early_.begin());
      auto it = channels_.find(channel);
      TESSERA_REQUIRE(it != channels_.end(), internal, "conveyor: records for channel {} arrived after it closed",
                      channel);
      for (std::size_t at = 0; at < records.size();) {
        int origin = 0;
        std::uint32_t length = 0;
        std::memcpy(&origin, records.data() + at, 4);
        std::memcpy(&length, records.data() + at + 4, 4);
        deliver(it->second, origin, std::span<const std::byte>(records.data() + at + 8, length));
        at += 8 + length;
      }
    }
  }

  /// Move the records this rank sent itself to the queue progress() handles (not counted: no message).
  void queue_self() {
    auto& own = outgoing_[static_cast<std::size_t>(rank_)];
    if (own.empty()) return;
    if (self_queue_.empty()) {
      self_queue_.swap(own);
    } else {
      self_queue_.insert(self_queue_.end(), own.begin(), own.end());
    }
    own.clear();
  }

  void handle_self_queue() {
    // Two buffers that trade places keep their capacity: a fresh one per round was a page fault
    // and a zeroing per round at millions of self-addressed records. Records the handlers send
    // this rank are handled in the same call, as they always were.
    for (queue_self(); !self_queue_.empty(); queue_self()) {
      self_handling_.clear();
      self_handling_.swap(self_queue_);
      handle_frames(self_handling_, rank_);
    }
  }

  void handle_frames(const frame_bytes& frames, int source) {
    std::size_t at = 0;
    // Consecutive records mostly share a channel: look it up once per run, not once per record.
    std::uint32_t known_channel = 0;
    handler* known = nullptr;
    while (at < frames.size()) {
      TESSERA_REQUIRE(frames.size() - at >= header_bytes_, internal, "conveyor: truncated frame from rank {}", source);
      std::uint32_t channel = 0, length = 0;
      int origin = source, destination = rank_;
      std::memcpy(&channel, frames.data() + at, 4);
      std::memcpy(&length, frames.data() + at + 4, 4);
      if (header_bytes_ == 16) {
        std::memcpy(&origin, frames.data() + at + 8, 4);
        std::memcpy(&destination, frames.data() + at + 12, 4);
      }
      const std::span<const std::byte> payload(frames.data() + at + header_bytes_, length);
      at += header_bytes_ + length;
      if (destination != rank_) {  // second hop
        enqueue(next_hop(destination), channel, length, origin, destination, payload, {});
        continue;
      }
      if (channel >= next_channel_) {
        // The sender created this mailbox before we did: keep the record until we do.
        auto& early = early_[channel];
        const auto at_early = early.size();
        early.resize(at_early + 8 + length);
        std::memcpy(early.data() + at_early, &origin, 4);
        std::memcpy(early.data() + at_early + 4, &length, 4);
        std::memcpy(early.data() + at_early + 8, payload.data(), length);
        continue;
      }
      if (known == nullptr || channel != known_channel) {
        auto it = channels_.find(channel);
        TESSERA_REQUIRE(it != channels_.end(), internal,
                        "conveyor: rank {} got a record for channel {}, which it has not created (mailboxes must be "
                        "created in the same order on every rank)",
                        rank_, channel);
        known_channel = channel;
        known = &it->second;
      }
      deliver(*known, origin, payload);
    }
  }

  // A handler is the user's code: what it throws is kept (the first failure) and raised on
  // every rank at the end of drain(). Records keep flowing meanwhile, so the termination
  // protocol completes on every rank and none is left waiting for this one.
  void deliver(handler& h, int origin, std::span<const std::byte> payload) {
    try {
      h(origin, payload);
    } catch (...) {
      if (!handler_failure_) handler_failure_ = std::current_exception();
    }
  }

  communicator comm_;
  conveyor_options options_;
  int rank_;
  int size_;
  MPI_Comm wire_ = MPI_COMM_NULL;
  std::size_t header_bytes_ = 8;
  int grid_columns_ = 1;
  std::uint32_t next_channel_ = 0;
  std::map<std::uint32_t, handler> channels_;
  std::map<std::uint32_t, frame_bytes> early_;  ///< [origin][length][payload] for channels not made yet
  std::vector<frame_bytes> outgoing_;
  frame_bytes self_queue_;
  frame_bytes self_handling_;  ///< the self-addressed frames being handled
  frame_bytes receive_buffer_;
  std::vector<MPI_Request> in_flight_requests_;
  std::vector<frame_bytes> in_flight_buffers_;
  std::vector<frame_bytes> spares_;
  std::vector<int> completions_;
  std::vector<bool> contacted_;
  std::exception_ptr handler_failure_;  ///< the first exception a handler threw since the last drain
  bool in_progress_ = false;
  bool sent_during_barrier_ = false;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_CONVEYOR_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_CONVEYOR_HPP
#endif
