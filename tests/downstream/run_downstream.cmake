# Install tessera from its build tree (VIA=package), or take its sources (VIA=subdirectory), then
# build and run the downstream project: the full program through find_package(tessera), a small
# one through add_subdirectory (the same targets; compiling the full program twice only cost time).
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_command.cmake)
require_variables(run_downstream.cmake VIA TESSERA_SOURCE_DIR TESSERA_BINARY_DIR WORK_DIR MPIEXEC GENERATOR KOKKOS_ARGS KOKKOS_VERSION_PROGRAM)

string(REPLACE "|" ";" MPIEXEC "${MPIEXEC}")  # the launcher and its flags, joined by the caller
string(REPLACE "|" ";" KOKKOS_ARGS "${KOKKOS_ARGS}")  # how tessera's own build found Kokkos

# The Kokkos tessera's build compiled against: the downstream program must report the same.
execute_process(COMMAND ${KOKKOS_VERSION_PROGRAM} OUTPUT_VARIABLE expected_kokkos RESULT_VARIABLE rc)
string(STRIP "${expected_kokkos}" expected_kokkos)
if(NOT rc EQUAL 0 OR NOT expected_kokkos MATCHES "^KOKKOS_VERSION=[0-9]+$")
  message(FATAL_ERROR "cannot tell which Kokkos tessera was built against (${KOKKOS_VERSION_PROGRAM}: '${expected_kokkos}')")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(program main.cpp)
if(VIA STREQUAL "package")
  run(${CMAKE_COMMAND} --install ${TESSERA_BINARY_DIR} --prefix ${prefix})
  if(NOT EXISTS ${prefix}/include/tessera/tessera.hpp)
    message(FATAL_ERROR "the install did not place tessera/tessera.hpp under ${prefix}/include")
  endif()
else()
  set(program through_subdirectory.cpp)
endif()

foreach(via ${VIA})
  set(build ${WORK_DIR}/build-${via})
  # Release at -O0: what is checked (the targets, the Kokkos, the results) does not depend on the
  # level, and at -O3 test_downstream_package took 44 s against 31-35 s.
  run(${CMAKE_COMMAND} -S ${TESSERA_SOURCE_DIR}/tests/downstream -B ${build} -G "${GENERATOR}"
      -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG" -DTESSERA_VIA=${via} -DTESSERA_SOURCE_DIR=${TESSERA_SOURCE_DIR}
      -DDOWNSTREAM_SOURCE=${program} -DCMAKE_PREFIX_PATH=${prefix} ${KOKKOS_ARGS})
  run(${CMAKE_COMMAND} --build ${build})
  # Its own distribution and storage against row_block x csr, at 1-4 ranks.
  foreach(np 1 2 3 4)
    execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${np} ${build}/downstream_app
                    OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE rc)
    message("${output}${errors}")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "downstream_app (through ${via}, ${np} ranks) failed (${rc})")
    endif()
    if(NOT output MATCHES "${expected_kokkos}[^0-9]")
      message(FATAL_ERROR "downstream build through ${via} used another Kokkos than tessera's build (${expected_kokkos}); "
                          "it printed: ${output}")
    endif()
  endforeach()
  message(STATUS "downstream build through ${via}: OK at 1-4 ranks (${expected_kokkos})")
endforeach()
