#pragma once
/// @file
/// The 1-D SpGEMM's local product through Kokkos-Kernels (KokkosSparse::spgemm_symbolic/numeric),
/// or on CUDA through cuSPARSE with 32-bit offsets where Kokkos-Kernels has it (over batches of
/// rows where one product would outgrow them, so that Kokkos-Kernels' own SpGEMM is never compiled
/// there): the default kernel on device spaces, and spgemm_kernel::kokkos_kernels on request. Apart from local_product.hpp because of
/// its headers: a unit that multiplies with the host's default kernel only
/// (<tessera/ops/spgemm_default.hpp> on a host-only Kokkos) never parses Kokkos-Kernels' SpGEMM.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_KOKKOS_KERNELS_PRODUCT_HPP
#endif

#include "../../core/deep_copy.hpp"
#include "../../core/profiling_region.hpp"
#include "../../core/scratch_pool.hpp"
#include "../../kernels/offset_width.hpp"
#include "../../kernels/sort_rows.hpp"
#include "../../kernels/spgemm_cusparse.hpp"
#include "../../kernels/spgemm_row_batches.hpp"
#include "../../matrix/detail/compress_columns.hpp"
#include "../../matrix/to_view.hpp"
#include "local_product.hpp"
#include "referenced_rows_on_device.hpp"

#include <Kokkos_Core.hpp>
#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
// GCC reports -Wmaybe-uninitialized inside Kokkos-Kernels' compression functor at -O3 (float instantiations).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <KokkosSparse_spgemm.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <limits>
#include <type_traits>

