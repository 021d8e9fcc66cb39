// An environment that cannot start (here: progress ranks on nodes of one process, or a negative
// ranks_per_node, from TESSERA_RANKS_PER_NODE) must hand its error to main with MPI finalised, so
// a program that catches it ends cleanly instead of being reported by the launcher as a process
// that "exited without calling finalize". Built twice: with the progress_rank backend's header
// (the layouts above), and without it (TESSERA_TEST_WITHOUT_PROGRESS_BACKEND), where the
// environment has no progress runtime to start and must say which header brings it.
#ifndef TESSERA_TEST_WITHOUT_PROGRESS_BACKEND
#include <tessera/comm/progress_rank.hpp>
#endif
#include <tessera/environment.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  auto options = tessera::environment_options::from_environment_variables();
  options.progress_ranks = true;
  try {
    tessera::environment env(argc, argv, options);
    std::printf("FAIL: the environment started, but the test expects it to refuse this layout\n");
    return 1;
  } catch (const tessera::error& e) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    std::printf("caught: %s\nMPI finalised: %s\n", e.what(), finalized ? "yes" : "no");
    return finalized ? 0 : 2;
  }
}
