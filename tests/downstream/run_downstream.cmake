# Install tessera from its build tree, then build and run the downstream project
# twice: through find_package(tessera) and through add_subdirectory.
foreach(var TESSERA_SOURCE_DIR TESSERA_BINARY_DIR WORK_DIR MPIEXEC GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_downstream.cmake: ${var} is not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " shown "${ARGN}")
    message(FATAL_ERROR "command failed (${rc}): ${shown}")
  endif()
endfunction()

string(REPLACE "|" ";" MPIEXEC "${MPIEXEC}")  # the launcher and its flags, joined by the caller
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${TESSERA_BINARY_DIR} --prefix ${prefix})
if(NOT EXISTS ${prefix}/include/tessera/tessera.hpp)
  message(FATAL_ERROR "the install did not place tessera/tessera.hpp under ${prefix}/include")
endif()

foreach(via package subdirectory)
  set(build ${WORK_DIR}/build-${via})
  run(${CMAKE_COMMAND} -S ${TESSERA_SOURCE_DIR}/tests/downstream -B ${build} -G "${GENERATOR}"
      -DCMAKE_BUILD_TYPE=Release -DTESSERA_VIA=${via} -DTESSERA_SOURCE_DIR=${TESSERA_SOURCE_DIR}
      -DCMAKE_PREFIX_PATH=${prefix})
  run(${CMAKE_COMMAND} --build ${build})
  run(${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${build}/downstream_app)
  message(STATUS "downstream build through ${via}: OK")
endforeach()
