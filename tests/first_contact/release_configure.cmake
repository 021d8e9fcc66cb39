# cmake -DSOURCE_DIR=<tessera> -DWORK_DIR=<scratch> -P release_configure.cmake
# Configures the release preset (the main job's) with the peer probes on into an empty WORK_DIR, as
# on first contact. Fails if the configure fails or if a peer's probe did not report itself.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" --preset release -B "${WORK_DIR}" -DTESSERA_PEER_BENCHMARKS=ON
                WORKING_DIRECTORY "${SOURCE_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "first contact: cmake --preset release -DTESSERA_PEER_BENCHMARKS=ON failed (exit code ${rc})")
endif()
string(REPLACE ";" "," out "${out}")  # lines, not list items
# Every peer says what became of it: built (listed in 'peer benchmarks for ...' or 'found') or
# skipped, with why.
foreach(peer PETSc Tpetra CombBLAS GraphBLAS DBCSR)
  if(NOT out MATCHES "-- tessera: [^\n]*${peer}")
    message(FATAL_ERROR "first contact: the configure said nothing about ${peer}")
  endif()
  string(REGEX MATCHALL "-- tessera: ${peer} peer benchmarks? skipped: [^\n]*" skips "${out}")
  list(LENGTH skips count)
  if(count GREATER 1)
    message(FATAL_ERROR "first contact: ${peer} was reported skipped ${count} times")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")  # a whole configured tree, not needed once checked
message(STATUS "first contact: the release preset configures with the peer probes on")
