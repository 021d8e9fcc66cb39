#pragma once
/// @file
/// Node-local SpGEMM over any semiring by expand-sort-compress, on Kokkos:
/// every product of a row is written out (expand), the row's products are
/// sorted by column (in place, kernels/sort_rows.hpp: fine on any device), and equal
/// columns are folded with the semiring's add (compress), skipping columns the
/// optional mask does not hold. Memory is proportional to the products of the
/// rows in one call, which is what lets the caller batch rows under a budget.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_ESC_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../core/index_types.hpp"
#include "sort_rows.hpp"

#include <Kokkos_Core.hpp>

#include <vector>

namespace tessera::kernels {

/// The operands of one node-local product: A's local rows (CSR, local column
/// c) times the rows of B that A's columns reference (row c of `b_*` is B's
/// row for A's local column c, with global column indices).
template <class T, class MemorySpace>
struct esc_operands {
  Kokkos::View<const offset_type*, MemorySpace> a_ptr;
  Kokkos::View<const local_index*, MemorySpace> a_col;
  Kokkos::View<const T*, MemorySpace> a_val;
  Kokkos::View<const offset_type*, MemorySpace> b_ptr;
  Kokkos::View<const global_index*, MemorySpace> b_col;
  Kokkos::View<const T*, MemorySpace> b_val;
  /// Optional structural mask, rows like A's, global columns sorted within rows (empty: no mask).
  Kokkos::View<const offset_type*, MemorySpace> mask_ptr;
  Kokkos::View<const global_index*, MemorySpace> mask_col;
};

namespace detail {
// The expand-sort-compress kernel is a named functor, not a KOKKOS_LAMBDA, so that the semiring's
// type is never a template argument of a function holding an extended __host__ __device__ lambda.
// On CUDA the semiring must be declared at namespace or class scope (docs/gpu.md).

/// Row i of the batch (A's row first + i): expands its products at offsets(i), sorts them by
/// column, folds equal columns with the semiring's add, drops those the mask does not hold, and
/// writes the kept count to kept(i).
template <class T, class MemorySpace, class Semiring>
struct esc_expand_sort_compress {
  esc_operands<T, MemorySpace> op;
  local_index first;
  bool masked;
  Kokkos::View<const offset_type*, MemorySpace> offsets;
  Kokkos::View<global_index*, MemorySpace> product_col;
  Kokkos::View<T*, MemorySpace> product_val;
  Kokkos::View<offset_type*, MemorySpace> kept;
  Semiring ring;

  KOKKOS_INLINE_FUNCTION void operator()(const local_index i) const {
    const local_index r = first + i;
    offset_type at = offsets(i);
    for (offset_type e = op.a_ptr(r); e < op.a_ptr(r + 1); ++e) {
      const local_index k = op.a_col(e);
      const T a = op.a_val(e);
      for (offset_type f = op.b_ptr(k); f < op.b_ptr(k + 1); ++f) {
        product_col(at) = op.b_col(f);
        product_val(at) = ring.multiply(a, op.b_val(f));
        ++at;
      }
    }
    const offset_type begin = offsets(i), count = at - begin;
    sort_by_key(product_col.data() + begin, product_val.data() + begin, count);
    offset_type out = begin, m = masked ? op.mask_ptr(r) : 0;
    for (offset_type p = begin; p < begin + count;) {
      const global_index c = product_col(p);
      T sum = product_val(p);
      for (++p; p < begin + count && product_col(p) == c; ++p) sum = ring.add(sum, product_val(p));
      if (masked) {  // both lists ascend: walk the mask row alongside
        while (m < op.mask_ptr(r + 1) && op.mask_col(m) < c) ++m;
        if (m == op.mask_ptr(r + 1) || op.mask_col(m) != c) continue;
      }
      product_col(out) = c;
      product_val(out) = sum;
      ++out;
    }
    kept(i) = out - begin;
  }
};

/// offsets(i) = the products of rows first .. first + i - 1 (offsets(n): all of them); returns
/// the total. Not templated on the semiring, so its KOKKOS_LAMBDA is allowed.
template <class ExecSpace, class T, class MemorySpace>
offset_type esc_count_products(const ExecSpace& exec, const esc_operands<T, MemorySpace>& op, local_index first,
                               const Kokkos::View<offset_type*, MemorySpace>& offsets) {
  const auto a_ptr = op.a_ptr;
  const auto a_col = op.a_col;
  const auto b_ptr = op.b_ptr;
  const auto n = static_cast<local_index>(offsets.extent(0)) - 1;
  Kokkos::parallel_scan(
      "tessera::esc::count", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      KOKKOS_LAMBDA(const local_index i, offset_type& running, const bool final) {
        const local_index r = first + i;
        offset_type products = 0;
        for (offset_type e = a_ptr(r); e < a_ptr(r + 1); ++e) products += b_ptr(a_col(e) + 1) - b_ptr(a_col(e));
        if (final) offsets(i) = running;
        running += products;
        if (final && i == n - 1) offsets(n) = running;
      });
  offset_type total = 0;
  tessera::detail::deep_copy(exec, total, Kokkos::subview(offsets, static_cast<std::size_t>(n)));
  exec.fence();
  return total;
}
}  // namespace detail

/// Rows [first, last) of the product; appends each row's entry count, global
/// columns (ascending) and values to the host vectors.
template <class ExecSpace, class T, class MemorySpace, class Semiring>
void esc_rows(const ExecSpace& exec, const esc_operands<T, MemorySpace>& op, local_index first, local_index last,
              const Semiring& ring, std::vector<offset_type>& row_counts, std::vector<global_index>& cols,
              std::vector<T>& values) {
  const local_index n = last - first;
  if (n <= 0) return;
  const bool masked = op.mask_ptr.extent(0) > 0;

  Kokkos::View<offset_type*, MemorySpace> offsets("tessera::esc::offsets", static_cast<std::size_t>(n) + 1);
  const offset_type total = detail::esc_count_products(exec, op, first, offsets);

  Kokkos::View<global_index*, MemorySpace> product_col("tessera::esc::cols", static_cast<std::size_t>(total));
  Kokkos::View<T*, MemorySpace> product_val("tessera::esc::values", static_cast<std::size_t>(total));
  Kokkos::View<offset_type*, MemorySpace> kept("tessera::esc::kept", static_cast<std::size_t>(n));
  Kokkos::parallel_for("tessera::esc::expand_sort_compress", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                       detail::esc_expand_sort_compress<T, MemorySpace, Semiring>{
                           op, first, masked, offsets, product_col, product_val, kept, ring});
  exec.fence();

  auto host_offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, offsets);
  auto host_kept = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, kept);
  auto host_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, product_col);
  auto host_val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, product_val);
  for (local_index i = 0; i < n; ++i) {
    const auto begin = static_cast<std::size_t>(host_offsets(i));
    const auto count = static_cast<std::size_t>(host_kept(i));
    row_counts.push_back(static_cast<offset_type>(count));
    cols.insert(cols.end(), host_col.data() + begin, host_col.data() + begin + count);
    values.insert(values.end(), host_val.data() + begin, host_val.data() + begin + count);
  }
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_ESC_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_ESC_HPP
#endif
