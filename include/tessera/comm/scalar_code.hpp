#pragma once
/// @file
/// scalar_code: the element types a backend must know how to sum (accumulate) and add to
/// (fetch_add). It travels with every accumulate, so a backend that applies operations to
/// raw bytes (a message handler, a progress rank) knows the type without templates.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SCALAR_CODE_HPP
#endif

#include <cstdint>
#include <type_traits>

namespace tessera {

/// The element type of an accumulate, as a backend's `start_accumulate` receives it.
enum class scalar_code : std::uint8_t { opaque = 0, i32, i64, u32, u64, f32, f64 };

/// The code of T (opaque for types accumulate does not support).
template <class T>
[[nodiscard]] constexpr scalar_code scalar_code_of() noexcept {
  if constexpr (std::is_same_v<T, std::int32_t>) return scalar_code::i32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return scalar_code::i64;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return scalar_code::u32;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return scalar_code::u64;
  else if constexpr (std::is_same_v<T, float>) return scalar_code::f32;
  else if constexpr (std::is_same_v<T, double>) return scalar_code::f64;
  else return scalar_code::opaque;
}

/// True for the element types accumulate (sum) supports on every backend.
template <class T>
inline constexpr bool accumulable = scalar_code_of<T>() != scalar_code::opaque;

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SCALAR_CODE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SCALAR_CODE_HPP
#endif
