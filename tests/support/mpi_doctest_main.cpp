// doctest main for MPI tests: every rank runs every test case; the process
// exit code is non-zero on every rank if any rank failed, and only rank 0
// prints the full report (other ranks print their failures only).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <tessera/core/environment.hpp>

int main(int argc, char** argv) {
  // TESSERA_PROGRESS_RANKS / TESSERA_RANKS_PER_NODE select the progress-rank layouts.
  tessera::environment env(argc, argv, tessera::environment_options::from_environment_variables());
  int failures = 0;
  {
    doctest::Context context(argc, argv);
    if (env.world().rank() != 0) context.setOption("minimal", true);
    failures = context.run();
    if (context.shouldExit()) return failures;
  }
  const int any = env.world().max(failures != 0 ? 1 : 0);
  return any;
}
