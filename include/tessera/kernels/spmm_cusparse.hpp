#pragma once
/// @file
/// Y = A * X on a CUDA device through cuSPARSE's SpMM (cusparseSpMM), for builds whose
/// Kokkos-Kernels has cuSPARSE (KOKKOSKERNELS_ENABLE_TPL_CUSPARSE): what spmm_kernel::kokkos_kernels
/// runs there. Kokkos-Kernels' multivector spmv reaches the same call for 32-bit offsets and
/// columns, but it decides between cuSPARSE and its own kernels at run time, so every unit that
/// calls it compiles its own 64 spmv kernel variants as well (86% of the device code of a unit with
/// spmm's options, and most of its nvcc time) to run none of them.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_CUSPARSE_HPP
#endif

#include <Kokkos_Core.hpp>
#include <KokkosKernels_config.h>

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
#include "../core/scratch_pool.hpp"
#include "cusparse_operands.hpp"

#include <cusparse.h>

#include <cstdint>
#include <type_traits>

namespace tessera::kernels {

namespace detail {

/// A cuSPARSE column-major dense descriptor of `m`, destroyed with this object.
template <class View>
class dense_descriptor {
 public:
  explicit dense_descriptor(const View& m) {
    using T = typename View::non_const_value_type;
    // A leading dimension of at least 1, as cuSPARSE asks, even for a matrix without rows.
    const auto ld = static_cast<std::int64_t>(m.extent(0) > 0 ? m.stride(1) : 1);
    check_cusparse(cusparseCreateDnMat(&descriptor_, static_cast<std::int64_t>(m.extent(0)),
                                       static_cast<std::int64_t>(m.extent(1)), ld,
                                       const_cast<T*>(m.data()), cusparse_type<T>, CUSPARSE_ORDER_COL),
                   "cusparseCreateDnMat");
  }
  dense_descriptor(const dense_descriptor&) = delete;
  dense_descriptor& operator=(const dense_descriptor&) = delete;
  ~dense_descriptor() { cusparseDestroyDnMat(descriptor_); }
  [[nodiscard]] cusparseDnMatDescr_t get() const noexcept { return descriptor_; }

 private:
  cusparseDnMatDescr_t descriptor_ = nullptr;
};

}  // namespace detail

/// Y = A * X by cusparseSpMM on `exec`'s stream: A is rows x cols (32-bit offsets), X cols x k and
/// Y rows x k, both column-major. Asynchronous like a Kokkos kernel on `exec`, which must be the
/// default instance: the work buffer goes back to the scratch pool (core/scratch_pool.hpp) while
/// the product may still run, and the pool's next user is ordered after it only on that instance.
template <class T, class MemorySpace>
void spmm_cusparse(const Kokkos::Cuda& exec, const csr32<T, MemorySpace>& a,
                   const Kokkos::View<const T**, Kokkos::LayoutLeft, MemorySpace>& x,
                   const Kokkos::View<T**, Kokkos::LayoutLeft, MemorySpace>& y) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "tessera::spmm_cusparse: float or double");
  if (y.extent(0) == 0 || y.extent(1) == 0) return;
  if (a.values.extent(0) == 0) {  // cuSPARSE is not asked about an empty A: Y = 0
    Kokkos::deep_copy(exec, y, T{0});
    return;
  }
  using detail::check_cusparse;
  const detail::cusparse_session session(exec);
  const detail::csr_descriptor<T, MemorySpace> a_descriptor(a);
  const detail::dense_descriptor<Kokkos::View<const T**, Kokkos::LayoutLeft, MemorySpace>> x_descriptor(x);
  const detail::dense_descriptor<Kokkos::View<T**, Kokkos::LayoutLeft, MemorySpace>> y_descriptor(y);
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const T alpha = 1, beta = 0;
  std::size_t bytes = 0;
  check_cusparse(cusparseSpMM_bufferSize(session.handle(), op, op, &alpha, a_descriptor.get(), x_descriptor.get(), &beta,
                                         y_descriptor.get(), detail::cusparse_type<T>, CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
                 "cusparseSpMM_bufferSize");
  // The buffer goes back to the scratch pool on return; its next user runs on this same stream,
  // after this product.
  const tessera::scratch<char, MemorySpace> buffer(bytes > 0 ? bytes : 1);
  check_cusparse(cusparseSpMM(session.handle(), op, op, &alpha, a_descriptor.get(), x_descriptor.get(), &beta,
                              y_descriptor.get(), detail::cusparse_type<T>, CUSPARSE_SPMM_ALG_DEFAULT,
                              buffer.view().data()),
                 "cusparseSpMM");
}

}  // namespace tessera::kernels
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_CUSPARSE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_CUSPARSE_HPP
#endif
