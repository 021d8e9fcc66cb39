# Loads only where C++ is enabled, like a config that calls find_dependency(MPI).
if(NOT CMAKE_CXX_COMPILER_LOADED)
  message(FATAL_ERROR "TesseraFakeNeedsCxx needs C++ enabled")
endif()
