#pragma once
/// @file
/// mailbox<Record>: push small records to any rank; a handler runs at the destination.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MAILBOX_HPP
#endif

#include "conveyor.hpp"

#include <concepts>
#include <cstring>
#include <span>
#include <type_traits>

namespace tessera {

/// Typed, aggregated fine-grained messaging over a conveyor.
///
/// @code
/// std::vector<std::int64_t> histogram(local_bins);
/// tessera::mailbox<std::int64_t> updates(ctx.messages(), [&](int /*origin*/, std::int64_t bin) {
///   ++histogram[bin];
/// });
/// for (auto global_bin : my_updates) updates.push(owner(global_bin), local(global_bin));
/// updates.drain();  // collective: every update has been applied everywhere
/// @endcode
///
/// Create mailboxes in the same order on every rank (they are matched by
/// creation order). A handler may push more records (to any mailbox of the
/// same conveyor); drain() waits for those too.
template <class Record>
  requires std::is_trivially_copyable_v<Record>
class mailbox {
 public:
  template <class Handler>
    requires std::invocable<Handler&, int, const Record&>
  mailbox(conveyor& transport, Handler handler) : transport_(&transport) {
    channel_ = transport.add_channel([handler = std::move(handler)](int origin, std::span<const std::byte> bytes) mutable {
      Record record;
      std::memcpy(&record, bytes.data(), sizeof(Record));
      handler(origin, std::as_const(record));
    });
  }
  mailbox(const mailbox&) = delete;
  mailbox& operator=(const mailbox&) = delete;
  ~mailbox() { transport_->remove_channel(channel_); }

  /// Queue `record` for `destination`'s handler.
  void push(int destination, const Record& record) {
    transport_->send(destination, channel_, std::as_bytes(std::span<const Record, 1>(&record, 1)));
  }
  /// Collective: return once every record pushed anywhere has been handled.
  void drain() { transport_->drain(); }
  /// Serve incoming records without waiting.
  void progress() { transport_->progress(); }

  [[nodiscard]] conveyor& transport() const noexcept { return *transport_; }

 private:
  conveyor* transport_;
  std::uint32_t channel_ = 0;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MAILBOX_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MAILBOX_HPP
#endif
