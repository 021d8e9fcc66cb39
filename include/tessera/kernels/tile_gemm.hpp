#pragma once
/// @file
/// Node-local tile products C_t += alpha * A_t * B_t through KokkosBlas::gemm
/// (the system BLAS on the host, cuBLAS/rocBLAS where Kokkos-Kernels has them).

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
};

/// Run `products` in order: C += alpha * A * B, each tile a column-major View
/// into the given buffers (all in `Memory`). Products that share a C tile are
/// applied one after another, so no atomics are needed.
/// True when two products write the same C tile (offset and shape: a zero-width tile shares its offset).
inline bool same_c_tile(const tile_product& x, const tile_product& y) noexcept {
  return x.c == y.c && x.m == y.m && x.n == y.n;
}

/// One product C_t += alpha * A_t * B_t of column-major tiles in the given buffers.
template <class ExecutionSpace, class T, class Memory>
void tile_gemm(const tile_product& p, T alpha, const Kokkos::View<const T*, Memory>& a,
               const Kokkos::View<const T*, Memory>& b, const Kokkos::View<T*, Memory>& c) {
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using in_tile = Kokkos::View<const T**, Kokkos::LayoutLeft, Kokkos::Device<ExecutionSpace, Memory>, unmanaged>;
  using out_tile = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::Device<ExecutionSpace, Memory>, unmanaged>;
  if (p.m == 0 || p.n == 0 || p.k == 0) return;
  const in_tile at(a.data() + p.a, static_cast<std::size_t>(p.m), static_cast<std::size_t>(p.k));
  const in_tile bt(b.data() + p.b, static_cast<std::size_t>(p.k), static_cast<std::size_t>(p.n));
  const out_tile ct(c.data() + p.c, static_cast<std::size_t>(p.m), static_cast<std::size_t>(p.n));
  KokkosBlas::gemm("N", "N", alpha, at, bt, T{1}, ct);
}

/// Run `products` in order: C += alpha * A * B, each tile a column-major View
/// into the given buffers (all in `Memory`). Products that share a C tile are
/// applied one after another, so no atomics are needed.
template <class ExecutionSpace, class T, class Memory>
void tile_gemms(const std::vector<tile_product>& products, T alpha, const Kokkos::View<const T*, Memory>& a,
                const Kokkos::View<const T*, Memory>& b, const Kokkos::View<T*, Memory>& c) {
  for (const auto& p : products) tile_gemm<ExecutionSpace, T, Memory>(p, alpha, a, b, c);
}

/// Sum over k of the products of ONE C tile as one GEMM: C += alpha * [A_1 A_2 ...] * [B_1; B_2; ...].
///
/// `products[first, last)` share their C tile. A tiles of one tile row have the
/// same height, so side by side they are a column-major panel; when they are
/// already adjacent in `a` (a rank's tiles lie in shape order) the panel is read
/// in place, otherwise copied into `scratch_a`. The B tiles are stacked into
/// `scratch_b` (K x n). One GEMM with the summed K runs near DGEMM peak where
/// separate tile products (BLAS packing and C traffic per call) do not.
template <class ExecutionSpace, class T, class Memory>
void panel_gemm(const tile_product* first, const tile_product* last, T alpha, const Kokkos::View<const T*, Memory>& a,
                const Kokkos::View<const T*, Memory>& b, const Kokkos::View<T*, Memory>& c,
                const Kokkos::View<T*, Memory>& scratch_a, const Kokkos::View<T*, Memory>& scratch_b) {
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using device = Kokkos::Device<ExecutionSpace, Memory>;
  using in_tile = Kokkos::View<const T**, Kokkos::LayoutLeft, device, unmanaged>;
  using out_tile = Kokkos::View<T**, Kokkos::LayoutLeft, device, unmanaged>;
  const auto m = static_cast<std::size_t>(first->m), n = static_cast<std::size_t>(first->n);
  std::size_t k_total = 0;
  bool adjacent = true;
  for (const tile_product* p = first; p != last; ++p) {
    if (p != first && p->a != (p - 1)->a + m * static_cast<std::size_t>((p - 1)->k)) adjacent = false;
    k_total += static_cast<std::size_t>(p->k);
  }
  if (m == 0 || n == 0 || k_total == 0) return;
  const T* a_panel = a.data() + first->a;
  if (!adjacent) {
    std::size_t at = 0;
    for (const tile_product* p = first; p != last; ++p) {
      const std::size_t len = m * static_cast<std::size_t>(p->k);
      Kokkos::deep_copy(Kokkos::View<T*, device, unmanaged>(scratch_a.data() + at, len),
                        Kokkos::View<const T*, device, unmanaged>(a.data() + p->a, len));
      at += len;
    }
    a_panel = scratch_a.data();
  }
  // Stack the B tiles: column j of tile t goes to rows [row, row + k) of panel column j.
  // (A plain loop per column: Kokkos' deep_copy of a strided subview is several times slower.)
  std::size_t row = 0;
  T* const panel = scratch_b.data();
  for (const tile_product* p = first; p != last; ++p) {
    const auto k = static_cast<std::size_t>(p->k);
    const T* const tile = b.data() + p->b;
    const std::size_t at = row;
    Kokkos::parallel_for(
        "tessera::stack_b", Kokkos::RangePolicy<ExecutionSpace>(0, n), KOKKOS_LAMBDA(const std::size_t j) {
          for (std::size_t i = 0; i < k; ++i) panel[at + i + j * k_total] = tile[i + j * k];
        });
    row += k;
  }
  KokkosBlas::gemm("N", "N", alpha, in_tile(a_panel, m, k_total), in_tile(scratch_b.data(), k_total, n), T{1},
                   out_tile(c.data() + first->c, m, n));
}

/// Run products sorted by C tile (detail::group_by_c), each C tile's products as one panel_gemm (a single product directly).
template <class ExecutionSpace, class T, class Memory>
void grouped_tile_gemms(const std::vector<tile_product>& products, T alpha, const Kokkos::View<const T*, Memory>& a,
                        const Kokkos::View<const T*, Memory>& b, const Kokkos::View<T*, Memory>& c,
                        const Kokkos::View<T*, Memory>& scratch_a, const Kokkos::View<T*, Memory>& scratch_b) {
  std::size_t start = 0;
  while (start < products.size()) {
    std::size_t end = start + 1;
    while (end < products.size() && same_c_tile(products[end], products[start])) ++end;
    if (end - start == 1) {
      tile_gemm<ExecutionSpace, T, Memory>(products[start], alpha, a, b, c);
    } else {
      panel_gemm<ExecutionSpace, T, Memory>(products.data() + start, products.data() + end, alpha, a, b, c, scratch_a,
                                            scratch_b);
    }
    start = end;
  }
}

}  // namespace tessera::kernels
