#pragma once
/// @file
/// Semirings for SpGEMM: how products are formed and how they are summed.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SEMIRING_HPP
#endif

#include <Kokkos_Core.hpp>

#include <concepts>
#include <limits>

namespace tessera {

/// A semiring over T: add(a, b) folds products of the same output entry,
/// multiply(a, b) forms one product. Both run in the execution space
/// (KOKKOS_INLINE_FUNCTION). Only stored entries take part, so no zero is needed.
template <class S, class T>
concept semiring = std::copy_constructible<S> && requires(const S& s, const T& a, const T& b) {
  { s.add(a, b) } -> std::convertible_to<T>;
  { s.multiply(a, b) } -> std::convertible_to<T>;
};

/// A semiring that also names its additive identity: add(identity<T>(), p) == p for every
/// product p. Optional; where it is given, the host SpGEMM kernel starts each output entry from it
/// and adds every product unconditionally, instead of testing whether the entry is new (on R-MAT
/// products that test was 40% of the time).
template <class S, class T>
concept semiring_with_identity = semiring<S, T> && requires(const S& s) {
  { s.template identity<T>() } -> std::convertible_to<T>;
};

namespace semirings {

/// The arithmetic one: C(i,j) = sum_k A(i,k) * B(k,j).
struct plus_times {
  template <class T>
  KOKKOS_INLINE_FUNCTION T add(const T& a, const T& b) const { return a + b; }
  template <class T>
  KOKKOS_INLINE_FUNCTION T multiply(const T& a, const T& b) const { return a * b; }
  /// 0 (+0: an entry whose products sum to exactly zero is +0, whatever the sign of the first).
  template <class T>
  KOKKOS_INLINE_FUNCTION T identity() const { return T{}; }
};

/// Tropical: shortest paths, C(i,j) = min_k A(i,k) + B(k,j).
struct min_plus {
  template <class T>
  KOKKOS_INLINE_FUNCTION T add(const T& a, const T& b) const { return b < a ? b : a; }
  template <class T>
  KOKKOS_INLINE_FUNCTION T multiply(const T& a, const T& b) const { return a + b; }
  /// +infinity (the largest T where T has none).
  template <class T>
  KOKKOS_INLINE_FUNCTION T identity() const {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  }
};

/// Most reliable path: C(i,j) = max_k A(i,k) * B(k,j).
struct max_times {
  template <class T>
  KOKKOS_INLINE_FUNCTION T add(const T& a, const T& b) const { return a < b ? b : a; }
  template <class T>
  KOKKOS_INLINE_FUNCTION T multiply(const T& a, const T& b) const { return a * b; }
  /// -infinity (the lowest T where T has none).
  template <class T>
  KOKKOS_INLINE_FUNCTION T identity() const {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  }
};

/// Reachability: C(i,j) = 1 if some k has A(i,k) != 0 and B(k,j) != 0, else the entry is 0.
struct or_and {
  template <class T>
  KOKKOS_INLINE_FUNCTION T add(const T& a, const T& b) const { return (a != T{} || b != T{}) ? T{1} : T{}; }
  template <class T>
  KOKKOS_INLINE_FUNCTION T multiply(const T& a, const T& b) const { return (a != T{} && b != T{}) ? T{1} : T{}; }
  template <class T>
  KOKKOS_INLINE_FUNCTION T identity() const { return T{}; }
};

}  // namespace semirings
}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SEMIRING_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SEMIRING_HPP
#endif
