#pragma once
/// @file
/// tessera::request: the handle of a non-blocking one-sided operation, on any backend.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_REQUEST_HPP
#endif

#include <memory>
#include <utility>

namespace tessera {

/// What a backend implements for one kind of pending operation (for backend
/// authors: a primitive returns `request(std::make_unique<my_state>(...))`).
struct request_state {
  virtual ~request_state() = default;
  /// Drive progress once; true when the operation is locally complete.
  virtual bool test() = 0;
  /// Block (driving progress) until the operation is locally complete.
  virtual void wait() {
    while (!test()) {
    }
  }
};

/// Handle of a non-blocking get, put, accumulate or fetch_add.
///
/// Completion is *local*: after wait() a get's destination holds the data and a
/// put's or accumulate's source buffer may be reused. Remote completion of puts
/// and accumulates (the target sees them) needs flush(target), flush_all() or
/// barrier() on the backend context. A default-constructed request is complete.
/// Destroying an incomplete request waits for it, so buffers never dangle.
class request {
 public:
  request() = default;
  explicit request(std::unique_ptr<request_state> state) : state_(std::move(state)) {}
  request(request&&) noexcept = default;
  request& operator=(request&& other) noexcept {
    if (this != &other) {
      finish_quietly();
      state_ = std::move(other.state_);
    }
    return *this;
  }
  request(const request&) = delete;
  request& operator=(const request&) = delete;
  ~request() { finish_quietly(); }

  /// Drive progress; true once the operation is locally complete.
  [[nodiscard]] bool test() {
    if (state_ && state_->test()) state_.reset();
    return !state_;
  }
  /// Block until the operation is locally complete.
  void wait() {
    if (!state_) return;
    state_->wait();
    state_.reset();
  }

 private:
  void finish_quietly() noexcept {
    try {
      wait();
    } catch (...) {
      // A destructor cannot report it; the next collective operation will.
    }
  }
  std::unique_ptr<request_state> state_;
};

/// Wait for every request in a range.
template <class Range>
void wait_all(Range& requests) {
  for (auto& r : requests) r.wait();
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_REQUEST_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_REQUEST_HPP
#endif