namespace tessera::detail {

template <class T>
  requires matrix_value<T>
struct kokkos_kernels_product_included<T> : std::true_type {};

/// Whether plus-times products go to cuSPARSE (kernels/spgemm_cusparse.hpp): on CUDA, for float or
/// double values, where Kokkos-Kernels has cuSPARSE. Kokkos-Kernels' own kernel (what tessera's
/// 64-bit offsets got) took 2-3 times cuSPARSE's time on an H100 (R-MAT 16 squared: 147 ms against
/// 67 ms).
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
template <class T, class ExecSpace>
inline constexpr bool spgemm_through_cusparse =
    std::is_same_v<ExecSpace, Kokkos::Cuda> && (std::is_same_v<T, double> || std::is_same_v<T, float>);

/// An upper bound on the nonzeros of A * B^: the products it forms, sum over A's entries (i, k) of
/// the length of B^'s row k (in the execution space; one pass over A).
template <class ExecSpace, class MemorySpace>
offset_type product_bound(const Kokkos::View<const local_index*, MemorySpace>& a_col,
                          const Kokkos::View<const offset_type*, MemorySpace>& b_ptr) {
  offset_type bound = 0;
  Kokkos::parallel_reduce(
      "tessera::spgemm::product_bound", Kokkos::RangePolicy<ExecSpace>(0, a_col.extent(0)),
      KOKKOS_LAMBDA(const std::size_t e, offset_type& acc) { acc += b_ptr(a_col(e) + 1) - b_ptr(a_col(e)); }, bound);
  return bound;
}

/// The product through cuSPARSE with 32-bit offsets (every offset of A, B^ and C below INT_MAX,
/// checked by the caller; kernels/spgemm_cusparse.hpp); C's offsets widened back.
template <matrix_value T, matrix_policy Policy>
local_product<T, Policy> multiply_with_int_offsets(const dist_matrix<T, Policy>& a,
                                                   const compressed_operand<T, typename Policy::memory_space>& b_hat) {
  using mem = typename Policy::memory_space;
  const auto& block = a.local();
  const Kokkos::Cuda space{};
  const scratch<int, mem> a_ptr32(block.row_ptr.extent(0)), b_ptr32(b_hat.ptr.extent(0));
  kernels::offsets_into(space, Kokkos::View<const offset_type*, mem>(block.row_ptr), a_ptr32.view());
  kernels::offsets_into(space, Kokkos::View<const offset_type*, mem>(b_hat.ptr), b_ptr32.view());
  const kernels::csr32<T, mem> a32{block.rows, block.cols, a_ptr32.view(), block.col_idx, block.values};
  const kernels::csr32<T, mem> b32{block.cols, static_cast<int>(b_hat.col_map.extent(0)), b_ptr32.view(), b_hat.cols,
                                   b_hat.values};
  const auto c = kernels::spgemm_cusparse(space, a32, b32);
  // cuSPARSE's rows come out sorted; sort_rows only checks them (a team per long row returns at
  // its first look).
  kernels::sort_rows(space, c.row_ptr, c.col_idx, c.values);
  typename dist_matrix<T, Policy>::local_block_type out;
  out.rows = block.rows;
  out.cols = static_cast<local_index>(b_hat.col_map.extent(0));
  out.row_ptr = kernels::offsets_as<offset_type>(space, Kokkos::View<const int*, mem>(c.row_ptr));
  out.col_idx = c.col_idx;
  out.values = c.values;
  space.fence("tessera::spgemm::offsets");  // C complete when returned, as from every other kernel
  return {out, b_hat.col_map, 1};
}

/// The product through cuSPARSE in batches of A's rows, each with at most `limit` entries of A and
/// products (kernels/spgemm_row_batches.hpp): where the whole product's offsets would outgrow int.
template <matrix_value T, matrix_policy Policy>
local_product<T, Policy> multiply_in_int_batches(const dist_matrix<T, Policy>& a,
                                                 const compressed_operand<T, typename Policy::memory_space>& b_hat,
                                                 offset_type limit) {
  using mem = typename Policy::memory_space;
  const auto& block = a.local();
  const Kokkos::Cuda space{};
  const scratch<int, mem> b_ptr32(b_hat.ptr.extent(0));
  kernels::offsets_into(space, Kokkos::View<const offset_type*, mem>(b_hat.ptr), b_ptr32.view());
  const kernels::csr32<T, mem> b32{block.cols, static_cast<int>(b_hat.col_map.extent(0)), b_ptr32.view(), b_hat.cols,
                                   b_hat.values};
  const auto c = kernels::multiply_in_row_batches(
      space, Kokkos::View<const offset_type*, mem>(block.row_ptr), Kokkos::View<const local_index*, mem>(block.col_idx),
      Kokkos::View<const T*, mem>(block.values), b32, limit, [&](const kernels::csr32<T, mem>& rows) {
        auto part = kernels::spgemm_cusparse(space, rows, b32);
        kernels::sort_rows(space, part.row_ptr, part.col_idx, part.values);  // a check: cuSPARSE sorts
        return part;
      });
  typename dist_matrix<T, Policy>::local_block_type out;
  out.rows = block.rows;
  out.cols = static_cast<local_index>(b_hat.col_map.extent(0));
  out.row_ptr = c.row_ptr;
  out.col_idx = c.col_idx;
  out.values = c.values;
  return {out, b_hat.col_map, c.batches};
}
#endif

/// Plus-times through Kokkos-Kernels on B^ (compressed_operand: the referenced rows of B with
/// compressed local columns): KokkosSparse multiplies, rows are sorted. Returns C's local block
/// and column map (B^'s).
template <matrix_value T, matrix_policy Policy>
local_product<T, Policy> multiply_kokkos_kernels(const dist_matrix<T, Policy>& a,
                                                 const compressed_operand<T, typename Policy::memory_space>& b_hat) {
  using mem = typename Policy::memory_space;
  using exec = typename Policy::execution_space;
  using crs = KokkosSparse::CrsMatrix<T, local_index, typename Policy::device_type, void, offset_type>;
  const auto& block = a.local();
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
  if constexpr (spgemm_through_cusparse<T, exec>) {
    constexpr offset_type int_max = std::numeric_limits<int>::max();
    TESSERA_REQUIRE(static_cast<offset_type>(b_hat.values.extent(0)) <= int_max, unsupported,
                    "spgemm: this rank references {} entries of B, more than cuSPARSE's 32-bit offsets take",
                    b_hat.values.extent(0));
    const offset_type bound = product_bound<exec, mem>(block.col_idx, b_hat.ptr);
    if (block.nnz() <= int_max && bound <= int_max) {
      try {
        return multiply_with_int_offsets<T, Policy>(a, b_hat);
      } catch (const kernels::batch_too_large&) {
        // More than the device's free memory in one product: the row batches, whose first (every
        // row) is refused again and then halved until the batches fit.
        return multiply_in_int_batches<T, Policy>(a, b_hat, int_max);
      }
    }
    // Kokkos-Kernels' own SpGEMM would take 64-bit offsets, but compiling it for this case alone cost
    // a third of the nvcc time of every unit that multiplies on the device: batches of rows instead.
    return multiply_in_int_batches<T, Policy>(a, b_hat, int_max);
  } else {
#endif
  const crs a_crs("tessera::spgemm::A", block.rows, block.cols, block.nnz(), block.values, block.row_ptr, block.col_idx);
  const crs b_crs("tessera::spgemm::B", block.cols, static_cast<local_index>(b_hat.col_map.extent(0)),
                  static_cast<offset_type>(b_hat.values.extent(0)), b_hat.values, b_hat.ptr, b_hat.cols);
  KokkosKernels::Experimental::KokkosKernelsHandle<offset_type, local_index, T, exec, mem, mem> handle;
  handle.create_spgemm_handle(KokkosSparse::SPGEMM_KK);
  crs c;
  KokkosSparse::spgemm_symbolic(handle, a_crs, false, b_crs, false, c);
  KokkosSparse::spgemm_numeric(handle, a_crs, false, b_crs, false, c);
  // Kokkos-Kernels leaves columns unsorted within rows. Its sort_crs_matrix took a third of the time
  // of a Laplacian product (and allocates); tessera's in-place row sort does not.
  kernels::sort_rows(exec{}, c.graph.row_map, c.graph.entries, c.values);
  typename dist_matrix<T, Policy>::local_block_type out;
  out.rows = block.rows;
  out.cols = static_cast<local_index>(b_hat.col_map.extent(0));
  out.row_ptr = decltype(out.row_ptr)("tessera::spgemm::row_ptr", c.graph.row_map.extent(0));
  tessera::detail::deep_copy(out.row_ptr, c.graph.row_map);
  out.col_idx = c.graph.entries;
  out.values = c.values;
  return {out, b_hat.col_map};
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
  }
#endif
}

/// B^ from the host-gathered rows: their global columns compressed on the host (the host
/// algorithms' path; referenced_rows_on_device builds it where the device algorithms run).
template <class T, class Mem>
compressed_operand<T, Mem> compressed_on_host(const fetched_rows<T>& fetched, global_index b_cols) {
  const auto [used, b_local] = compress_columns(fetched.cols, b_cols);
  return {to_view<offset_type, Mem>(fetched.ptr, "tessera::spgemm::b_ptr"), to_view<local_index, Mem>(b_local, "tessera::spgemm::b_col"),
          to_view<T, Mem>(fetched.values, "tessera::spgemm::b_val"), to_view<global_index, Mem>(used, "tessera::spgemm::col_map")};
}

/// Plus-times through Kokkos-Kernels (or cuSPARSE) from the referenced rows: B^ assembled on the
/// device where the device algorithms run, on the host otherwise.
template <matrix_value T, matrix_policy Policy>
auto multiply_referenced_kokkos_kernels(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                        const referenced_rows<T>& referenced) {
  using mem = typename Policy::memory_space;
  if constexpr (uses_device_algorithms<typename Policy::execution_space>) {
    const auto b_hat = [&] {
      const profiling_region region("tessera::spgemm::b_hat");
      return referenced_rows_on_device(a, b, referenced);
    }();
    return multiply_kokkos_kernels<T, Policy>(a, b_hat);
  } else {
    return multiply_kokkos_kernels<T, Policy>(
        a, compressed_on_host<T, mem>(gather_referenced_rows(a, b, referenced), b.num_cols()));
  }
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_KOKKOS_KERNELS_PRODUCT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_KOKKOS_KERNELS_PRODUCT_HPP
#endif
