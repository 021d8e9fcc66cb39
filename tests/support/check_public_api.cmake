# Tests, examples and benchmarks use tessera's public API only, as a user's program does: no
# tessera::detail name and no header under a detail/ folder (those may change in any release).
#   cmake -DROOT=<source dir> -P check_public_api.cmake
if(NOT ROOT)
  message(FATAL_ERROR "check_public_api: ROOT is required")
endif()
file(GLOB_RECURSE sources ${ROOT}/tests/*.cpp ${ROOT}/tests/*.hpp ${ROOT}/examples/*.cpp ${ROOT}/examples/*.hpp
     ${ROOT}/bench/*.cpp ${ROOT}/bench/*.hpp)
# The compile-fail test of the detail/ guard includes one on purpose.
list(FILTER sources EXCLUDE REGEX "tests/unit/detail_header_refused\\.cpp$")
set(found "")
set(checked 0)
foreach(source IN LISTS sources)
  math(EXPR checked "${checked} + 1")
  file(STRINGS ${source} lines)
  set(number 0)
  # A file with `using namespace tessera;` reaches tessera::detail as plain `detail::`, unless it
  # has a detail namespace of its own.
  file(READ ${source} text)
  set(unqualified FALSE)
  if(text MATCHES "using namespace tessera;" AND NOT text MATCHES "namespace detail")
    set(unqualified TRUE)
  endif()
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(line MATCHES "tessera::detail" OR line MATCHES "#include [<\"]tessera/.*detail/"
       OR (unqualified AND line MATCHES "(^|[^:a-zA-Z_])detail::"))
      string(APPEND found "  ${source}:${number}: ${line}\n")
    endif()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "check_public_api: these lines use tessera's internals (detail):\n${found}")
endif()
message(STATUS "check_public_api: ${checked} files use the public API only")
