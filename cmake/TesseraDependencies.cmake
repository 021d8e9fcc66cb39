# Finds everything tessera's headers need, for the build tree and for installed
# packages alike: MPI (C bindings), fmt, Kokkos and Kokkos-Kernels.
include(CMakeFindDependencyMacro)
find_dependency(MPI COMPONENTS C)
find_dependency(fmt)
include("${CMAKE_CURRENT_LIST_DIR}/TesseraFindKokkos.cmake")
