#pragma once
/// @file
/// Binary operations used to combine duplicate entries when a matrix is assembled.
///
/// Any callable `T(T, T)` that can run in the policy's execution space works
/// (a KOKKOS_LAMBDA or a struct with a KOKKOS_INLINE_FUNCTION call operator).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_COMBINE_HPP
#endif

#include <Kokkos_Core.hpp>

namespace tessera::combine {

/// Duplicates are summed (the default, as in Matrix Market and PETSc's ADD_VALUES).
struct sum {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(const T& a, const T& b) const { return a + b; }
};

/// The largest duplicate is kept.
struct max {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

/// The smallest duplicate is kept.
struct min {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};

/// Duplicates are an error-free "any": one of them is kept (useful for pattern matrices).
struct any {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(const T& a, const T&) const { return a; }
};

}  // namespace tessera::combine

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_COMBINE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_COMBINE_HPP
#endif
