#pragma once
/// @file
/// aggregator: every transfer is a record in conveyor buffers (bale-style
/// aggregation, optional 2-hop routing); one-sided operations are aggregated
/// requests served by the target's handler and answered by aggregated replies.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_AGGREGATOR_HPP
#endif

// Seen by tessera::instantiations' extern declarations (instantiations/declarations.hpp).
#define TESSERA_COMPONENT_aggregator 1

#include "buckets.hpp"
#include "communicator.hpp"
#include "conveyor.hpp"
#include "detail/remote_op.hpp"
#include "one_sided_api.hpp"
#include "personalised_exchange.hpp"

#include <cstring>
#include <map>
#include <set>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessera {

/// The message-aggregation backend.
///
/// Progress: a target serves requests whenever it is inside any call of this
/// context (an operation, a wait, flush, barrier, a mailbox push or drain) and
/// inside the communicator's barrier/allreduce/collectively, so end every
/// epoch of one-sided operations with barrier() (or any tessera collective)
/// rather than with plain MPI.
///
/// Counts one message per buffer sent, with its bytes (frames included),
/// forwarded and reply buffers too, on the rank that sends it.
struct aggregator : alltoall_exchanges {
  static constexpr std::string_view name() noexcept { return "aggregator"; }

  struct options {
    conveyor_options messaging{};  ///< buffer size and routing of every record this context sends
  };

  class context;
};

namespace detail {
struct aggregator_segment_state final : segment_state {
  std::shared_ptr<std::map<std::uint32_t, segment_state*>> registry;
  std::vector<std::byte> owned;  ///< the memory of allocate()d segments
  ~aggregator_segment_state() override {
    if (registry) registry->erase(id);
  }
};
}  // namespace detail

/// Per-communicator state of the aggregator backend. Collective to make.
class aggregator::context : public one_sided_api<aggregator::context> {
 public:
  explicit context(const communicator& comm, aggregator::options options = {})
      : comm_(comm), messages_(std::make_unique<conveyor>(comm, options.messaging)) {
    request_channel_ = messages_->add_channel([this](int origin, std::span<const std::byte> b) { serve(origin, b); });
    reply_channel_ = messages_->add_channel([this](int, std::span<const std::byte> b) { complete(b); });
    hook_ = comm_.add_progress_hook([this] { messages_->progress(true); });
  }
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  ~context() { comm_.remove_progress_hook(hook_); }

  [[nodiscard]] const communicator& comm() const noexcept { return comm_; }
  [[nodiscard]] conveyor& messages() noexcept { return *messages_; }

  template <class T>
    requires std::is_trivially_copyable_v<T>
  segment<T> allocate(std::size_t n) {
    auto state = make_state<T>(n);
    state->owned.resize(n * sizeof(T));
    state->local_base = state->owned.data();
    return segment<T>(std::move(state));
  }

  template <class T>
    requires std::is_trivially_copyable_v<T>
  segment<T> expose(std::span<T> memory) {
    auto state = make_state<T>(memory.size());
    state->local_base = reinterpret_cast<std::byte*>(memory.data());
    return segment<T>(std::move(state));
  }

  request start_get(const segment_state& s, int rank, const strided_region& r, std::byte* local,
                    std::size_t local_stride) {
    auto h = detail::make_header(detail::remote_kind::get, s, rank, r, scalar_code::opaque);
    return send_with_reply(h, rank, {}, local, local_stride);
  }

  request start_put(const segment_state& s, int rank, const strided_region& r, const std::byte* local,
                    std::size_t local_stride) {
    auto h = detail::make_header(detail::remote_kind::put, s, rank, r, scalar_code::opaque);
    send_payload(h, rank, local, local_stride);
    return {};  // the data is in a conveyor buffer: locally complete
  }

  request start_accumulate(const segment_state& s, int rank, const strided_region& r, const std::byte* local,
                           std::size_t local_stride, scalar_code scalar) {
    auto h = detail::make_header(detail::remote_kind::accumulate, s, rank, r, scalar);
    send_payload(h, rank, local, local_stride);
    return {};
  }

  request start_fetch_add(const segment_state& s, int rank, std::size_t offset, std::int64_t value,
                          std::int64_t* old) {
    auto h = detail::make_header(detail::remote_kind::fetch_add, s, rank, strided_region::contiguous(offset, 1),
                                 scalar_code::i64);
    return send_with_reply(h, rank, std::as_bytes(std::span<const std::int64_t, 1>(&value, 1)),
                           reinterpret_cast<std::byte*>(old), 1);
  }

  /// Remote completion of this rank's puts and accumulates to `rank`: an
  /// acknowledged flush record follows them down the same (FIFO) route.
  void flush(int rank) {
    if (!dirty_.contains(rank)) return;
    dirty_.erase(rank);
    auto h = flush_header(rank);
    send_with_reply(h, rank, {}, nullptr, 0).wait();
  }
  void flush_all() {
    std::vector<request> acks;
    for (int rank : dirty_) {
      auto h = flush_header(rank);
      acks.push_back(send_with_reply(h, rank, {}, nullptr, 0));
    }
    dirty_.clear();
    wait_all(acks);
  }
  /// Collective: the conveyor drains, so every request and reply anywhere has been handled.
  void barrier() {
    messages_->drain();
    dirty_.clear();
  }

