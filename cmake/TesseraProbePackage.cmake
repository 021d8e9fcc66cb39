# tessera_probe_package(<Package> <prefix> [LANGUAGES <lang>...])
#
# Loads <Package>'s CMake config in a child CMake run, so that a broken or partial config (one that
# includes files another package ships, or stops with FATAL_ERROR) cannot stop tessera's configure:
# CMake has no way to catch an error raised by find_package itself. Only optional dependencies (the
# peer benchmarks) are probed this way. Sets in the caller:
#   <prefix>_STATE    "ok" (find_package(<Package> CONFIG) will load here), "missing" (no config
#                     file) or "broken" (the config exists but fails to load)
#   <prefix>_WHY      for "broken": one sentence saying what failed
#   <prefix>_MISSING  for "broken": the names of the package configs it includes that do not exist
#                     (e.g. "Epetra;TeuchosCore"), so the caller can name the package that ships them
#   <prefix>_DIR      where the config is, unless "missing"
# LANGUAGES: the languages the config needs enabled (e.g. for its find_dependency(MPI)); each must
# already be enabled here: the child reuses this project's compilers instead of identifying them
# again, which keeps a probe that finds nothing near a quarter of a second.

set(_tessera_probe_project "${CMAKE_CURRENT_LIST_DIR}/probe")

# What a loadable config's verdict depends on: where it is, the languages and search path it was
# probed with, its files, and the directory of package configs beside it (installing or removing
# a package such as Epetra, whose config it may include, changes that directory).
function(_tessera_probe_signature dir languages out)
  get_filename_component(parent "${dir}" DIRECTORY)
  set(signature "${dir}|${languages}|${CMAKE_PREFIX_PATH}")
  file(GLOB files "${dir}/*")
  foreach(path IN ITEMS "${parent}" "${dir}" LISTS files)
    file(TIMESTAMP "${path}" t "%s")
    string(APPEND signature "|${path}@${t}")
  endforeach()
  set(${out} "${signature}" PARENT_SCOPE)
endfunction()

