# Shared by the CMake scripts that drive sub-builds in tests (run_downstream, run_sanitized).

# Stop unless every named variable is set (the script's command line).
function(require_variables script)
  foreach(var ${ARGN})
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "${script}: ${var} is not set")
    endif()
  endforeach()
endfunction()

# Run a command; stop with the command line if it fails.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " shown "${ARGN}")
    message(FATAL_ERROR "command failed (${rc}): ${shown}")
  endif()
endfunction()