 private:
  struct pending {
    std::byte* local = nullptr;
    strided_region region;
    std::size_t local_stride = 0;
    std::size_t element_size = 0;
    std::shared_ptr<bool> done;
  };

  struct reply_request final : request_state {
    conveyor* transport;
    std::shared_ptr<bool> done;
    reply_request(conveyor* t, std::shared_ptr<bool> d) : transport(t), done(std::move(d)) {}
    bool test() override {
      if (!*done) transport->progress(true);
      return *done;
    }
    void wait() override {
      while (!*done) transport->progress(true);
    }
  };

  template <class T>
  std::shared_ptr<detail::aggregator_segment_state> make_state(std::size_t n) {
    auto state = std::make_shared<detail::aggregator_segment_state>();
    state->id = next_id_++;
    state->element_size = sizeof(T);
    state->rank = comm_.rank();
    const auto all = comm_.allgather(static_cast<std::uint64_t>(n));
    state->extents.assign(all.begin(), all.end());
    state->registry = registry_;
    registry_->emplace(state->id, state.get());
    return state;
  }

  detail::remote_header flush_header(int rank) const {
    detail::remote_header h;
    h.kind = detail::remote_kind::flush;
    h.target = rank;
    return h;
  }

  void send_payload(detail::remote_header& h, int rank, const std::byte* local, std::size_t local_stride) {
    const std::size_t bytes = detail::request_bytes(h);
    dirty_.insert(rank);
    if (h.count == 1 || local_stride == h.block_length) {
      messages_->send(rank, request_channel_, as_bytes(h), {local, bytes});
      return;
    }
    staging_.resize(bytes);
    pack_strided(local, h.region(), local_stride, h.element_size, staging_.data());
    messages_->send(rank, request_channel_, as_bytes(h), staging_);
  }

  request send_with_reply(detail::remote_header& h, int rank, std::span<const std::byte> payload, std::byte* local,
                          std::size_t local_stride) {
    h.request_id = next_request_++;
    auto done = std::make_shared<bool>(false);
    pending_.emplace(h.request_id, pending{local, h.region(), local_stride, h.element_size, done});
    messages_->send(rank, request_channel_, as_bytes(h), payload);
    return request(std::make_unique<reply_request>(messages_.get(), std::move(done)));
  }

  static std::span<const std::byte> as_bytes(const detail::remote_header& h) {
    return std::as_bytes(std::span<const detail::remote_header, 1>(&h, 1));
  }

  // At the target: apply one request, answer it if it expects an answer.
  void serve(int origin, std::span<const std::byte> bytes) {
    detail::remote_header h;
    std::memcpy(&h, bytes.data(), sizeof h);
    const std::byte* payload = bytes.data() + sizeof h;
    std::byte* base = nullptr;
    if (h.kind != detail::remote_kind::flush) {
      auto it = registry_->find(h.segment);
      TESSERA_REQUIRE(it != registry_->end(), internal,
                      "aggregator: rank {} got a request for segment {}, which it does not hold", comm_.rank(),
                      h.segment);
      base = it->second->local_base;
    }
    const std::size_t answer = detail::reply_bytes(h);
    if (h.kind == detail::remote_kind::put || h.kind == detail::remote_kind::accumulate) {
      detail::apply_write(h, base, payload);
      return;
    }
    reply_.resize(sizeof(std::uint64_t) + answer);
    std::memcpy(reply_.data(), &h.request_id, sizeof(std::uint64_t));
    detail::apply_remote(h, base, payload, reply_.data() + sizeof(std::uint64_t));
    messages_->send(origin, reply_channel_, reply_);
  }

  // At the origin: an answer arrived.
  void complete(std::span<const std::byte> bytes) {
    std::uint64_t id = 0;
    std::memcpy(&id, bytes.data(), sizeof id);
    auto it = pending_.find(id);
    TESSERA_REQUIRE(it != pending_.end(), internal, "aggregator: reply to unknown request {}", id);
    auto& p = it->second;
    if (p.local != nullptr)
      unpack_strided(p.local, p.region, p.local_stride, p.element_size, bytes.data() + sizeof id);
    *p.done = true;
    pending_.erase(it);
  }

  communicator comm_;
  std::unique_ptr<conveyor> messages_;
  std::uint32_t request_channel_ = 0;
  std::uint32_t reply_channel_ = 0;
  int hook_ = -1;
  std::uint32_t next_id_ = 0;
  std::uint64_t next_request_ = 1;
  std::shared_ptr<std::map<std::uint32_t, segment_state*>> registry_ =
      std::make_shared<std::map<std::uint32_t, segment_state*>>();
  std::unordered_map<std::uint64_t, pending> pending_;
  std::set<int> dirty_;
  std::vector<std::byte> staging_;
  std::vector<std::byte> reply_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_AGGREGATOR_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_AGGREGATOR_HPP
#endif
