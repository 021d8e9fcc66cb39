#pragma once
/// @file
/// The one exception type tessera throws, and the macros that raise it with file and line.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_ERROR_HPP
#endif

#include "format.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

/// What went wrong, so callers can react without parsing messages.
enum class error_kind : int {
  invalid_argument = 1,    ///< a parameter is out of its domain (negative size, bad option)
  dimension_mismatch = 2,  ///< operand shapes or distributions do not agree
  index_out_of_range = 3,  ///< an entry lies outside the matrix
  parse_error = 4,         ///< a file is malformed (message names the file and line)
  io_error = 5,            ///< a file cannot be opened, read or written
  mpi_error = 6,           ///< an MPI call returned an error code
  unsupported = 7,         ///< valid input that this version does not handle
  internal = 8,            ///< a broken invariant: please report it
  external = 9,            ///< an exception not raised by tessera (std::bad_alloc, a user callback)
};

[[nodiscard]] constexpr std::string_view to_string(error_kind k) noexcept {
  switch (k) {
    case error_kind::invalid_argument: return "invalid argument";
    case error_kind::dimension_mismatch: return "dimension mismatch";
    case error_kind::index_out_of_range: return "index out of range";
    case error_kind::parse_error: return "parse error";
    case error_kind::io_error: return "I/O error";
    case error_kind::mpi_error: return "MPI error";
    case error_kind::unsupported: return "unsupported";
    case error_kind::internal: return "internal error";
    case error_kind::external: return "external exception";
  }
  return "unknown error";
}

/// Exception raised by every tessera operation.
///
/// Collective operations raise it on *every* rank of the communicator when any
/// rank fails (see communicator::collectively), so `origin_rank()` tells where
/// the failure was first seen and `what()` carries that rank's message.
class error : public std::runtime_error {
 public:
  error(error_kind kind, std::string message, const char* file = "", int line = 0, int origin_rank = -1)
      : std::runtime_error(compose(kind, message, origin_rank)),
        kind_(kind),
        message_(std::move(message)),
        file_(file),
        line_(line),
        origin_rank_(origin_rank) {}

  [[nodiscard]] error_kind kind() const noexcept { return kind_; }
  /// The message without the kind/rank prefix that what() adds.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// Source location in tessera where the error was raised.
  [[nodiscard]] const char* file() const noexcept { return file_; }
  [[nodiscard]] int line() const noexcept { return line_; }
  /// The rank on which the failure happened, or -1 if it was raised locally
  /// outside any collective agreement.
  [[nodiscard]] int origin_rank() const noexcept { return origin_rank_; }

 private:
  static std::string compose(error_kind kind, const std::string& message, int origin_rank) {
    if (origin_rank >= 0) return detail::formatted("tessera: {} (rank {}): {}", to_string(kind), origin_rank, message);
    return detail::formatted("tessera: {}: {}", to_string(kind), message);
  }

  error_kind kind_;
  std::string message_;
  const char* file_;
  int line_;
  int origin_rank_;
};

}  // namespace tessera

namespace tessera::detail {

/// Throws tessera::error with the message `format` makes of `args`. Out of line and cold, so each
/// of the hundred-odd checks a unit instantiates compiles to packing its arguments and one call,
/// not to the formatting, the exception's construction and their clean-up code.
[[noreturn, gnu::cold, gnu::noinline]] inline void raise_formatted(error_kind kind, const char* file, int line,
                                                                   fmt::string_view format, fmt::format_args args) {
  throw error(kind, fmt::vformat(format, args), file, line);
}

#ifdef TESSERA_CHECK_MESSAGE_FORMATS
template <class... Args>
[[noreturn]] void raise(error_kind kind, const char* file, int line, fmt::format_string<Args...> format,
                        Args&&... args) {
  raise_formatted(kind, file, line, format, fmt::make_format_args(args...));
}
#else
/// The format string is read at run time here (see formatted() in format.hpp).
template <class... Args>
[[noreturn]] void raise(error_kind kind, const char* file, int line, fmt::string_view format, const Args&... args) {
  raise_formatted(kind, file, line, format, fmt::make_format_args(args...));
}
#endif

}  // namespace tessera::detail

/// Throw tessera::error of the given kind with an fmt-formatted message.
#define TESSERA_THROW(kind, ...) ::tessera::detail::raise(::tessera::error_kind::kind, __FILE__, __LINE__, __VA_ARGS__)

/// Throw tessera::error of the given kind unless the condition holds.
#define TESSERA_REQUIRE(condition, kind, ...)  \
  do {                                         \
    if (!(condition)) TESSERA_THROW(kind, __VA_ARGS__); \
  } while (false)

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_ERROR_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_ERROR_HPP
#endif
