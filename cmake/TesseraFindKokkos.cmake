# Provides the imported target tessera::kokkos: Kokkos core, containers and Kokkos-Kernels.
#
# Order of search:
#   1. The user's own Kokkos (find_package(Kokkos) / find_package(KokkosKernels)),
#      e.g. a Kokkos 4.x built for CUDA or OpenMP found through CMAKE_PREFIX_PATH
#      or Kokkos_DIR. It is used only if its targets are usable: Debian's
#      Kokkos config loads but points at a non-existent /usr/lib/include.
#   2. A plain header + library layout, such as Debian's libtrilinos-kokkos-dev
#      (headers in /usr/include/trilinos, libtrilinos_kokkos*.so).
#
# Set TESSERA_KOKKOS_SEARCH to CONFIG or LAYOUT to force one of the two.

if(TARGET tessera::kokkos)
  return()
endif()

set(TESSERA_KOKKOS_SEARCH "AUTO" CACHE STRING "How tessera finds Kokkos: AUTO, CONFIG (find_package) or LAYOUT (headers + libraries)")
set_property(CACHE TESSERA_KOKKOS_SEARCH PROPERTY STRINGS AUTO CONFIG LAYOUT)

# True if every include directory reachable from `target` exists.
function(_tessera_target_includes_exist target out)
  set(ok TRUE)
  set(pending ${target})
  set(seen "")
  while(pending)
    list(POP_FRONT pending t)
    if(NOT TARGET "${t}" OR t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${t}")
    get_target_property(dirs "${t}" INTERFACE_INCLUDE_DIRECTORIES)
    if(dirs)
      foreach(d IN LISTS dirs)
        if(NOT d MATCHES "^\\$<" AND NOT IS_DIRECTORY "${d}")
          set(ok FALSE)
        endif()
      endforeach()
    endif()
    get_target_property(libs "${t}" INTERFACE_LINK_LIBRARIES)
    if(libs)
      foreach(l IN LISTS libs)
        if(TARGET "${l}")
          list(APPEND pending "${l}")
        endif()
      endforeach()
    endif()
  endwhile()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

set(_tessera_kokkos_targets "")
if(NOT TESSERA_KOKKOS_SEARCH STREQUAL "LAYOUT")
  find_package(Kokkos CONFIG QUIET)
  find_package(KokkosKernels CONFIG QUIET)
  set(_kernels "")
  foreach(candidate Kokkos::kokkoskernels KokkosKernels::kokkoskernels)
    if(TARGET ${candidate} AND NOT _kernels)
      set(_kernels ${candidate})
    endif()
  endforeach()
  if(TARGET Kokkos::kokkos AND _kernels)
    _tessera_target_includes_exist(Kokkos::kokkos _core_ok)
    _tessera_target_includes_exist(${_kernels} _kernels_ok)
    if(_core_ok AND _kernels_ok)
      set(_tessera_kokkos_targets Kokkos::kokkos ${_kernels})
      message(STATUS "tessera: Kokkos ${Kokkos_VERSION} and Kokkos-Kernels from their CMake packages (${Kokkos_DIR})")
    else()
      message(STATUS "tessera: the Kokkos CMake package at ${Kokkos_DIR} names missing include directories; using the header + library layout instead")
    endif()
  endif()
  if(NOT _tessera_kokkos_targets AND TESSERA_KOKKOS_SEARCH STREQUAL "CONFIG")
    message(FATAL_ERROR "tessera: TESSERA_KOKKOS_SEARCH=CONFIG but no usable Kokkos and KokkosKernels CMake packages were found; set CMAKE_PREFIX_PATH to your Kokkos install")
  endif()
endif()

if(_tessera_kokkos_targets)
  add_library(tessera::kokkos INTERFACE IMPORTED GLOBAL)
  set_property(TARGET tessera::kokkos PROPERTY INTERFACE_LINK_LIBRARIES ${_tessera_kokkos_targets})
else()
  find_path(TESSERA_KOKKOS_INCLUDE_DIR Kokkos_Core.hpp PATH_SUFFIXES trilinos kokkos)
  find_path(TESSERA_KOKKOSKERNELS_INCLUDE_DIR KokkosSparse_CrsMatrix.hpp PATH_SUFFIXES trilinos kokkos-kernels)
  find_library(TESSERA_KOKKOSCORE_LIBRARY NAMES kokkoscore trilinos_kokkoscore)
  find_library(TESSERA_KOKKOSCONTAINERS_LIBRARY NAMES kokkoscontainers trilinos_kokkoscontainers)
  find_library(TESSERA_KOKKOSKERNELS_LIBRARY NAMES kokkoskernels trilinos_kokkoskernels)
  foreach(var TESSERA_KOKKOS_INCLUDE_DIR TESSERA_KOKKOSKERNELS_INCLUDE_DIR TESSERA_KOKKOSCORE_LIBRARY
              TESSERA_KOKKOSCONTAINERS_LIBRARY TESSERA_KOKKOSKERNELS_LIBRARY)
    if(NOT ${var})
      message(FATAL_ERROR "tessera: Kokkos not found (${var} unset). Install Debian's libtrilinos-kokkos-dev and "
                          "libtrilinos-kokkos-kernels-dev (tools/bootstrap.sh does), or point CMAKE_PREFIX_PATH at your own Kokkos build.")
    endif()
  endforeach()
  find_package(Threads REQUIRED)
  add_library(tessera::kokkos INTERFACE IMPORTED GLOBAL)
  set_property(TARGET tessera::kokkos PROPERTY INTERFACE_INCLUDE_DIRECTORIES
               ${TESSERA_KOKKOS_INCLUDE_DIR} ${TESSERA_KOKKOSKERNELS_INCLUDE_DIR})
  set_property(TARGET tessera::kokkos PROPERTY INTERFACE_LINK_LIBRARIES
               ${TESSERA_KOKKOSKERNELS_LIBRARY} ${TESSERA_KOKKOSCONTAINERS_LIBRARY} ${TESSERA_KOKKOSCORE_LIBRARY}
               Threads::Threads ${CMAKE_DL_LIBS})
  message(STATUS "tessera: Kokkos from headers in ${TESSERA_KOKKOS_INCLUDE_DIR} and ${TESSERA_KOKKOSCORE_LIBRARY}")
endif()
