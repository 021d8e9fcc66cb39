// doctest main for MPI tests: every rank runs every test case; the process
// exit code is non-zero on every rank if any rank failed, and only rank 0
// prints the full report (other ranks print their failures only).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "test_support.hpp"

#include <cstdio>

int main(int argc, char** argv) try {
  // TESSERA_PROGRESS_RANKS / TESSERA_RANKS_PER_NODE select the progress-rank layouts.
  tessera::environment env(argc, argv, tessera::environment_options::from_environment_variables());
  tessera::test::running_environment() = &env;
  int failures = 0;
  {
    doctest::Context context(argc, argv);
    if (env.world().rank() != 0) context.setOption("minimal", true);
    failures = context.run();
    if (context.shouldExit()) return failures;
  }
  const int any = env.world().max(failures != 0 ? 1 : 0);
  return any;
} catch (const tessera::error& e) {
  // An environment that cannot start (e.g. progress ranks on one-process nodes) has finalised what
  // it started and raised the same error on every rank: report it and fail, without an abort.
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
