#pragma once
/// @file
/// planned_exchange: who sends how many records to whom in an exchange that an inspector worked
/// out once, so that every later exchange moves values only (no size all-to-all where the backend
/// has exchange_planned). Plans are compositions of it: SpMM on a grid answers X's rows along the
/// inverse of the exchange that asked for them, transpose_plan sends A's values along the
/// exchange that routed its coordinates. Ginkgo's collective communicator, with create_inverse(),
/// is the model; the exchange itself runs through a backend (exchange_planned,
/// concepts/backend.hpp).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PLANNED_EXCHANGE_HPP
#endif

#include "buckets.hpp"
#include "communicator.hpp"

#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace tessera {

class planned_exchange {
 public:
  /// The empty exchange (nothing to and from nobody).
  planned_exchange() = default;

  /// This rank sends records [send_offsets[r], send_offsets[r+1]) to rank r and receives
  /// [receive_offsets[r], receive_offsets[r+1]) from rank r (P + 1 entries each, in records).
  planned_exchange(std::vector<std::size_t> send_offsets, std::vector<std::size_t> receive_offsets)
      : send_(std::move(send_offsets)), receive_(std::move(receive_offsets)) {}

  /// Offsets (P + 1 entries) from per-rank counts.
  [[nodiscard]] static std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts) {
    std::vector<std::size_t> offsets(counts.size() + 1, 0);
    std::partial_sum(counts.begin(), counts.end(), offsets.begin() + 1);
    return offsets;
  }

  /// The exchange that answers this one: every rank sends back to each rank as many records as it
  /// received from it (a request's reply). Not collective.
  [[nodiscard]] planned_exchange inverse() const { return {receive_, send_}; }

  /// The same exchange with each record `width` times as large (k values per row, bytes per value).
  [[nodiscard]] planned_exchange scaled(std::size_t width) const {
    planned_exchange wider(send_, receive_);
    for (auto& at : wider.send_) at *= width;
    for (auto& at : wider.receive_) at *= width;
    return wider;
  }

  [[nodiscard]] const std::vector<std::size_t>& send_offsets() const noexcept { return send_; }
  [[nodiscard]] const std::vector<std::size_t>& receive_offsets() const noexcept { return receive_; }
  /// Records this rank sends, and receives, per exchange.
  [[nodiscard]] std::size_t sends() const noexcept { return send_.empty() ? 0 : send_.back(); }
  [[nodiscard]] std::size_t receives() const noexcept { return receive_.empty() ? 0 : receive_.back(); }

  /// A send buffer laid out for this exchange (sends() records, bucket r for rank r).
  template <class T>
  [[nodiscard]] buckets<T> send_buffer() const {
    return buckets<T>{std::vector<T>(sends()), send_};
  }

  friend bool operator==(const planned_exchange&, const planned_exchange&) = default;

 private:
  std::vector<std::size_t> send_, receive_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PLANNED_EXCHANGE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_PLANNED_EXCHANGE_HPP
#endif
