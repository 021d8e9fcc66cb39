#pragma once
/// @file
/// Which paths of an operation a call can take, known when it is compiled. An operation called
/// without options (spgemm(A, B), spmm(A, X), transpose(A)) can take only the default one, so its
/// unit compiles neither the kernels that options choose (Kokkos-Kernels' SpGEMM and multivector
/// spmv on host spaces, expand-sort-compress) nor the masked, budgeted or transposed forms: what a
/// program does not ask for, its compiler does not see. The options' forms compile every path.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/compiled_paths.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

namespace tessera::detail {

enum class compiled_paths {
  plain,  ///< the default options only: the execution space's default kernel, no mask, budget or transpose
  any,    ///< whatever the options select at run time
};

}  // namespace tessera::detail
