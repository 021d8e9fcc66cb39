#pragma once
/// @file
/// Node-local tile products C_t += alpha * A_t * B_t through KokkosBlas::gemm
/// (the system BLAS on the host, cuBLAS/rocBLAS where Kokkos-Kernels has them).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_TILE_GEMM_HPP
#endif

#include <Kokkos_Core.hpp>
#include <KokkosBlas3_gemm.hpp>

#include <cstddef>
#include <vector>

namespace tessera::kernels {

/// One product of column-major tiles: element offsets into the A, B and C
/// buffers and the shapes (C is m x n, A m x k, B k x n).
struct tile_product {
  std::size_t a = 0, b = 0, c = 0;
  int m = 0, n = 0, k = 0;
  /// The first product into its C tile: an executor told that C starts
  /// undefined (beta = 0) writes C = alpha * A * B instead of adding, so C
  /// need not be zeroed first.
  bool overwrite = false;
  /// The last product into its C tile: the tile is final (and hot in cache) after it.
  bool last = false;
};

/// A product's three tiles as unmanaged column-major Views into the buffers (the types
/// KokkosBlas::gemm hands to cuBLAS or the host BLAS).
template <class ExecutionSpace, class T, class Memory>
struct product_tiles {
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using in_tile = Kokkos::View<const T**, Kokkos::LayoutLeft, Kokkos::Device<ExecutionSpace, Memory>, unmanaged>;
  using out_tile = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::Device<ExecutionSpace, Memory>, unmanaged>;
  in_tile a, b;
  out_tile c;

  product_tiles(const tile_product& p, const Kokkos::View<const T*, Memory>& a_buffer,
                const Kokkos::View<const T*, Memory>& b_buffer, const Kokkos::View<T*, Memory>& c_buffer)
      : a(a_buffer.data() + p.a, static_cast<std::size_t>(p.m), static_cast<std::size_t>(p.k)),
        b(b_buffer.data() + p.b, static_cast<std::size_t>(p.k), static_cast<std::size_t>(p.n)),
        c(c_buffer.data() + p.c, static_cast<std::size_t>(p.m), static_cast<std::size_t>(p.n)) {}
};

/// One product C_t += alpha * A_t * B_t of column-major tiles in the given
/// buffers (C_t = alpha * A_t * B_t when `may_overwrite` and p.overwrite).
template <class ExecutionSpace, class T, class Memory>
void tile_gemm(const tile_product& p, T alpha, const Kokkos::View<const T*, Memory>& a,
               const Kokkos::View<const T*, Memory>& b, const Kokkos::View<T*, Memory>& c, bool may_overwrite = false) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return;
  const product_tiles<ExecutionSpace, T, Memory> t(p, a, b, c);
  KokkosBlas::gemm("N", "N", alpha, t.a, t.b, may_overwrite && p.overwrite ? T{0} : T{1}, t.c);
}

#if KOKKOS_VERSION >= 40100
/// tile_gemm queued on the execution space instance `space` (a stream on a GPU); Kokkos-Kernels
/// takes an instance from 4.1 on.
template <class ExecutionSpace, class T, class Memory>
void tile_gemm_on(const ExecutionSpace& space, const tile_product& p, T alpha, const Kokkos::View<const T*, Memory>& a,
                  const Kokkos::View<const T*, Memory>& b, const Kokkos::View<T*, Memory>& c,
                  bool may_overwrite = false) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return;
  const product_tiles<ExecutionSpace, T, Memory> t(p, a, b, c);
  KokkosBlas::gemm(space, "N", "N", alpha, t.a, t.b, may_overwrite && p.overwrite ? T{0} : T{1}, t.c);
}
#endif

/// Run `products` in order: C += alpha * A * B, each tile a column-major View
/// into the given buffers (all in `Memory`). Products that share a C tile are
/// applied one after another, so no atomics are needed.
template <class ExecutionSpace, class T, class Memory>
void tile_gemms(const std::vector<tile_product>& products, T alpha, const Kokkos::View<const T*, Memory>& a,
                const Kokkos::View<const T*, Memory>& b, const Kokkos::View<T*, Memory>& c,
                bool may_overwrite = false) {
  for (const auto& p : products) tile_gemm<ExecutionSpace, T, Memory>(p, alpha, a, b, c, may_overwrite);
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_TILE_GEMM_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_TILE_GEMM_HPP
#endif
