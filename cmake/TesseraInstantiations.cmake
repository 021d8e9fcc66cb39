# The optional library tessera::instantiations (TESSERA_INSTANTIATIONS=ON): the common entry points
# (include/tessera/instantiations/declarations.hpp) compiled once per value type x distribution x
# backend x execution space in csr storage, one translation unit per combination (they build in
# parallel). A target linked to it gets TESSERA_USE_INSTANTIATIONS and the generated
# tessera/instantiations/configured.hpp, and each operation's header declares those entries extern.
set(TESSERA_INSTANTIATE_VALUE_TYPES "double;float" CACHE STRING "value types tessera::instantiations compiles")
set(TESSERA_INSTANTIATE_DISTRIBUTIONS "row_block;block_cyclic_2d" CACHE STRING
    "distributions tessera::instantiations compiles (row_block, row_partition, block_cyclic_2d, replicated_columns)")
set(TESSERA_INSTANTIATE_BACKENDS "mpi_rma;progress_rank;aggregator" CACHE STRING
    "backends tessera::instantiations compiles (mpi_rma, progress_rank, aggregator)")
set(TESSERA_INSTANTIATE_EXECUTION_SPACES "DefaultExecutionSpace" CACHE STRING
    "Kokkos execution spaces tessera::instantiations compiles (DefaultExecutionSpace, Serial, OpenMP, Cuda, ...)")

set(_tessera_distribution_headers row_block row_partition block_cyclic_2d replicated_columns)
set(_tessera_backend_headers mpi_rma progress_rank aggregator)
foreach(_list VALUE_TYPES DISTRIBUTIONS BACKENDS EXECUTION_SPACES)
  if(TESSERA_INSTANTIATE_${_list} STREQUAL "")
    message(FATAL_ERROR "TESSERA_INSTANTIATIONS=ON but TESSERA_INSTANTIATE_${_list} is empty: name at least one")
  endif()
endforeach()
list(JOIN _tessera_distribution_headers ", " _known_distributions)
list(JOIN _tessera_backend_headers ", " _known_backends)
foreach(_d IN LISTS TESSERA_INSTANTIATE_DISTRIBUTIONS)
  if(NOT _d IN_LIST _tessera_distribution_headers)
    message(FATAL_ERROR "TESSERA_INSTANTIATE_DISTRIBUTIONS: '${_d}' is not one of tessera's distributions "
                        "(${_known_distributions}); a distribution of your own is compiled where you use it")
  endif()
endforeach()
foreach(_b IN LISTS TESSERA_INSTANTIATE_BACKENDS)
  if(NOT _b IN_LIST _tessera_backend_headers)
    message(FATAL_ERROR "TESSERA_INSTANTIATE_BACKENDS: '${_b}' is not one of tessera's backends (${_known_backends}); "
                        "a backend of your own is compiled where you use it")
  endif()
endforeach()
foreach(_t IN LISTS TESSERA_INSTANTIATE_VALUE_TYPES)
  if(NOT _t MATCHES "^(double|float|int|long|std::int32_t|std::int64_t)$")
    message(FATAL_ERROR "TESSERA_INSTANTIATE_VALUE_TYPES: '${_t}' is not double, float, int, long, std::int32_t or std::int64_t")
  endif()
endforeach()

set(_generated ${CMAKE_CURRENT_BINARY_DIR}/instantiations)
set(_list "")
set(_sources "")
foreach(_t IN LISTS TESSERA_INSTANTIATE_VALUE_TYPES)
  foreach(_d IN LISTS TESSERA_INSTANTIATE_DISTRIBUTIONS)
    foreach(_b IN LISTS TESSERA_INSTANTIATE_BACKENDS)
      foreach(_s IN LISTS TESSERA_INSTANTIATE_EXECUTION_SPACES)
        set(TESSERA_VALUE_TYPE "${_t}")
        set(TESSERA_POLICY "::tessera::policy<::tessera::${_d}, ::tessera::csr, ::tessera::${_b}, ::Kokkos::${_s}>")
        string(APPEND _list "  TESSERA_INSTANTIATED_IF(${_d}, ${_b})(OP(EXTERN, ${TESSERA_VALUE_TYPE}, ${TESSERA_POLICY})) \\\n")
        string(REPLACE "::" "_" _file "${_t}_${_d}_${_b}_${_s}")
        configure_file(${CMAKE_CURRENT_LIST_DIR}/instantiations/combination.cpp.in ${_generated}/src/${_file}.cpp @ONLY)
        list(APPEND _sources ${_generated}/src/${_file}.cpp)
      endforeach()
    endforeach()
  endforeach()
endforeach()
set(TESSERA_CONFIGURED_LIST "${_list}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/instantiations/configured.hpp.in
               ${_generated}/include/tessera/instantiations/configured.hpp @ONLY)

add_library(tessera_instantiations ${_sources})
add_library(tessera::instantiations ALIAS tessera_instantiations)
set_target_properties(tessera_instantiations PROPERTIES EXPORT_NAME instantiations POSITION_INDEPENDENT_CODE ON)
target_link_libraries(tessera_instantiations PUBLIC tessera)
target_include_directories(tessera_instantiations PUBLIC
                           $<BUILD_INTERFACE:${_generated}/include>
                           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/tessera-instantiations>)
# Its users declare the entries extern; the library itself defines them.
target_compile_definitions(tessera_instantiations INTERFACE TESSERA_USE_INSTANTIATIONS)
if(TESSERA_WARNINGS)
  # Compiled as its users' units are (messages formatted at run time, core/format.hpp), so the
  # inline functions both compile are the same functions.
  set(_instantiation_options ${TESSERA_WARNINGS})
  list(REMOVE_ITEM _instantiation_options -DTESSERA_CHECK_MESSAGE_FORMATS)
  target_compile_options(tessera_instantiations PRIVATE ${_instantiation_options})
endif()
install(TARGETS tessera_instantiations EXPORT tesseraTargets)
install(FILES ${_generated}/include/tessera/instantiations/configured.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera-instantiations/tessera/instantiations)
