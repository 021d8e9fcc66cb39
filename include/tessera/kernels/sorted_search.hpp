#pragma once
/// @file
/// Binary search in a sorted View, callable inside kernels on any execution space.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SORTED_SEARCH_HPP
#endif

#include <Kokkos_Core.hpp>  // KOKKOS_INLINE_FUNCTION: this header is included on its own too

#include <cstddef>

namespace tessera::kernels {

/// The first position in sorted[first, last) whose value is not less than `value`
/// (std::lower_bound on a range of a View: a row of a CSR matrix, say).
template <class SortedView, class Index, class Value>
KOKKOS_INLINE_FUNCTION Index lower_bound_in(const SortedView& sorted, Index first, Index last, const Value& value) {
  for (Index count = last - first; count > 0;) {
    const Index half = count / 2;
    if (sorted(first + half) < value) {
      first += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return first;
}

/// The first position in sorted[0, n) whose value is not less than `value` (std::lower_bound).
template <class SortedView, class Value>
KOKKOS_INLINE_FUNCTION std::size_t lower_bound_in(const SortedView& sorted, std::size_t n, const Value& value) {
  return lower_bound_in(sorted, std::size_t{0}, n, value);
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SORTED_SEARCH_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SORTED_SEARCH_HPP
#endif
