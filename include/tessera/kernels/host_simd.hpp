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

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_HOST_SIMD_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_HOST_SIMD_HPP
#endif
