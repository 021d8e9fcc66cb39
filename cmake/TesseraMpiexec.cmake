# TESSERA_MPIEXEC: the launcher command prefix used by tests and tools (without -n).
# Open MPI refuses to run as root or to place more ranks than cores unless told to;
# tessera's tests run 1-4 ranks on small machines, so both flags are added for it.
set(TESSERA_MPIEXEC ${MPIEXEC_EXECUTABLE})
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _tessera_mpiexec_version ERROR_QUIET)
set(TESSERA_MPIEXEC_IS_OPEN_MPI OFF)
if(_tessera_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(TESSERA_MPIEXEC_IS_OPEN_MPI ON)
  # --bind-to none: Open MPI pins each rank to one core when ranks <= cores, which would stack a
  # rank's OpenMP threads (TESSERA_TEST_THREADS > 1) on that one core.
  list(APPEND TESSERA_MPIEXEC --oversubscribe --bind-to none)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _tessera_uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_tessera_uid STREQUAL "0")
    list(APPEND TESSERA_MPIEXEC --allow-run-as-root)
  endif()
endif()
