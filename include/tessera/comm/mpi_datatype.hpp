#pragma once
/// @file
/// The MPI datatype of each C++ type tessera sends.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_DATATYPE_HPP
#endif

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tessera {

/// True for the types that have a predefined MPI datatype here.
template <class T>
inline constexpr bool has_mpi_datatype =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, char> || std::is_same_v<T, std::byte> || std::is_same_v<T, unsigned char>;

/// The predefined MPI datatype for T.
template <class T>
  requires has_mpi_datatype<T>
[[nodiscard]] inline MPI_Datatype mpi_datatype() noexcept {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return MPI_UINT32_T;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return MPI_UINT64_T;
  else if constexpr (std::is_same_v<T, char>) return MPI_CHAR;
  else return MPI_BYTE;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_DATATYPE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_DATATYPE_HPP
#endif
