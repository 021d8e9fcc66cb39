# Configure tessera with AddressSanitizer + UndefinedBehaviorSanitizer in WORK_DIR, build only the
# reader tests, and run them at 1 and 2 ranks: any sanitizer report fails the run.
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_command.cmake)
require_variables(run_sanitized.cmake TESSERA_SOURCE_DIR WORK_DIR MPIEXEC MPIEXEC_NUMPROC_FLAG GENERATOR)

string(REPLACE "|" ";" MPIEXEC "${MPIEXEC}")  # the launcher and its flags, joined by the caller
# -O0: the sanitizers see every access as written, and the unit compiled in 66 s against -O1's 124 s
# (one core each, the same run) while the tests ran 1.3-1.5 s against 1.1-1.2 s. -g1: reports keep file:line.
set(flags "-O0 -g1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined")
set(build ${WORK_DIR}/build)
set(compiler)
if(DEFINED CXX_COMPILER)
  set(compiler -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
run(${CMAKE_COMMAND} -S ${TESSERA_SOURCE_DIR} -B ${build} -G "${GENERATOR}" ${compiler}
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
    -DTESSERA_BUILD_TESTS=ON -DTESSERA_BUILD_EXAMPLES=OFF -DTESSERA_BUILD_BENCHMARKS=OFF -DTESSERA_PEER_BENCHMARKS=OFF
    -DTESSERA_READERS_SANITIZED=ON)
# One program, one unit: the readers' tests and test_matrix_market (readers/CMakeLists.txt).
run(${CMAKE_COMMAND} --build ${build} --target test_readers)

# Leaks are not checked: MPI and Kokkos keep memory until exit by design.
set(ENV{ASAN_OPTIONS} "detect_leaks=0:abort_on_error=1")
set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1")
set(ENV{OMP_NUM_THREADS} 1)
set(ENV{OPENBLAS_NUM_THREADS} 1)
file(GLOB_RECURSE exe LIST_DIRECTORIES false ${build}/tests/test_readers)
if(NOT exe)
  message(FATAL_ERROR "run_sanitized.cmake: test_readers was not built under ${build}/tests")
endif()
foreach(np 1 2)
  run(${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${np} ${exe})
  message(STATUS "the readers' tests and test_matrix_market at ${np} rank(s) under ASan + UBSan: OK")
endforeach()