function(tessera_probe_package package prefix)
  cmake_parse_arguments(ARG "" "" "LANGUAGES" ${ARGN})
  # A config that loaded before and has not changed since loads again: a re-run of CMake (each run
  # of tools/run-demo.sh) need not pay again for the MPI and OpenMP searches a config like DBCSR's
  # makes in the child. Other verdicts are cheap to reach and are never reused.
  string(REPLACE ";" "_" cache_var "_TESSERA_PROBE_LOADS_${package}_${ARG_LANGUAGES}")
  if(${cache_var})
    list(GET ${cache_var} 0 dir)
    _tessera_probe_signature("${dir}" "${ARG_LANGUAGES}" signature)
    # <Package>_DIR is the found directory after the first load, or another one the user set since.
    if("${${cache_var}}" STREQUAL "${dir};${signature}"
       AND (NOT ${package}_DIR OR "${${package}_DIR}" STREQUAL dir))
      set(${prefix}_STATE ok PARENT_SCOPE)
      set(${prefix}_WHY "" PARENT_SCOPE)
      set(${prefix}_MISSING "" PARENT_SCOPE)
      set(${prefix}_DIR "${dir}" PARENT_SCOPE)
      return()
    endif()
  endif()

  set(work "${CMAKE_BINARY_DIR}/CMakeFiles/tessera-probe/${package}")
  file(REMOVE_RECURSE "${work}")  # a stale child cache would remember an earlier machine state

  # The settings go through an initial-cache script: a list such as CMAKE_PREFIX_PATH would be split
  # into separate arguments on a command line.
  set(init "")
  set(TESSERA_PROBE_PACKAGE "${package}")
  set(TESSERA_PROBE_LANGUAGES "${ARG_LANGUAGES}")
  # Everything that steers where find_package looks, as the parent has it. CMAKE_LIBRARY_ARCHITECTURE
  # matters most: without it a project that enables no language never searches lib/<arch>/cmake.
  foreach(var TESSERA_PROBE_PACKAGE TESSERA_PROBE_LANGUAGES CMAKE_MAKE_PROGRAM CMAKE_PREFIX_PATH
              CMAKE_FIND_ROOT_PATH CMAKE_MODULE_PATH CMAKE_LIBRARY_ARCHITECTURE CMAKE_SIZEOF_VOID_P
              CMAKE_FIND_USE_PACKAGE_REGISTRY CMAKE_FIND_PACKAGE_PREFER_CONFIG ${package}_DIR ${package}_ROOT)
    if(DEFINED ${var} AND NOT "${${var}}" MATCHES "-NOTFOUND$")
      string(APPEND init "set(${var} [==[${${var}}]==] CACHE STRING \"\")\n")
    endif()
  endforeach()
  # The compilers as this project identified them: the child loads these files as a re-run of CMake
  # would (which the cache entry below makes it), instead of identifying and testing each compiler
  # again (seconds per language).
  string(APPEND init "set(CMAKE_PLATFORM_INFO_INITIALIZED 1 CACHE INTERNAL \"\")\n")
  file(WRITE "${work}/init.cmake" "${init}")
  foreach(file IN ITEMS CMakeSystem.cmake LISTS ARG_LANGUAGES)
    if(NOT file MATCHES "[.]cmake$")
      set(file "CMake${file}Compiler.cmake")
    endif()
    set(path "${CMAKE_BINARY_DIR}/CMakeFiles/${CMAKE_VERSION}/${file}")
    if(EXISTS "${path}")
      file(COPY "${path}" DESTINATION "${work}/CMakeFiles/${CMAKE_VERSION}")
    endif()
  endforeach()
  set(args -G "${CMAKE_GENERATOR}" -C "${work}/init.cmake")
  execute_process(COMMAND "${CMAKE_COMMAND}" ${args} -S "${_tessera_probe_project}" -B "${work}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(WRITE "${work}/probe.log" "${out}\n${err}")

  set(found FALSE)
  set(dir "")
  set(message "")
  if(EXISTS "${work}/probe-result.cmake")
    include("${work}/probe-result.cmake")  # sets found, dir and message (the config's NOT_FOUND_MESSAGE)
  elseif(EXISTS "${work}/CMakeCache.txt")
    # The config stopped the child with FATAL_ERROR: its location is still in the child's cache.
    file(STRINGS "${work}/CMakeCache.txt" dir REGEX "^${package}_DIR:[A-Z]+=")
    string(REGEX REPLACE "^[^=]*=" "" dir "${dir}")
    if(dir MATCHES "-NOTFOUND$")
      set(dir "")
    endif()
  endif()
  set(missing "")
  set(why "")
  if(rc EQUAL 0 AND found)
    set(state ok)
    _tessera_probe_signature("${dir}" "${ARG_LANGUAGES}" signature)
    set(${cache_var} "${dir};${signature}" CACHE INTERNAL "tessera_probe_package: ${package} loads")
  elseif(rc EQUAL 0 AND NOT dir)
    set(state missing)
  else()
    set(state broken)
    # The config's own file name, from the package directory the child found (or the first error).
    if(dir)
      set(config "${package}Config.cmake")
      file(GLOB _configs RELATIVE "${dir}" "${dir}/*onfig.cmake")
      list(FILTER _configs EXCLUDE REGEX "Version")
      if(_configs)
        list(GET _configs 0 config)
      endif()
    else()
      set(config "the ${package} CMake package")
    endif()
    string(REGEX MATCHALL "CMake Error at [^\n]+\n  include could not find requested file:[ \t\n]+[^\n]+"
           errors "${err}")
    # What the package's own config includes first: those name the packages to install, the rest
    # are what those configs would have included in turn.
    set(direct "")
    set(indirect "")
    foreach(error IN LISTS errors)
      string(REGEX REPLACE "^CMake Error at ([^\n]+):[0-9]+ \\(include\\).*" "\\1" from "${error}")
      get_filename_component(from "${from}" DIRECTORY)
      if(dir AND from STREQUAL dir)
        list(APPEND direct "${error}")
      else()
        list(APPEND indirect "${error}")
      endif()
    endforeach()
    set(files "")
    foreach(line IN LISTS direct indirect)
      string(REGEX REPLACE ".*include could not find requested file:[ \t\n]+" "" path "${line}")
      get_filename_component(name "${path}" NAME)
      if(NOT name IN_LIST files)
        list(APPEND files "${name}")
        string(REGEX REPLACE "(-config|Config)\\.cmake$" "" short "${name}")
        list(APPEND missing "${short}")
      endif()
    endforeach()
    list(LENGTH files count)
    if(count EQUAL 1)
      set(why "${config} needs ${files}, which is not installed")
    elseif(count EQUAL 2)
      list(JOIN files " and " named)
      set(why "${config} needs ${named}, which are not installed")
    elseif(count GREATER 2)
      list(GET files 0 1 named)
      list(JOIN named ", " named)
      math(EXPR others "${count} - 2")
      set(why "${config} needs ${named} and ${others} more, which are not installed")
    elseif(rc EQUAL 0)
      if(NOT message)
        set(message "no reason given")
      endif()
      set(why "${config} loads but reports the package unusable: ${message}")
    else()
      # The first error's first line and where it was raised; the whole output stays in the log.
      string(REGEX MATCH "CMake Error at ([^\n]+):([0-9]+) [(][^)\n]*[)]:\n +([^\n]*)" first_error "${err}")
      if(first_error)
        get_filename_component(at "${CMAKE_MATCH_1}" NAME)
        set(why "${config} fails to load: ${CMAKE_MATCH_3} (at ${at}:${CMAKE_MATCH_2}, see ${work}/probe.log)")
      else()
        set(why "${config} fails to load (exit code ${rc}, see ${work}/probe.log)")
      endif()
    endif()
  endif()
  string(REPLACE ";" "," why "${why}")  # one sentence, not a CMake list
  set(${prefix}_STATE "${state}" PARENT_SCOPE)
  set(${prefix}_WHY "${why}" PARENT_SCOPE)
  set(${prefix}_MISSING "${missing}" PARENT_SCOPE)
  set(${prefix}_DIR "${dir}" PARENT_SCOPE)
endfunction()
