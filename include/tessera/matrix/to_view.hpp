#pragma once
/// @file
/// to_view: a host vector copied into a View of any memory space (one deep_copy through a mirror).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_TO_VIEW_HPP
#endif

#include "../core/deep_copy.hpp"

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

namespace tessera {

/// A View of `MemorySpace` holding a copy of `host`, labelled `label`.
template <class T, class MemorySpace>
[[nodiscard]] Kokkos::View<T*, MemorySpace> to_view(const std::vector<T>& host, const char* label) {
  // Every element is written below: no zero-fill first (it was a tenth of a Laplacian SpGEMM).
  Kokkos::View<T*, MemorySpace> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), host.size());
  auto mirror = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < host.size(); ++i) mirror(i) = host[i];
  tessera::detail::deep_copy(v, mirror);
  return v;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_TO_VIEW_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_TO_VIEW_HPP
#endif
