// doctest main for MPI tests: every rank runs every test case; the process
// exit code is non-zero on every rank if any rank failed, and only rank 0
// prints the full report (other ranks print their failures only).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "test_environment.hpp"

#include <cstdio>

namespace {

/// Counts the test cases that ran (passed the filters): a run whose filter
/// (--source-file, as the suite's CTest tests give one) matches no test case must fail, not pass
/// with nothing checked.
struct case_counter : doctest::IReporter {
  static inline unsigned ran = 0;
  explicit case_counter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override { ran = stats.numTestCasesPassingFilters; }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("tessera_case_counter", 1, case_counter);

}  // namespace

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
  if (case_counter::ran == 0) {
    if (env.world().rank() == 0) std::fprintf(stderr, "no test case matched this run's filters: nothing was checked\n");
    failures = 1;
  }
  const int any = env.world().max(failures != 0 ? 1 : 0);
  return any;
} catch (const tessera::error& e) {
  // An environment that cannot start (e.g. progress ranks on one-process nodes) has finalised what
  // it started and raised the same error on every rank: report it and fail, without an abort.
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
