#pragma once
/// @file
/// Per-rank buckets of trivially copyable records, stored flat.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_BUCKETS_HPP
#endif

#include "../core/error.hpp"

#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace tessera {

/// Records grouped by rank: bucket r is data[offsets[r], offsets[r+1]).
///
/// Used both for what a rank sends (bucket r goes to rank r) and for what it
/// received (bucket r came from rank r). Flat storage: one allocation however
/// many ranks there are.
template <class T>
  requires std::is_trivially_copyable_v<T>
struct buckets {
  std::vector<T> data;
  std::vector<std::size_t> offsets;  ///< size num_ranks + 1

  [[nodiscard]] int num_ranks() const noexcept { return offsets.empty() ? 0 : static_cast<int>(offsets.size()) - 1; }
  [[nodiscard]] std::span<const T> bucket(int r) const {
    return {data.data() + offsets[static_cast<std::size_t>(r)], offsets[static_cast<std::size_t>(r) + 1] - offsets[static_cast<std::size_t>(r)]};
  }
  [[nodiscard]] std::span<T> bucket(int r) {
    return {data.data() + offsets[static_cast<std::size_t>(r)], offsets[static_cast<std::size_t>(r) + 1] - offsets[static_cast<std::size_t>(r)]};
  }
};

/// Builds buckets in two passes (count, then fill) so records are written once, in place.
///
/// @code
/// bucket_builder<rec> b(P);
/// for (auto& x : items) b.count(dest(x));
/// b.allocate();
/// for (auto& x : items) b.push(dest(x), make_rec(x));
/// auto out = std::move(b).finish();
/// @endcode
template <class T>
class bucket_builder {
 public:
  explicit bucket_builder(int num_ranks) : counts_(static_cast<std::size_t>(num_ranks) + 1, 0) {}

  void count(int rank, std::size_t n = 1) { counts_[static_cast<std::size_t>(rank) + 1] += n; }

  void allocate() {
    for (std::size_t r = 1; r < counts_.size(); ++r) counts_[r] += counts_[r - 1];
    result_.offsets = counts_;
    result_.data.resize(counts_.back());
    cursor_.assign(counts_.begin(), counts_.end() - 1);
  }

  void push(int rank, const T& record) { result_.data[cursor_[static_cast<std::size_t>(rank)]++] = record; }

  /// Room for the next `n` elements of bucket `rank`, for records the caller serialises itself.
  [[nodiscard]] T* claim(int rank, std::size_t n) {
    auto& at = cursor_[static_cast<std::size_t>(rank)];
    T* where = result_.data.data() + at;
    at += n;
    return where;
  }

  [[nodiscard]] buckets<T> finish() && { return std::move(result_); }

 private:
  std::vector<std::size_t> counts_;
  std::vector<std::size_t> cursor_;
  buckets<T> result_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_BUCKETS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_BUCKETS_HPP
#endif
