#pragma once
/// @file
/// Which x86 SIMD instruction sets tessera's host kernels may use, decided in one place.
///
/// Intrinsics are used only under a plain host compiler: nvcc and hipcc parse host functions in
/// their device passes too, and the intrinsic headers of recent GCC do not survive that. Under
/// them the portable loops run instead (the device kernels never use these paths anyway).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_HOST_SIMD_HPP
#endif

#if !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__)
#if defined(__AVX512F__)
#define TESSERA_HOST_AVX512 1
#endif
#if defined(__AVX2__) && defined(__FMA__)
#define TESSERA_HOST_AVX2_FMA 1
#endif
#endif

#if defined(TESSERA_HOST_AVX512) || defined(TESSERA_HOST_AVX2_FMA)
#include <immintrin.h>
#endif

namespace tessera::kernels::detail {

/// One SIMD register of Ts on the host and its few operations, the widest the build has
/// (AVX-512, else AVX2 with FMA); `native` is false (and `reg` a plain T) where it has neither, so
/// kernels written against it fall back to their portable loops. Streaming stores need `p`
/// aligned to the register's width. `load_first` / `store_first` touch only the first `count`
/// lanes (1 to lanes; masked, so the memory past them is never read or written).
template <class T>
struct host_vector {
  static constexpr bool native = false;
  using reg = T;
  static constexpr int lanes = 1;
  static reg zero() { return T{}; }
  static reg load(const T* p) { return *p; }
  static reg broadcast(T x) { return x; }
  static reg fma(reg a, reg b, reg c) { return a * b + c; }
  static void store(T* p, reg x) { *p = x; }
  static void stream(T* p, reg x) { *p = x; }
  static reg load_first(const T* p, int count) { return count > 0 ? *p : T{}; }
  static void store_first(T* p, reg x, int count) {
    if (count > 0) *p = x;
  }
};

#if defined(TESSERA_HOST_AVX512)
template <>
struct host_vector<double> {
  static constexpr bool native = true;
  using reg = __m512d;
  static constexpr int lanes = 8;
  static reg zero() { return _mm512_setzero_pd(); }
  static reg load(const double* p) { return _mm512_loadu_pd(p); }
  static reg broadcast(double x) { return _mm512_set1_pd(x); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_pd(a, b, c); }
  static void store(double* p, reg x) { _mm512_storeu_pd(p, x); }
  static void stream(double* p, reg x) { _mm512_stream_pd(p, x); }
  static __mmask8 first(int count) { return static_cast<__mmask8>((1u << count) - 1u); }
  static reg load_first(const double* p, int count) { return _mm512_maskz_loadu_pd(first(count), p); }
  static void store_first(double* p, reg x, int count) { _mm512_mask_storeu_pd(p, first(count), x); }
};
template <>
struct host_vector<float> {
  static constexpr bool native = true;
  using reg = __m512;
  static constexpr int lanes = 16;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static reg broadcast(float x) { return _mm512_set1_ps(x); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, reg x) { _mm512_storeu_ps(p, x); }
  static void stream(float* p, reg x) { _mm512_stream_ps(p, x); }
  static __mmask16 first(int count) { return static_cast<__mmask16>((1u << count) - 1u); }
  static reg load_first(const float* p, int count) { return _mm512_maskz_loadu_ps(first(count), p); }
  static void store_first(float* p, reg x, int count) { _mm512_mask_storeu_ps(p, first(count), x); }
};
#elif defined(TESSERA_HOST_AVX2_FMA)
template <>
struct host_vector<double> {
  static constexpr bool native = true;
  using reg = __m256d;
  static constexpr int lanes = 4;
  static reg zero() { return _mm256_setzero_pd(); }
  static reg load(const double* p) { return _mm256_loadu_pd(p); }
  static reg broadcast(double x) { return _mm256_set1_pd(x); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_pd(a, b, c); }
  static void store(double* p, reg x) { _mm256_storeu_pd(p, x); }
  static void stream(double* p, reg x) { _mm256_stream_pd(p, x); }
  static __m256i first(int count) { return _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), _mm256_setr_epi64x(0, 1, 2, 3)); }
  static reg load_first(const double* p, int count) { return _mm256_maskload_pd(p, first(count)); }
  static void store_first(double* p, reg x, int count) { _mm256_maskstore_pd(p, first(count), x); }
};
template <>
struct host_vector<float> {
  static constexpr bool native = true;
  using reg = __m256;
  static constexpr int lanes = 8;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg broadcast(float x) { return _mm256_set1_ps(x); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, reg x) { _mm256_storeu_ps(p, x); }
  static void stream(float* p, reg x) { _mm256_stream_ps(p, x); }
  static __m256i first(int count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static reg load_first(const float* p, int count) { return _mm256_maskload_ps(p, first(count)); }
  static void store_first(float* p, reg x, int count) { _mm256_maskstore_ps(p, first(count), x); }
};
#endif

}  // namespace tessera::kernels::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_HOST_SIMD_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_HOST_SIMD_HPP
#endif
