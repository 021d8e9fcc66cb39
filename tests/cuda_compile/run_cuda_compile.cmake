# Configure tessera in WORK_DIR with nvcc_wrapper against the CUDA Kokkos at KOKKOS_ROOT and build
# TARGETS ("all", or a |-joined list). Fails if a target does not compile or if the build prints a
# warning located in tessera's headers; the full log stays in WORK_DIR/build.log.
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_command.cmake)
require_variables(run_cuda_compile.cmake TESSERA_SOURCE_DIR KOKKOS_ROOT WORK_DIR GENERATOR TARGETS JOBS)

set(wrapper ${KOKKOS_ROOT}/bin/nvcc_wrapper)
if(NOT EXISTS ${wrapper})
  message(FATAL_ERROR "run_cuda_compile.cmake: ${wrapper} does not exist: TESSERA_CUDA_KOKKOS_ROOT must be the install prefix of a Kokkos built with CUDA")
endif()
file(GLOB kokkos_common ${KOKKOS_ROOT}/lib*/cmake/Kokkos/KokkosConfigCommon.cmake)
if(NOT kokkos_common)
  message(FATAL_ERROR "run_cuda_compile.cmake: no lib*/cmake/Kokkos/KokkosConfigCommon.cmake under ${KOKKOS_ROOT}")
endif()
list(GET kokkos_common 0 kokkos_common)
file(STRINGS ${kokkos_common} devices REGEX "^set\\(Kokkos_DEVICES ")
if(NOT devices MATCHES "CUDA")
  message(FATAL_ERROR "run_cuda_compile.cmake: the Kokkos at ${KOKKOS_ROOT} is not built with CUDA (${devices})")
endif()

set(build ${WORK_DIR}/build)
run(${CMAKE_COMMAND} -S ${TESSERA_SOURCE_DIR} -B ${build} -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${wrapper} -DCMAKE_PREFIX_PATH=${KOKKOS_ROOT} -DTESSERA_KOKKOS_SEARCH=CONFIG
    -DTESSERA_PEER_BENCHMARKS=OFF)

string(REPLACE "|" ";" TARGETS "${TARGETS}")
set(target_args)
if(NOT TARGETS STREQUAL "all")
  set(target_args --target ${TARGETS})
endif()
# Keep going past a failing target, so one run names every target that does not compile.
set(keep_going)
if(GENERATOR MATCHES "Ninja")
  set(keep_going -- -k 0)
elseif(GENERATOR MATCHES "Makefiles")
  set(keep_going -- -k)
endif()
set(log ${WORK_DIR}/build.log)
message(STATUS "building ${TARGETS} with ${wrapper} (${JOBS} jobs); log: ${log}")
execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} ${target_args} --parallel ${JOBS} ${keep_going}
                OUTPUT_FILE ${log} ERROR_FILE ${log} RESULT_VARIABLE rc)

file(STRINGS ${log} failed REGEX "^FAILED: |\\*\\*\\* \\[")
file(STRINGS ${log} tessera_warnings REGEX "${TESSERA_SOURCE_DIR}/include/tessera/[^ ]*[(:][0-9]+.*warning")
list(LENGTH tessera_warnings warning_count)
if(NOT rc EQUAL 0)
  file(STRINGS ${log} error_lines REGEX "error")
  string(REPLACE ";" "\n" failed "${failed}")
  list(SUBLIST error_lines 0 40 error_lines)
  string(REPLACE ";" "\n" error_lines "${error_lines}")
  message(FATAL_ERROR "the CUDA build failed (${rc}); failed steps:\n${failed}\nfirst errors:\n${error_lines}\nfull log: ${log}")
endif()
if(warning_count GREATER 0)
  string(REPLACE ";" "\n" tessera_warnings "${tessera_warnings}")
  message(FATAL_ERROR "the CUDA build printed ${warning_count} warnings in tessera's headers:\n${tessera_warnings}\nfull log: ${log}")
endif()
message(STATUS "test_cuda_compile: ${TARGETS} compiled with ${wrapper}, no warning in tessera's headers")
