#pragma once
/// @file
/// Turning MPI return codes into tessera::error.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_CHECK_HPP
#endif

#include <mpi.h>

#include "../core/error.hpp"

#include <string>

namespace tessera::detail {

[[nodiscard]] inline std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return ::tessera::detail::formatted("MPI error code {}", code);
  return std::string(text, static_cast<std::size_t>(length));
}

/// Throws the mpi_error that names the failed call and MPI's words for its code (out of line and
/// cold, like raise_formatted: there are dozens of MPI calls in a unit).
[[noreturn, gnu::cold, gnu::noinline]] inline void raise_mpi_error(const char* call, int code, const char* file,
                                                                   int line) {
  throw error(error_kind::mpi_error, ::tessera::detail::formatted("{} failed: {}", call, mpi_error_string(code)), file,
              line);
}

}  // namespace tessera::detail

/// Call an MPI function; throw tessera::error (kind mpi_error) naming the call if it fails.
/// Communicators made by tessera use MPI_ERRORS_RETURN, so the code reaches us.
#define TESSERA_MPI(call)                                                                         \
  do {                                                                                            \
    const int tessera_mpi_rc_ = (call);                                                           \
    if (tessera_mpi_rc_ != MPI_SUCCESS)                                                           \
      ::tessera::detail::raise_mpi_error(#call, tessera_mpi_rc_, __FILE__, __LINE__);             \
  } while (false)

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_CHECK_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_CHECK_HPP
#endif
