#pragma once
/// @file
/// What tessera's cuSPARSE calls share (kernels/spgemm_cusparse.hpp, kernels/spmm_cusparse.hpp):
/// the status check, descriptors of csr32 operands (csr32.hpp), and a session that lends
/// Kokkos-Kernels' cuSPARSE handle to one call on an execution space's stream. For builds whose
/// Kokkos has CUDA and whose Kokkos-Kernels has cuSPARSE (KOKKOSKERNELS_ENABLE_TPL_CUSPARSE).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_CUSPARSE_OPERANDS_HPP
#endif

#include <Kokkos_Core.hpp>
#include <KokkosKernels_config.h>

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
#include "../core/error.hpp"
#include "csr32.hpp"

#include <KokkosKernels_Controls.hpp>
#include <cusparse.h>

#include <type_traits>

namespace tessera::kernels {

namespace detail {

/// Throws tessera::error (external) naming the call when cuSPARSE did not succeed.
inline void check_cusparse(cusparseStatus_t status, const char* call) {
  TESSERA_REQUIRE(status == CUSPARSE_STATUS_SUCCESS, external, "{} failed: {}", call, cusparseGetErrorString(status));
}

/// cuSPARSE's data type for T (float or double).
template <class T>
inline constexpr cudaDataType cusparse_type = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;

/// Kokkos-Kernels' cuSPARSE handle on `exec`'s stream, reading scalars (alpha, beta) from host
/// memory, for the session's lifetime (the handle is Kokkos-Kernels' and gets its stream and
/// pointer mode back on every way out, a failed call's throw included). tessera passes alpha and
/// beta as host scalars; a handle someone left in device pointer mode would read them as device
/// addresses.
class cusparse_session {
 public:
  explicit cusparse_session(const Kokkos::Cuda& exec)
      : handle_(KokkosKernels::Experimental::Controls().getCusparseHandle()) {
    check_cusparse(cusparseGetStream(handle_, &previous_stream_), "cusparseGetStream");
    check_cusparse(cusparseGetPointerMode(handle_, &previous_mode_), "cusparseGetPointerMode");
    check_cusparse(cusparseSetStream(handle_, exec.cuda_stream()), "cusparseSetStream");
    if (const auto status = cusparseSetPointerMode(handle_, CUSPARSE_POINTER_MODE_HOST);
        status != CUSPARSE_STATUS_SUCCESS) {
      cusparseSetStream(handle_, previous_stream_);  // no destructor runs for a constructor that throws
      check_cusparse(status, "cusparseSetPointerMode");
    }
  }
  cusparse_session(const cusparse_session&) = delete;
  cusparse_session& operator=(const cusparse_session&) = delete;
  ~cusparse_session() {
    cusparseSetPointerMode(handle_, previous_mode_);
    cusparseSetStream(handle_, previous_stream_);
  }
  [[nodiscard]] cusparseHandle_t handle() const noexcept { return handle_; }

 private:
  cusparseHandle_t handle_ = nullptr;
  cudaStream_t previous_stream_ = nullptr;
  cusparsePointerMode_t previous_mode_ = CUSPARSE_POINTER_MODE_HOST;
};

/// A cuSPARSE CSR descriptor of `a`, destroyed with this object.
template <class T, class MemorySpace>
class csr_descriptor {
 public:
  explicit csr_descriptor(const csr32<T, MemorySpace>& a) {
    check_cusparse(cusparseCreateCsr(&descriptor_, a.rows, a.cols, static_cast<std::int64_t>(a.values.extent(0)),
                                     const_cast<int*>(a.row_ptr.data()), const_cast<int*>(a.col_idx.data()),
                                     const_cast<T*>(a.values.data()), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, cusparse_type<T>),
                   "cusparseCreateCsr");
  }
  csr_descriptor(const csr_descriptor&) = delete;
  csr_descriptor& operator=(const csr_descriptor&) = delete;
  ~csr_descriptor() { cusparseDestroySpMat(descriptor_); }
  [[nodiscard]] cusparseSpMatDescr_t get() const noexcept { return descriptor_; }

 private:
  cusparseSpMatDescr_t descriptor_ = nullptr;
};

}  // namespace detail
}  // namespace tessera::kernels
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_CUSPARSE_OPERANDS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_CUSPARSE_OPERANDS_HPP
#endif
