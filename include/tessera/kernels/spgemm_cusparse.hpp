#pragma once
/// @file
/// C = A * B on a CUDA device through cuSPARSE's one-shot SpGEMM (cusparseSpGEMM: work estimation,
/// compute, copy), for builds whose Kokkos-Kernels has cuSPARSE (KOKKOSKERNELS_ENABLE_TPL_CUSPARSE).
/// Kokkos-Kernels 4.6 wraps the same call (KokkosSparse::spgemm(A, B)), but its wrapper runs the
/// compute phase a third time after allocating C: on an H100 a product through it took 1.7 times
/// cuSPARSE's own time (R-MAT 16 squared), and through the handle's symbolic + numeric (cuSPARSE's
/// reuse interface) 1.9 times. 32-bit offsets and columns, float or double values. A product that
/// needs more memory than the device gives (cuSPARSE's default algorithm asks for buffers in
/// proportion to the products it forms) throws batch_too_large, which the row batches answer by
/// multiplying fewer rows at a time (kernels/spgemm_row_batches.hpp).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_CUSPARSE_HPP
#endif

#include <Kokkos_Core.hpp>
#include <KokkosKernels_config.h>

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
#include "../core/error.hpp"
#include "../core/scratch_pool.hpp"
#include "cusparse_operands.hpp"
#include "spgemm_row_batches.hpp"

#include <cusparse.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>

namespace tessera::kernels {

namespace detail {
/// check_cusparse, except that running out of memory is the product's size (batch_too_large).
inline void check_cusparse_room(cusparseStatus_t status, const char* call) {
  if (status == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES || status == CUSPARSE_STATUS_ALLOC_FAILED)
    throw batch_too_large(std::string(call) + ": " + cusparseGetErrorString(status));
  check_cusparse(status, call);
}

/// make(), with a failed allocation (Kokkos throws std::runtime_error) turned into batch_too_large.
template <class Make>
auto allocated_or_too_large(Make&& make) {
  try {
    return make();
  } catch (const batch_too_large&) {
    throw;
  } catch (const std::exception& failed) {
    throw batch_too_large(failed.what());
  }
}
}  // namespace detail

/// C = A * B by cusparseSpGEMM on `exec`'s stream (A is m x n, B n x k; both sorted within rows).
template <class T, class MemorySpace>
csr32_product<T, MemorySpace> spgemm_cusparse(const Kokkos::Cuda& exec, const csr32<T, MemorySpace>& a,
                                              const csr32<T, MemorySpace>& b) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "tessera::spgemm_cusparse: float or double");
  constexpr cudaDataType type = detail::cusparse_type<T>;
  csr32_product<T, MemorySpace> c;
  c.row_ptr = Kokkos::View<int*, MemorySpace>("tessera::spgemm::row_ptr32", static_cast<std::size_t>(a.rows) + 1);
  if (a.values.extent(0) == 0 || b.values.extent(0) == 0 || a.rows == 0 || b.cols == 0) return c;  // C = 0
  using detail::allocated_or_too_large;
  using detail::check_cusparse;
  using detail::check_cusparse_room;
  // Released on every way out (a failed call throws), in reverse order: the product's descriptor,
  // the matrices', then the handle's stream.
  const detail::cusparse_session session(exec);
  const cusparseHandle_t handle = session.handle();
  const detail::csr_descriptor<T, MemorySpace> a_descriptor(a), b_descriptor(b);
  const detail::csr_descriptor<T, MemorySpace> c_descriptor(csr32<T, MemorySpace>{a.rows, b.cols, c.row_ptr, {}, {}});
  const cusparseSpMatDescr_t da = a_descriptor.get(), db = b_descriptor.get(), dc = c_descriptor.get();
  struct product_descriptor {
    cusparseSpGEMMDescr_t get = nullptr;
    ~product_descriptor() {
      if (get != nullptr) cusparseSpGEMM_destroyDescr(get);
    }
  } product;
  check_cusparse(cusparseSpGEMM_createDescr(&product.get), "cusparseSpGEMM_createDescr");
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const T alpha = 1, beta = 0;
  constexpr auto algorithm = CUSPARSE_SPGEMM_DEFAULT;
  std::size_t bytes1 = 0, bytes2 = 0;
  check_cusparse_room(cusparseSpGEMM_workEstimation(handle, op, op, &alpha, da, db, &beta, dc, type, algorithm,
                                                    product.get, &bytes1, nullptr),
                      "cusparseSpGEMM_workEstimation");
  using buffer = tessera::scratch<char, MemorySpace>;
  const auto buffer1 = allocated_or_too_large([&] { return std::make_unique<buffer>(bytes1 > 0 ? bytes1 : 1); });
  check_cusparse_room(cusparseSpGEMM_workEstimation(handle, op, op, &alpha, da, db, &beta, dc, type, algorithm,
                                                    product.get, &bytes1, buffer1->view().data()),
                      "cusparseSpGEMM_workEstimation");
  check_cusparse_room(cusparseSpGEMM_compute(handle, op, op, &alpha, da, db, &beta, dc, type, algorithm, product.get,
                                             &bytes2, nullptr),
                      "cusparseSpGEMM_compute");
  const auto buffer2 = allocated_or_too_large([&] { return std::make_unique<buffer>(bytes2 > 0 ? bytes2 : 1); });
  check_cusparse_room(cusparseSpGEMM_compute(handle, op, op, &alpha, da, db, &beta, dc, type, algorithm, product.get,
                                             &bytes2, buffer2->view().data()),
                      "cusparseSpGEMM_compute");
  std::int64_t rows = 0, cols = 0, nnz = 0;
  check_cusparse(cusparseSpMatGetSize(dc, &rows, &cols, &nnz), "cusparseSpMatGetSize");
  allocated_or_too_large([&] {
    c.col_idx = Kokkos::View<int*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::col_idx"), static_cast<std::size_t>(nnz));
    c.values = Kokkos::View<T*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spgemm::values"),
                                             static_cast<std::size_t>(nnz));
    return 0;
  });
  check_cusparse(cusparseCsrSetPointers(dc, c.row_ptr.data(), c.col_idx.data(), c.values.data()), "cusparseCsrSetPointers");
  check_cusparse(cusparseSpGEMM_copy(handle, op, op, &alpha, da, db, &beta, dc, type, algorithm, product.get),
                 "cusparseSpGEMM_copy");
  // C complete when returned, as every caller assumes (the buffers, back in the scratch pool, are
  // next used on this same stream, so they alone would not need it).
  exec.fence("tessera::spgemm_cusparse");
  return c;
}

}  // namespace tessera::kernels
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_CUSPARSE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPGEMM_CUSPARSE_HPP
#endif
