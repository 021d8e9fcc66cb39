#pragma once
// The environment of a running test program, apart from test_support.hpp so that the tests' main
// compiles without the rest of tessera.
#include <tessera/environment.hpp>

namespace tessera::test {

/// The environment the test main started (mpi_doctest_main.cpp sets it before any test runs).
inline const environment*& running_environment() {
  static const environment* env = nullptr;
  return env;
}

}  // namespace tessera::test
