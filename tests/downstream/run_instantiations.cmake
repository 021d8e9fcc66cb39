# tessera::instantiations as a new user gets it: tessera configured with TESSERA_INSTANTIATIONS=ON
# (one combination, to keep the test short), installed, and the README's program built against
# the installed tessera::instantiations. The program's object file must call the library's
# read_matrix_market, convert, spgemm and transpose (undefined there, defined in the library),
# and print what the header-only build of the same program prints, at 1 and 2 ranks.
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_command.cmake)
require_variables(run_instantiations.cmake TESSERA_SOURCE_DIR WORK_DIR MPIEXEC GENERATOR KOKKOS_ARGS NM
                  HEADER_ONLY_PROGRAM)
string(REPLACE "|" ";" MPIEXEC "${MPIEXEC}")
string(REPLACE "|" ";" KOKKOS_ARGS "${KOKKOS_ARGS}")
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

# A list naming something tessera does not have is refused at configure time, with what it has.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${TESSERA_SOURCE_DIR} -B ${WORK_DIR}/refused -G "${GENERATOR}"
                        -DTESSERA_INSTANTIATIONS=ON -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_EXAMPLES=OFF
                        -DTESSERA_BUILD_BENCHMARKS=OFF -DTESSERA_INSTANTIATE_BACKENDS=mpi_rma\;carrier_pigeon
                        ${KOKKOS_ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " err_flat "${err}")  # CMake wraps the message's lines
if(rc EQUAL 0 OR NOT err_flat MATCHES "'carrier_pigeon' is not one of tessera's backends \\(mpi_rma, progress_rank, aggregator\\)")
  message(FATAL_ERROR "configuring with TESSERA_INSTANTIATE_BACKENDS=mpi_rma;carrier_pigeon should fail naming the "
                      "unknown backend and the known ones (rc ${rc}):\n${err}")
endif()
file(REMOVE_RECURSE ${WORK_DIR}/refused)

# The library at -O0: which entry points it holds does not depend on the level, and -O3 took 100 s
# of one core here, -O1 58 s, -O0 44 s (the program below is built as a user's Release build).
run(${CMAKE_COMMAND} -S ${TESSERA_SOURCE_DIR} -B ${WORK_DIR}/tessera -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG" -DTESSERA_INSTANTIATIONS=ON -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_EXAMPLES=OFF -DTESSERA_BUILD_BENCHMARKS=OFF
    -DTESSERA_INSTANTIATE_VALUE_TYPES=double -DTESSERA_INSTANTIATE_DISTRIBUTIONS=row_block
    -DTESSERA_INSTANTIATE_BACKENDS=mpi_rma ${KOKKOS_ARGS})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/tessera)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/tessera --prefix ${prefix})
foreach(installed include/tessera-instantiations/tessera/instantiations/configured.hpp
                  include/tessera/instantiations/declarations.hpp)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "the install with TESSERA_INSTANTIATIONS=ON did not place ${installed} under ${prefix}")
  endif()
endforeach()

set(build ${WORK_DIR}/downstream)
run(${CMAKE_COMMAND} -S ${TESSERA_SOURCE_DIR}/tests/downstream -B ${build} -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
    -DTESSERA_VIA=package -DDOWNSTREAM_SOURCE=${TESSERA_SOURCE_DIR}/tests/docs/readme_program.cpp
    -DDOWNSTREAM_LINKS=tessera::instantiations -DCMAKE_PREFIX_PATH=${prefix} ${KOKKOS_ARGS})
run(${CMAKE_COMMAND} --build ${build})

