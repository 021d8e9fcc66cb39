#pragma once
// The operations tessera-custom-policies runs, for each of its policies, compiled once each in a
// unit of their own (spmm.cpp, spgemm.cpp, transpose.cpp: C++'s explicit instantiation) and
// declared `extern` to main.cpp, which calls them. A program that instantiates every operation for
// many policies in one unit compiles all their kernels there: with nvcc for a GPU that unit took
// 135-155 s, each of these a fraction of it, built side by side. The same works for any policy of
// your own (docs/custom-policies.md "Compiling it once").
#include "row_cyclic.hpp"
#include "sliced_ell.hpp"
#include "tracing_backend.hpp"

#include <tessera/tessera.hpp>

namespace custom_policies {
using block_csr = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
using cyclic_csr = tessera::policy<custom::row_cyclic, tessera::csr, tessera::mpi_rma>;
using cyclic_csc = tessera::policy<custom::row_cyclic, tessera::csc, tessera::mpi_rma>;
using cyclic_coo = tessera::policy<custom::row_cyclic, tessera::coo, tessera::aggregator>;
using cyclic_ell = tessera::policy<custom::row_cyclic, custom::sliced_ell, tessera::mpi_rma>;
using cyclic_ell_traced = tessera::policy<custom::row_cyclic, custom::sliced_ell, custom::tracing<>>;
}  // namespace custom_policies

// OPERATION(EXTERN, P) for every policy: EXTERN is `extern` (declared, compiled elsewhere) or empty.
#define CUSTOM_POLICIES_FOR_EACH(OPERATION, EXTERN)   \
  OPERATION(EXTERN, custom_policies::block_csr)       \
  OPERATION(EXTERN, custom_policies::cyclic_csr)      \
  OPERATION(EXTERN, custom_policies::cyclic_csc)      \
  OPERATION(EXTERN, custom_policies::cyclic_coo)      \
  OPERATION(EXTERN, custom_policies::cyclic_ell)      \
  OPERATION(EXTERN, custom_policies::cyclic_ell_traced)

#define CUSTOM_POLICIES_SPMM(EXTERN, P)                                                       \
  EXTERN template tessera::dist_dense<double, P> tessera::spmm(const tessera::dist_matrix<double, P>&, \
                                                               const tessera::dist_dense<double, P>&);
#define CUSTOM_POLICIES_SPGEMM(EXTERN, P)                                                        \
  EXTERN template tessera::dist_matrix<double, P> tessera::spgemm(const tessera::dist_matrix<double, P>&, \
                                                                  const tessera::dist_matrix<double, P>&);
#define CUSTOM_POLICIES_TRANSPOSE(EXTERN, P) \
  EXTERN template tessera::dist_matrix<double, P> tessera::transpose(const tessera::dist_matrix<double, P>&);

#ifndef CUSTOM_POLICIES_OPERATIONS_UNIT  // main.cpp: declared; the unit that defines one defines this macro
CUSTOM_POLICIES_FOR_EACH(CUSTOM_POLICIES_SPMM, extern)
CUSTOM_POLICIES_FOR_EACH(CUSTOM_POLICIES_SPGEMM, extern)
CUSTOM_POLICIES_FOR_EACH(CUSTOM_POLICIES_TRANSPOSE, extern)
#endif
