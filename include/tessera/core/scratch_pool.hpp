#pragma once
/// @file
/// Scratch arrays kept across calls. Kokkos allocates device memory with cudaMalloc and frees it
/// with cudaFree: on an H100 an allocation of 1-16 MiB took 63 µs and its free 45-56 µs, more
/// than most kernels of a transpose or of SpGEMM's set-up, each of which needs several
/// nnz-sized temporaries. A `scratch<T, MemorySpace>` takes the smallest kept buffer that fits
/// (or allocates one), and gives it back when it goes out of scope. At most 12 buffers and 1 GiB
/// (`keep_scratch_bytes`) stay kept per memory space; an allocation that fails frees them first.
///
/// Reuse is ordered by the execution space instance: a buffer given back while kernels that use
/// it are still queued is next used by kernels queued after them on the same instance. So take
/// scratch only for work on the default instance (every tessera operation but bsgemm's streams).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_SCRATCH_POOL_HPP
#endif

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <vector>

namespace tessera {

/// Buffers kept per memory space between calls; past this, the smallest kept one is freed.
inline constexpr std::size_t scratch_buffers_kept = 12;

namespace detail {
template <class MemorySpace>
struct scratch_free_list {
  std::mutex lock;
  std::vector<Kokkos::View<std::byte*, MemorySpace>> buffers;
  std::size_t bytes_kept = 0;
  std::size_t byte_limit = std::size_t{1} << 30;
  bool release_at_finalize = false;

  /// Within the limits again: the smallest buffers go first past scratch_buffers_kept, the
  /// largest past byte_limit (call with the lock held).
  void trim() {
    const auto by_size = [](const auto& x, const auto& y) { return x.extent(0) < y.extent(0); };
    while (buffers.size() > scratch_buffers_kept) drop(std::min_element(buffers.begin(), buffers.end(), by_size));
    while (bytes_kept > byte_limit) drop(std::max_element(buffers.begin(), buffers.end(), by_size));
  }
  void drop(typename std::vector<Kokkos::View<std::byte*, MemorySpace>>::iterator it) {
    bytes_kept -= it->extent(0);
    buffers.erase(it);
  }
};

/// The kept buffers of one memory space. Never destroyed: they are freed by a Kokkos finalize
/// hook, before Kokkos ends, not by a static destructor after it.
template <class MemorySpace>
scratch_free_list<MemorySpace>& kept_scratch() {
  static auto* list = new scratch_free_list<MemorySpace>;
  return *list;
}
}  // namespace detail

/// Frees the scratch buffers kept for MemorySpace (otherwise kept until Kokkos ends).
template <class MemorySpace>
void release_scratch() {
  auto& list = detail::kept_scratch<MemorySpace>();
  const std::lock_guard guard(list.lock);
  list.buffers.clear();
  list.bytes_kept = 0;
}

/// At most `bytes` of scratch stay kept for MemorySpace between calls (default 1 GiB; 0 keeps
/// none: every temporary is allocated and freed again). Larger kept buffers are freed now.
template <class MemorySpace>
void keep_scratch_bytes(std::size_t bytes) {
  auto& list = detail::kept_scratch<MemorySpace>();
  const std::lock_guard guard(list.lock);
  list.byte_limit = bytes;
  list.trim();
}

/// The bytes of scratch kept for MemorySpace now (not counting arrays in use).
template <class MemorySpace>
std::size_t kept_scratch_bytes() {
  auto& list = detail::kept_scratch<MemorySpace>();
  const std::lock_guard guard(list.lock);
  return list.bytes_kept;
}

/// An array of `count` T in MemorySpace, uninitialised, from the kept buffers when one is large
/// enough; returned to them on destruction.
template <class T, class MemorySpace>
class scratch {
 public:
  using view_type = Kokkos::View<T*, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  explicit scratch(std::size_t count) {
    if (count == 0) return;
    const std::size_t bytes = count * sizeof(T);
    auto& list = detail::kept_scratch<MemorySpace>();
    {
      const std::lock_guard guard(list.lock);
      auto best = list.buffers.end();
      for (auto it = list.buffers.begin(); it != list.buffers.end(); ++it)
        if (it->extent(0) >= bytes && (best == list.buffers.end() || it->extent(0) < best->extent(0))) best = it;
      if (best != list.buffers.end()) {
        buffer_ = *best;
        list.drop(best);
      }
      if (!list.release_at_finalize) {
        Kokkos::push_finalize_hook([] { release_scratch<MemorySpace>(); });
        list.release_at_finalize = true;
      }
    }
    if (buffer_.extent(0) == 0) {
      try {
        buffer_ = allocate(bytes);
      } catch (const std::exception&) {
        // Out of memory with buffers kept: give them back and try once more.
        release_scratch<MemorySpace>();
        buffer_ = allocate(bytes);
      }
    }
    view_ = view_type(reinterpret_cast<T*>(buffer_.data()), count);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    if (buffer_.extent(0) == 0) return;
    auto& list = detail::kept_scratch<MemorySpace>();
    const std::lock_guard guard(list.lock);
    list.bytes_kept += buffer_.extent(0);
    list.buffers.push_back(std::move(buffer_));
    list.trim();
  }

  /// The array (unmanaged: valid while this scratch lives).
  [[nodiscard]] const view_type& view() const noexcept { return view_; }

 private:
  static Kokkos::View<std::byte*, MemorySpace> allocate(std::size_t bytes) {
    return Kokkos::View<std::byte*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::scratch"), bytes);
  }

  Kokkos::View<std::byte*, MemorySpace> buffer_;
  view_type view_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_SCRATCH_POOL_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_SCRATCH_POOL_HPP
#endif