# The program's own object: the four entry points it calls are the library's, not compiled here.
file(GLOB_RECURSE objects ${build}/CMakeFiles/downstream_app.dir/*.o)
list(LENGTH objects count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one object file of downstream_app, found ${count}: ${objects}")
endif()
execute_process(COMMAND ${NM} -C ${objects} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -C ${objects} failed (${rc})")
endif()
string(REPLACE "\n" ";" symbols "${symbols}")
foreach(entry read_matrix_market convert spgemm transpose)
  set(called OFF)
  foreach(line IN LISTS symbols)
    if(line MATCHES "tessera::${entry}<")
      if(line MATCHES "^ +U ")
        set(called ON)
      else()
        message(FATAL_ERROR "the README program compiled tessera::${entry} itself although tessera::instantiations "
                            "holds it (the extern declarations did not reach it): ${line}")
      endif()
    endif()
  endforeach()
  if(NOT called)
    message(FATAL_ERROR "the README program's object does not call tessera::${entry} from tessera::instantiations")
  endif()
endforeach()

# The same program with the headers precompiled as docs/getting-started.md shows: it must build
# against the library and print the same.
set(pch_build ${WORK_DIR}/downstream-pch)
set(pch_headers "<tessera/comm/mpi_rma.hpp>|<tessera/distribution/row_block.hpp>|<tessera/environment.hpp>|")
string(APPEND pch_headers "<tessera/matrix/matrix_market.hpp>|<tessera/ops/spgemm_default.hpp>|<tessera/ops/transpose.hpp>|")
string(APPEND pch_headers "<tessera/storage/csr.hpp>")
run(${CMAKE_COMMAND} -S ${TESSERA_SOURCE_DIR}/tests/downstream -B ${pch_build} -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
    -DTESSERA_VIA=package -DDOWNSTREAM_SOURCE=${TESSERA_SOURCE_DIR}/tests/docs/readme_program.cpp
    -DDOWNSTREAM_LINKS=tessera::instantiations "-DDOWNSTREAM_PRECOMPILED_HEADERS=${pch_headers}"
    -DCMAKE_PREFIX_PATH=${prefix} ${KOKKOS_ARGS})
run(${CMAKE_COMMAND} --build ${pch_build})
file(GLOB_RECURSE pch_files ${pch_build}/CMakeFiles/downstream_app.dir/cmake_pch*)
if(NOT pch_files)
  message(FATAL_ERROR "the build with DOWNSTREAM_PRECOMPILED_HEADERS made no precompiled header")
endif()

# A 12 x 12 matrix with an empty row (row 7) and a dense column (column 0).
set(matrix "%%MatrixMarket matrix coordinate real general\n12 12 0\n")
set(entries "")
set(nnz 0)
foreach(i RANGE 1 12)
  if(NOT i EQUAL 8)
    math(EXPR j "(${i} * 5) % 12 + 1")
    math(EXPR nnz "${nnz} + 2")
    string(APPEND entries "${i} 1 ${i}.5\n${i} ${j} -${i}\n")
  endif()
endforeach()
string(REPLACE "12 12 0" "12 12 ${nnz}" matrix "${matrix}")
file(WRITE ${WORK_DIR}/A.mtx "${matrix}${entries}")

# Row 12's two entries share column 1 (summed): 21 nonzeros.
foreach(np 1 2)
  set(names with_library header_only precompiled)
  foreach(program ${build}/downstream_app ${HEADER_ONLY_PROGRAM} ${pch_build}/downstream_app)
    list(POP_FRONT names which)
    execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${np} ${program} WORKING_DIRECTORY ${WORK_DIR}
                    OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${program} failed at ${np} ranks (${rc}): ${output}${errors}")
    endif()
    if(NOT output MATCHES "^21 nonzeros; traffic: ")
      message(FATAL_ERROR "${program} at ${np} ranks printed '${output}', not the 21 nonzeros of A.mtx")
    endif()
    string(REPLACE ";" "," lines "${output}")  # one list item per line: a rank's report
    string(REPLACE "\n" ";" lines "${lines}")
    list(SORT lines)
    set(${which} "${lines}")
  endforeach()
  if(NOT with_library STREQUAL header_only)
    message(FATAL_ERROR "at ${np} ranks the program linked to tessera::instantiations printed\n${with_library}\n"
                        "but its header-only build printed\n${header_only}")
  endif()
  if(NOT with_library STREQUAL precompiled)
    message(FATAL_ERROR "at ${np} ranks the program linked to tessera::instantiations printed\n${with_library}\n"
                        "but its build with precompiled headers printed\n${precompiled}")
  endif()
  string(REPLACE ";" " | " shown "${with_library}")
  message(STATUS "${np} ranks: ${shown}")
endforeach()
message(STATUS "tessera::instantiations: installed, used by the README program (its entry points not compiled "
               "there), same output as header-only and with precompiled headers at 1 and 2 ranks")
