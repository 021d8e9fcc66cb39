#pragma once
/// @file
/// fmt, as every tessera header includes it.
///
/// fmt 9 (Debian 12's) does not compile under nvcc in C++20 as it comes, for two reasons:
/// - it checks format strings at compile time through a consteval constructor whenever the
///   compiler claims C++20 and GCC >= 10. nvcc's front end claims both but cannot evaluate those
///   constructors: every fmt::format call fails with "call to consteval function ... did not
///   produce a valid constant expression";
/// - it turns FMT_CONSTEXPR off under nvcc but leaves FMT_CONSTEXPR20 on, so the host compiler
///   then sees C++20 constexpr functions calling non-constexpr ones ("call to non-'constexpr'
///   function ... ignore_unused").
/// Under nvcc (and only there) tessera therefore asks fmt for its non-consteval format strings
/// (checked when they run instead) and for constexpr throughout, which CUDA 12 and later handle.
/// Host compilers keep fmt's defaults. This must come before fmt's first inclusion, which is why
/// tessera includes fmt only through this header; a program that includes fmt itself before
/// tessera under nvcc should pass -DFMT_CONSTEVAL= -DFMT_USE_CONSTEXPR=1.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_FORMAT_HPP
#endif

#if defined(__NVCC__)
#if !defined(FMT_CONSTEVAL)
#define FMT_CONSTEVAL
#endif
#if !defined(FMT_USE_CONSTEXPR)
#define FMT_USE_CONSTEXPR 1
#endif
#endif

#include <fmt/format.h>

#include <string>
#include <utility>

namespace tessera::detail {

#ifdef TESSERA_CHECK_MESSAGE_FORMATS
/// fmt::format, its format string checked against the arguments when compiled: tessera's own
/// tests, examples and benchmarks define TESSERA_CHECK_MESSAGE_FORMATS.
template <class... Args>
[[nodiscard]] std::string formatted(fmt::format_string<Args...> format, Args&&... args) {
  return fmt::format(format, std::forward<Args>(args)...);
}
#else
/// fmt::format with the format string read at run time. tessera formats its messages through this:
/// fmt's compile-time check of each format string was a fifth of the front end of a unit that
/// uses tessera (0.8 s of the README program's 3.6). tessera's own targets, which instantiate every
/// message, check them when compiled instead (TESSERA_CHECK_MESSAGE_FORMATS); argument types are
/// checked either way.
template <class... Args>
[[nodiscard]] std::string formatted(fmt::string_view format, const Args&... args) {
  return fmt::vformat(format, fmt::make_format_args(args...));
}
#endif

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_FORMAT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_FORMAT_HPP
#endif
