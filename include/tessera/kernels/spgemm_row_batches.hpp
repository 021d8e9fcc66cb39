#pragma once
/// @file
/// C = A * B as products over batches of A's rows, each small enough for a kernel with 32-bit
/// offsets (cuSPARSE's SpGEMM): a batch holds at most `limit` entries of A and forms at most
/// `limit` products (a bound on its entries of C), and the batches' rows of C are joined with
/// tessera's 64-bit offsets. Where a rank's product outgrows int on CUDA, tessera's SpGEMM takes
/// this path instead of Kokkos-Kernels' own SpGEMM, whose 47 kernels every unit that multiplies
/// on the device compiled for that case alone. A batch whose kernel runs out of room (cuSPARSE's
/// default algorithm asks for memory in proportion to a batch's products, and refuses some batches
/// that 32-bit offsets would take) is multiplied again in two halves. Runs on any execution space.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_ROW_BATCHES_HPP
#endif

#include "../core/error.hpp"
#include "../core/index_types.hpp"
#include "csr32.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tessera::kernels {

/// A product with 64-bit row offsets: row_ptr has rows + 1 entries.
template <class T, class MemorySpace>
struct csr64_product {
  Kokkos::View<offset_type*, MemorySpace> row_ptr;
  Kokkos::View<local_index*, MemorySpace> col_idx;
  Kokkos::View<T*, MemorySpace> values;
  std::size_t batches = 0;  ///< the batches of rows it was multiplied in
};

/// What a batch's kernel throws when the batch needs more memory than the device has to give
/// (cuSPARSE's CUSPARSE_STATUS_INSUFFICIENT_RESOURCES or ALLOC_FAILED, buffers larger than the
/// free memory): multiply_in_row_batches then multiplies the batch's rows in two halves.
class batch_too_large : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Row r of A's products with B (sum over its entries (r, j) of the length of B's row j),
/// as exclusive prefix sums over A's rows: `rows + 1` entries, in the execution space.
template <class ExecSpace, class T, class MemorySpace>
Kokkos::View<offset_type*, MemorySpace> product_prefix(const ExecSpace& exec,
                                                       const Kokkos::View<const offset_type*, MemorySpace>& a_ptr,
                                                       const Kokkos::View<const local_index*, MemorySpace>& a_col,
                                                       const csr32<T, MemorySpace>& b) {
  const std::size_t rows = a_ptr.extent(0) - 1;
  const Kokkos::View<offset_type*, MemorySpace> prefix("tessera::spgemm::product_prefix", rows + 1);
  const auto b_ptr = b.row_ptr;
  Kokkos::parallel_scan(
      "tessera::spgemm::product_prefix", Kokkos::RangePolicy<ExecSpace>(exec, 0, rows + 1),
      KOKKOS_LAMBDA(const std::size_t r, offset_type& sum, const bool final) {
        if (final) prefix(r) = sum;
        if (r < rows)
          for (offset_type e = a_ptr(r); e < a_ptr(r + 1); ++e) sum += b_ptr(a_col(e) + 1) - b_ptr(a_col(e));
      });
  return prefix;
}

/// Consecutive row ranges [first, last) of A, each with at most `limit` entries of A and
/// `limit` products (host arrays of A's offsets and product_prefix). Throws (unsupported) naming
/// the row when one row alone exceeds the limit.
inline std::vector<std::pair<std::size_t, std::size_t>> row_batches(const offset_type* a_ptr,
                                                                    const offset_type* prefix, std::size_t rows,
                                                                    offset_type limit) {
  std::vector<std::pair<std::size_t, std::size_t>> batches;
  for (std::size_t first = 0; first < rows;) {
    std::size_t last = first;
    while (last < rows && a_ptr[last + 1] - a_ptr[first] <= limit && prefix[last + 1] - prefix[first] <= limit) ++last;
    TESSERA_REQUIRE(last > first, unsupported,
                    "spgemm: row {} of A has {} entries and forms {} products, more than the {} that a kernel with "
                    "32-bit offsets takes",
                    first, a_ptr[first + 1] - a_ptr[first], prefix[first + 1] - prefix[first], limit);
    batches.emplace_back(first, last);
    first = last;
  }
  return batches;
}

