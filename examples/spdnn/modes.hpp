#pragma once
// The modes' steps (spdnn/inference.hpp) for tessera-spdnn's three policies, declared extern:
// the units that read and check (run_<backend>.cpp) call them without compiling them, and each
// mode_<mode>.cpp compiles one mode's steps for every backend. A program with one policy and one
// mode needs none of this; the split only keeps each of the example's units small under nvcc.
#include "run.hpp"
#include "spdnn/problem.hpp"

#include <tessera/comm/aggregator.hpp>
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/comm/progress_rank.hpp>
#include <tessera/distribution/row_block.hpp>
#include <tessera/storage/csr.hpp>

namespace spdnn::cli {

/// The policy tessera-spdnn runs under a backend.
template <class Backend>
using policy_for = tessera::policy<tessera::row_block, tessera::csr, Backend>;

}  // namespace spdnn::cli

// SPDNN_FUSED_MODE(extern, tessera::mpi_rma) declares fused mode's steps for that backend's policy
// extern; SPDNN_FUSED_MODE(, tessera::mpi_rma) instantiates them. Likewise the other two modes.
#define SPDNN_FUSED_MODE(EXTERN, BACKEND)                                                                         \
  EXTERN template void spdnn::prepare_fused<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>(             \
      const tessera::communicator&, spdnn::problem<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>&);    \
  EXTERN template spdnn::mode_result spdnn::infer_fused<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>( \
      const tessera::communicator&, const spdnn::problem<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>&, \
      const spdnn::inference_settings&, spdnn::inference_clock::time_point)
#define SPDNN_DENSE_MODE(EXTERN, BACKEND)                                                                         \
  EXTERN template void spdnn::prepare_dense<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>(             \
      spdnn::problem<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>&, const spdnn::inference_settings&); \
  EXTERN template spdnn::mode_result spdnn::infer_dense<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>( \
      const tessera::communicator&, const spdnn::problem<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>&, \
      const spdnn::inference_settings&, spdnn::inference_clock::time_point)
#define SPDNN_SPARSE_MODE(EXTERN, BACKEND)                                                                          \
  EXTERN template spdnn::mode_result spdnn::infer_sparse<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>( \
      const tessera::communicator&, const spdnn::problem<spdnn::cli::value_type, spdnn::cli::policy_for<BACKEND>>&,  \
      const spdnn::inference_settings&, spdnn::inference_clock::time_point)
#define SPDNN_ALL_MODES(EXTERN, BACKEND) \
  SPDNN_FUSED_MODE(EXTERN, BACKEND);     \
  SPDNN_DENSE_MODE(EXTERN, BACKEND);     \
  SPDNN_SPARSE_MODE(EXTERN, BACKEND)

SPDNN_ALL_MODES(extern, tessera::mpi_rma);
SPDNN_ALL_MODES(extern, tessera::aggregator);
SPDNN_ALL_MODES(extern, tessera::progress_rank);
