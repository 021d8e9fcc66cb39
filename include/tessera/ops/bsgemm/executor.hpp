#pragma once
/// @file
/// bsgemm's executor: runs a schedule's tile products on one rank (the packed host kernel, one
/// BLAS call per product, or batched device GEMMs), measures each C tile's norm right after its
/// last product on the host, and prepares C for beta (scale in place, zero the unwritten tiles,
/// or carry beta * old C into a new shape).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_EXECUTOR_HPP
#endif

#include "../../core/deep_copy.hpp"
#include "../../kernels/packed_tile_gemm.hpp"
#include "../../kernels/tile_gemm.hpp"
#include "../../matrix/make_block_sparse.hpp"
#include "../../storage/block_sparse.hpp"
#include "options.hpp"
#include "schedule.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace tessera::detail {

/// values *= beta, in the execution space (no fence). A free function because nvcc refuses an
/// extended (__host__ __device__) lambda inside a private member of a class.
template <class ExecutionSpace, class T, class MemorySpace>
void scale_in_place(T beta, const Kokkos::View<T*, MemorySpace>& values) {
  Kokkos::parallel_for(
      "tessera::bsgemm::scale_c", Kokkos::RangePolicy<ExecutionSpace>(0, values.extent(0)),
      KOKKOS_LAMBDA(const std::size_t e) { values(e) *= beta; });
}

/// Runs tile products on one rank, in the schedule's order.
template <class T, class ExecutionSpace>
class bsgemm_executor {
 public:
  using memory_space = typename ExecutionSpace::memory_space;
  using values_view = Kokkos::View<T*, memory_space>;
  using const_values_view = Kokkos::View<const T*, memory_space>;
  static constexpr bool host_space = Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;

  bsgemm_executor() = default;
  /// `packed`: the packed host kernel (bsgemm_tile_kernel), with scratch for the schedule's largest A tile.
  bsgemm_executor(bool packed, const bsgemm_schedule& schedule) : packed_(packed) {
    if (packed_) packed_a_ = values_view("tessera::bsgemm::packed_a", schedule.packed_a_elements);
#if KOKKOS_VERSION >= 40100
    if constexpr (!host_space)
      streams_ = Kokkos::Experimental::partition_space(ExecutionSpace(), std::vector<int>(device_tile_streams, 1));
#endif
  }

  [[nodiscard]] bool packed() const noexcept { return packed_; }

  /// C += alpha * A * B for `products` (A, B, C at the products' offsets in `a`, `b`, `c`); a
  /// product marked `overwrite` writes its C tile when `may_overwrite`. On the host, a C tile's
  /// norm goes to `norms` right after its last product, while it is in cache.
  void run(const bsgemm_schedule& schedule, const std::vector<kernels::tile_product>& products, T alpha,
           const const_values_view& a, const const_values_view& b, const values_view& c, bool may_overwrite,
           std::vector<double>& norms) const {
    if constexpr (host_space) {
      if (packed_) {
        run_packed(schedule, products, alpha, a, b, c, may_overwrite, norms);
        return;
      }
      for (const auto& p : products) {
        kernels::tile_gemm<ExecutionSpace, T, memory_space>(p, alpha, a, b, c, may_overwrite);
        if (p.last) measure(schedule, p, c, norms);
      }
    } else {
#if KOKKOS_VERSION >= 40100
      if (!streams_.empty()) {
        run_on_streams(schedule, products, alpha, a, b, c, may_overwrite);
        return;
      }
#endif
      kernels::tile_gemms<ExecutionSpace, T, memory_space>(products, alpha, a, b, c, may_overwrite);
    }
  }

  /// Zero the local C tiles no product writes (beta = 0 on a C already laid out as the plan's).
  static void zero_unwritten(const bsgemm_schedule& schedule, const values_view& values) {
    for (const auto& [offset, count] : schedule.unwritten)
      tessera::detail::deep_copy(Kokkos::subview(values, std::pair<std::size_t, std::size_t>(offset, offset + count)), T{0});
  }

