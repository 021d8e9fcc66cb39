#pragma once
/// @file
/// A stable sort of (key, payload) pairs by key, keys in [0, key_count): on CUDA, CUB's radix sort
/// over the key's significant bits only (one pass per 8 bits: 3 passes for 2^18 keys); on host
/// spaces, a counting sort. Stability is the point: input already ordered by a second key comes
/// out ordered by (key, second key) without sorting each group again. Where neither exists (HIP,
/// SYCL) `has_stable_key_sort` is false and callers keep their own path.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_STABLE_KEY_SORT_HPP
#endif

#include "../core/error.hpp"
#include "../core/scratch_pool.hpp"

#include <Kokkos_Core.hpp>

#include <bit>
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cub/device/device_radix_sort.cuh>
#endif

namespace tessera::kernels {

/// Whether stable_sort_by_key runs on ExecSpace.
template <class ExecSpace>
inline constexpr bool has_stable_key_sort =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<ExecSpace, Kokkos::Cuda> ||
#endif
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

/// Sorts the pairs (keys(i), payload(i)) by key, stably, in place: both Views hold the sorted
/// pairs afterwards. Every key must lie in [0, key_count). On CUDA one scratch array
/// (core/scratch_pool.hpp) holds the radix sort's second buffers and its histograms.
template <class ExecSpace, class MemorySpace>
  requires has_stable_key_sort<ExecSpace>
void stable_sort_by_key(const ExecSpace& space, const Kokkos::View<std::uint32_t*, MemorySpace>& keys,
                        const Kokkos::View<std::uint32_t*, MemorySpace>& payload, std::uint64_t key_count) {
  const std::size_t n = keys.extent(0);
  if (n <= 1) return;
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
    space.fence();
    std::vector<std::size_t> start(static_cast<std::size_t>(key_count) + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++start[keys(i) + 1];
    for (std::size_t k = 0; k < key_count; ++k) start[k + 1] += start[k];
    std::vector<std::uint32_t> sorted_keys(n), sorted_payload(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = start[keys(i)]++;
      sorted_keys[at] = keys(i);
      sorted_payload[at] = payload(i);
    }
    std::copy(sorted_keys.begin(), sorted_keys.end(), keys.data());
    std::copy(sorted_payload.begin(), sorted_payload.end(), payload.data());
  }
#if defined(KOKKOS_ENABLE_CUDA)
  else {
    // Only the bits a key can have are sorted: bit_width(key_count - 1) of them.
    const int bits = key_count <= 1 ? 1 : static_cast<int>(std::bit_width(key_count - 1));
    cub::DoubleBuffer<std::uint32_t> key_buffers(keys.data(), nullptr), payload_buffers(payload.data(), nullptr);
    // CUB's offsets are 32-bit for an int count, 64-bit for a wider one.
    const auto sort = [&](void* scratch, std::size_t& bytes) {
      return n <= static_cast<std::size_t>(std::numeric_limits<int>::max())
                 ? cub::DeviceRadixSort::SortPairs(scratch, bytes, key_buffers, payload_buffers, static_cast<int>(n), 0, bits,
                                                   space.cuda_stream())
                 : cub::DeviceRadixSort::SortPairs(scratch, bytes, key_buffers, payload_buffers, static_cast<std::int64_t>(n), 0,
                                                   bits, space.cuda_stream());
    };
    std::size_t histogram_bytes = 0;
    cudaError_t status = sort(nullptr, histogram_bytes);
    TESSERA_REQUIRE(status == cudaSuccess, internal, "CUB's radix sort could not size its scratch for {} pairs: {}", n,
                    cudaGetErrorString(status));
    const std::size_t buffer_bytes = (n * sizeof(std::uint32_t) + 255) / 256 * 256;
    const tessera::scratch<std::byte, MemorySpace> buffers(2 * buffer_bytes + histogram_bytes);
    std::byte* const base = buffers.view().data();
    key_buffers.d_buffers[1] = reinterpret_cast<std::uint32_t*>(base);
    payload_buffers.d_buffers[1] = reinterpret_cast<std::uint32_t*>(base + buffer_bytes);
    // On the instance's stream: after the kernels that wrote the keys, before the ones that read them.
    status = sort(base + 2 * buffer_bytes, histogram_bytes);
    TESSERA_REQUIRE(status == cudaSuccess, internal, "CUB's radix sort of {} pairs failed: {}", n, cudaGetErrorString(status));
    const auto copy_back = [&](cub::DoubleBuffer<std::uint32_t>& buffers, std::uint32_t* home) {
      if (buffers.Current() == home) return;
      status = cudaMemcpyAsync(home, buffers.Current(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, space.cuda_stream());
      TESSERA_REQUIRE(status == cudaSuccess, internal, "copying {} sorted pairs back failed: {}", n, cudaGetErrorString(status));
    };
    copy_back(key_buffers, keys.data());
    copy_back(payload_buffers, payload.data());
    space.fence();
  }
#endif
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_STABLE_KEY_SORT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_STABLE_KEY_SORT_HPP
#endif
