#pragma once
/// @file
/// segment<T>: memory that every rank of a communicator exposes to one-sided access,
/// and strided_region, the block-strided shape of one transfer.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SEGMENT_HPP
#endif

#include "../core/error.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tessera {

/// `count` blocks of `block_length` consecutive elements, the first at `offset`,
/// each `stride` elements after the previous one: a submatrix of a row-major
/// matrix with leading dimension `stride` is {first, rows, columns, stride}.
/// A contiguous range is {offset, 1, length, length}.
struct strided_region {
  std::size_t offset = 0;
  std::size_t count = 0;
  std::size_t block_length = 0;
  std::size_t stride = 0;

  /// A contiguous range of `length` elements starting at `offset`.
  [[nodiscard]] static constexpr strided_region contiguous(std::size_t offset, std::size_t length) noexcept {
    return {offset, 1, length, length};
  }
  /// Elements transferred.
  [[nodiscard]] constexpr std::size_t elements() const noexcept { return count * block_length; }
  /// One past the last element touched, relative to `offset`.
  [[nodiscard]] constexpr std::size_t span() const noexcept {
    return count == 0 || block_length == 0 ? 0 : (count - 1) * stride + block_length;
  }
};

/// What every backend knows of a registered segment (for backend authors: a
/// context's allocate/expose make one, derived to hold the backend's resources,
/// an MPI window or a shared-memory window, released by the derived destructor).
struct segment_state {
  virtual ~segment_state() = default;
  std::uint32_t id = 0;
  std::byte* local_base = nullptr;
  std::size_t element_size = 0;
  std::vector<std::size_t> extents;  ///< elements exposed by each rank
  int rank = 0;                      ///< this rank in the segment's communicator
};

namespace detail {

/// Throw unless `region` fits in `rank`'s part of the segment.
inline void check_region(const segment_state& s, int rank, const strided_region& region, const char* operation) {
  const int ranks = static_cast<int>(s.extents.size());
  TESSERA_REQUIRE(rank >= 0 && rank < ranks, index_out_of_range,
                  "{}: target rank {} is not a rank of the segment's communicator (size {})", operation, rank, ranks);
  TESSERA_REQUIRE(region.count <= 1 || region.stride >= region.block_length, invalid_argument,
                  "{}: stride {} is shorter than the block length {}, so blocks would overlap", operation,
                  region.stride, region.block_length);
  const std::size_t extent = s.extents[static_cast<std::size_t>(rank)];
  TESSERA_REQUIRE(region.offset <= extent && region.span() <= extent - region.offset, index_out_of_range,
                  "{}: elements [{}, {}) lie beyond rank {}'s segment of {} elements", operation, region.offset,
                  region.offset + region.span(), rank, extent);
}

/// Throw unless a local buffer of `size` elements holds `region`'s blocks at `local_stride`.
inline void check_local(std::size_t size, const strided_region& region, std::size_t local_stride,
                        const char* operation) {
  TESSERA_REQUIRE(region.count <= 1 || local_stride >= region.block_length, invalid_argument,
                  "{}: local stride {} is shorter than the block length {}", operation, local_stride,
                  region.block_length);
  const std::size_t needed =
      region.count == 0 || region.block_length == 0 ? 0 : (region.count - 1) * local_stride + region.block_length;
  TESSERA_REQUIRE(size >= needed, invalid_argument, "{}: local buffer of {} elements is smaller than the {} needed",
                  operation, size, needed);
}

}  // namespace detail

/// A distributed array of T exposed for one-sided access: each rank holds
/// `extent(rank)` elements; offsets in get/put are element offsets into the
/// target rank's part.
///
/// Made collectively by a backend context's allocate<T>(n) or expose(range).
/// Copies share the registration; the last copy to go releases it, which is
/// collective (as MPI_Win_free is): destroy segments in the same order on
/// every rank, after a barrier() of the context.
template <class T>
class segment {
 public:
  using value_type = T;
  using host_view = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  segment() = default;
  explicit segment(std::shared_ptr<segment_state> state) : state_(std::move(state)) {}

  [[nodiscard]] bool valid() const noexcept { return static_cast<bool>(state_); }
  /// This rank's elements: the memory remote ranks read and write.
  [[nodiscard]] std::span<T> local() const noexcept {
    return {reinterpret_cast<T*>(state_->local_base), state_->extents[static_cast<std::size_t>(state_->rank)]};
  }
  /// This rank's elements as an unmanaged host View, for Kokkos kernels.
  [[nodiscard]] host_view local_view() const { return host_view(local().data(), local().size()); }
  /// Elements exposed by `rank`.
  [[nodiscard]] std::size_t extent(int rank) const { return state_->extents.at(static_cast<std::size_t>(rank)); }
  [[nodiscard]] int num_ranks() const noexcept { return static_cast<int>(state_->extents.size()); }
  /// The registration number, the same on every rank.
  [[nodiscard]] std::uint32_t id() const noexcept { return state_->id; }

  /// For backends: the shared registration record.
  [[nodiscard]] segment_state& state() const noexcept { return *state_; }

 private:
  std::shared_ptr<segment_state> state_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SEGMENT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SEGMENT_HPP
#endif