  /// beta * the old C (`old` tiles of shape `old_shape`) into `tiles`, laid out for `new_shape`.
  static void scale_old_c(T beta, const block_sparse_tiles<T, memory_space>& old, const block_sparse_shape& old_shape,
                          const block_sparse_shape& new_shape, block_sparse_tiles<T, memory_space>& tiles) {
    const auto old_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, old.values);
    auto host = Kokkos::create_mirror_view(tiles.values);
    tessera::detail::deep_copy(host, T{0});
    std::vector<std::size_t> where(new_shape.num_nonzero_tiles(), static_cast<std::size_t>(-1));
    for (std::size_t k = 0; k < tiles.num_tiles(); ++k) where[tiles.index[k]] = k;
    for (std::size_t k = 0; k < old.num_tiles(); ++k) {
      const auto& t = old_shape.tiles()[old.index[k]];
      const std::size_t pos = new_shape.find(static_cast<std::size_t>(t.row), static_cast<std::size_t>(t.col));
      const std::size_t to = where[pos];
      for (std::size_t e = 0; e < old.offset[k + 1] - old.offset[k]; ++e)
        host(tiles.offset[to] + e) = beta * old_host(old.offset[k] + e);
    }
    tessera::detail::deep_copy(tiles.values, host);
  }

 private:
  // The norm of a finished C tile (host memory).
  static void measure(const bsgemm_schedule& schedule, const kernels::tile_product& p, const values_view& c,
                      std::vector<double>& norms) {
    const auto& tile = schedule.c_tiles[schedule.c_position(p.c)];
    norms[tile.local] = frobenius_norm(c.data() + tile.offset, tile.elements);
  }

  // Products sorted by A tile: pack each A tile once, then run all its products.
  void run_packed(const bsgemm_schedule& schedule, const std::vector<kernels::tile_product>& products, T alpha,
                  const const_values_view& a, const const_values_view& b, const values_view& c, bool may_overwrite,
                  std::vector<double>& norms) const {
    for (std::size_t first = 0; first < products.size();) {
      const auto& lead = products[first];
      kernels::pack_a<ExecutionSpace>(a.data() + lead.a, lead.m, lead.k, packed_a_.data());
      std::size_t last = first;
      for (; last < products.size() && products[last].a == lead.a; ++last) {
        const auto& p = products[last];
        // The next product's B tile is fetched while this one finishes.
        kernels::following_product<T> following;
        if (last + 1 < products.size())
          following = {b.data() + products[last + 1].b, products[last + 1].n, products[last + 1].k};
        kernels::packed_gemm<ExecutionSpace>(p.m, p.n, p.k, alpha, packed_a_.data(), b.data() + p.b, c.data() + p.c,
                                             may_overwrite && p.overwrite, following);
        if (p.last) measure(schedule, p, c, norms);
      }
      first = last;
    }
  }

#if KOKKOS_VERSION >= 40100
  // One tile product of 512-1024 rows occupies a fraction of a GPU's multiprocessors (an H100 ran
  // them at 17 TFLOP/s one after another, 27% of its DGEMM rate; 30-32 TFLOP/s on 8 streams), so
  // products into different C tiles are queued on several streams and run side by side. All
  // products into one C tile go to one stream, in the schedule's order: no atomics, and C is
  // summed in the same order as on one stream (bitwise the same result).
  void run_on_streams(const bsgemm_schedule& schedule, const std::vector<kernels::tile_product>& products, T alpha,
                      const const_values_view& a, const const_values_view& b, const values_view& c,
                      bool may_overwrite) const {
    // The operands were written on the default instance (C scaled or zeroed, fetched A copied in).
    ExecutionSpace().fence("tessera::bsgemm: operands ready for the tile streams");
    for (const auto& p : products)
      kernels::tile_gemm_on(streams_[schedule.c_position(p.c) % streams_.size()], p, alpha, a, b, c, may_overwrite);
    // The caller reuses the fetch buffers and reads C on the default instance next.
    for (const auto& stream : streams_) stream.fence("tessera::bsgemm: tile products done");
  }

  // The hardware queues a CUDA device serves concurrently by default (CUDA_DEVICE_MAX_CONNECTIONS).
  static constexpr int device_tile_streams = 8;
  std::vector<ExecutionSpace> streams_;  // device spaces only
#endif
  bool packed_ = false;
  values_view packed_a_;  // the packed kernel's scratch: one packed A tile
};

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_EXECUTOR_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_EXECUTOR_HPP
#endif
