# Finds everything tessera's headers need, for the build tree and for installed
# packages alike: MPI (its C API), fmt, Kokkos and Kokkos-Kernels.
include(CMakeFindDependencyMacro)
# The C API through the C++ compiler: tessera never uses MPI's deprecated C++ bindings.
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Skip MPI's C++ bindings")
find_dependency(MPI COMPONENTS CXX)
find_dependency(fmt)
include("${CMAKE_CURRENT_LIST_DIR}/TesseraFindKokkos.cmake")