namespace detail {

// The device loops of multiply_in_row_batches, outside it: nvcc refuses a device lambda in a
// function templated on a local type (its MultiplyBatch).

/// Rows [first, last) of A's offsets, from 0, as int.
template <class ExecSpace, class MemorySpace>
Kokkos::View<int*, MemorySpace> batch_offsets(const ExecSpace& exec, const Kokkos::View<const offset_type*, MemorySpace>& a_ptr,
                                              std::size_t first, std::size_t last) {
  const Kokkos::View<int*, MemorySpace> ptr32(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::batch_ptr"),
                                              last - first + 1);
  Kokkos::parallel_for(
      "tessera::spgemm::batch_ptr", Kokkos::RangePolicy<ExecSpace>(exec, 0, last - first + 1),
      KOKKOS_LAMBDA(const std::size_t i) { ptr32(i) = static_cast<int>(a_ptr(first + i) - a_ptr(first)); });
  return ptr32;
}

/// C's offsets of rows first, first + 1, ... from a batch's: row first + i starts at `at` plus the
/// batch's offset i (its last offset, the next batch's first, is written by both, equal).
template <class ExecSpace, class MemorySpace>
void join_offsets(const ExecSpace& exec, const Kokkos::View<const int*, MemorySpace>& part_ptr, std::size_t first,
                  offset_type at, const Kokkos::View<offset_type*, MemorySpace>& row_ptr) {
  Kokkos::parallel_for(
      "tessera::spgemm::join_rows", Kokkos::RangePolicy<ExecSpace>(exec, 0, part_ptr.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { row_ptr(first + i) = at + part_ptr(i); });
}

}  // namespace detail

/// C = A * B through `multiply_batch(a_rows)`, which multiplies a csr32 slice of A's rows by B
/// and returns a csr32_product (columns sorted within rows); the slices follow row_batches, and a
/// slice whose multiply_batch throws batch_too_large is split in two halves of its rows (down to
/// one row, which is then refused with a sentence). A is `rows` x B's rows with 64-bit offsets;
/// C has B's columns.
template <class ExecSpace, class T, class MemorySpace, class MultiplyBatch>
csr64_product<T, MemorySpace> multiply_in_row_batches(const ExecSpace& exec,
                                                      const Kokkos::View<const offset_type*, MemorySpace>& a_ptr,
                                                      const Kokkos::View<const local_index*, MemorySpace>& a_col,
                                                      const Kokkos::View<const T*, MemorySpace>& a_val,
                                                      const csr32<T, MemorySpace>& b, offset_type limit,
                                                      MultiplyBatch&& multiply_batch) {
  const std::size_t rows = a_ptr.extent(0) - 1;
  const auto prefix = product_prefix(exec, a_ptr, a_col, b);
  const auto a_ptr_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a_ptr);
  const auto prefix_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, prefix);
  const auto planned = row_batches(a_ptr_host.data(), prefix_host.data(), rows, limit);

  // The batches still to multiply, the next one last; a batch too large for the device comes back
  // as its two halves. The parts stay in row order.
  std::vector<std::pair<std::size_t, std::size_t>> pending(planned.rbegin(), planned.rend()), batches;
  std::vector<csr32_product<T, MemorySpace>> parts;
  parts.reserve(planned.size());
  batches.reserve(planned.size());
  std::size_t total = 0;
  while (!pending.empty()) {
    const auto [first, last] = pending.back();
    pending.pop_back();
    const auto begin = static_cast<std::size_t>(a_ptr_host(first)), end = static_cast<std::size_t>(a_ptr_host(last));
    const csr32<T, MemorySpace> slice{static_cast<int>(last - first), b.cols, detail::batch_offsets(exec, a_ptr, first, last),
                                      Kokkos::subview(a_col, std::make_pair(begin, end)),
                                      Kokkos::subview(a_val, std::make_pair(begin, end))};
    try {
      parts.push_back(multiply_batch(slice));
    } catch (const batch_too_large& refused) {
      TESSERA_REQUIRE(last - first > 1, unsupported,
                      "spgemm: row {} of A ({} entries, {} products) needs more device memory for its product than "
                      "is free ({})",
                      first, a_ptr_host(first + 1) - a_ptr_host(first), prefix_host(first + 1) - prefix_host(first),
                      refused.what());
      const std::size_t middle = first + (last - first) / 2;
      pending.emplace_back(middle, last);
      pending.emplace_back(first, middle);
      continue;
    }
    batches.emplace_back(first, last);
    total += parts.back().col_idx.extent(0);
  }

  csr64_product<T, MemorySpace> c;
  c.row_ptr = Kokkos::View<offset_type*, MemorySpace>("tessera::spgemm::row_ptr", rows + 1);  // zero: no rows, no batch
  c.col_idx = Kokkos::View<local_index*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::col_idx"), total);
  c.values = Kokkos::View<T*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::values"),
                                           total);
  std::size_t at = 0;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto& part = parts[p];
    const std::size_t first = batches[p].first, count = part.col_idx.extent(0);
    detail::join_offsets(exec, Kokkos::View<const int*, MemorySpace>(part.row_ptr), first, static_cast<offset_type>(at),
                         c.row_ptr);
    const auto span = std::make_pair(at, at + count);
    Kokkos::deep_copy(exec, Kokkos::subview(c.col_idx, span), part.col_idx);
    Kokkos::deep_copy(exec, Kokkos::subview(c.values, span), part.values);
    at += count;
  }
  exec.fence();
  c.batches = parts.size();
  return c;
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_ROW_BATCHES_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_ROW_BATCHES_HPP
#endif
