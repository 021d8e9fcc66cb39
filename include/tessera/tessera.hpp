#pragma once
/// @file
/// Umbrella header: everything tessera offers.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_TESSERA_HPP
#endif

#include "core/combine.hpp"
#include "concepts/backend.hpp"
#include "concepts/distribution.hpp"
#include "concepts/storage.hpp"
#include "environment.hpp"
#include "core/error.hpp"
#include "core/freed_memory.hpp"
#include "core/index_types.hpp"
#include "policy.hpp"

#include "comm/buckets.hpp"
#include "comm/communicator.hpp"
#include "comm/counters.hpp"
#include "comm/aggregator.hpp"
#include "comm/conveyor.hpp"
#include "comm/mailbox.hpp"
#include "comm/mpi_rma.hpp"
#include "comm/one_sided_api.hpp"
#include "comm/node_shared_array.hpp"
#include "comm/personalised_exchange.hpp"
#include "comm/progress_rank.hpp"
#include "comm/request.hpp"
#include "comm/scalar_code.hpp"
#include "comm/segment.hpp"

#include "distribution/block_cyclic_2d.hpp"
#include "distribution/replicated_columns.hpp"
#include "distribution/row_block.hpp"
#include "distribution/row_partition.hpp"
#include "distribution/tiled_range.hpp"

#include "storage/block_sparse.hpp"
#include "storage/tiles.hpp"
#include "storage/coo.hpp"
#include "storage/csc.hpp"
#include "storage/csr.hpp"

#include "matrix/make_block_sparse.hpp"
#include "matrix/convert_tiles.hpp"
#include "matrix/build.hpp"
#include "matrix/convert.hpp"
#include "matrix/dist_matrix.hpp"
#include "matrix/gather.hpp"
#include "matrix/host_csr.hpp"
#include "matrix/kokkos_interop.hpp"
#include "matrix/local_triplets.hpp"
#include "matrix/redistribute.hpp"
#include "matrix/share_on_node.hpp"
#include "matrix/to_view.hpp"
#include "matrix/triplets.hpp"
#include "matrix/dist_dense.hpp"
#include "matrix/matrix_market.hpp"

#include "ops/bsgemm.hpp"
#include "ops/elementwise.hpp"
#include "ops/reorder.hpp"
#include "ops/semiring.hpp"
#include "ops/spgemm.hpp"
#include "ops/grid/grid_aligned_rows.hpp"
#include "ops/spmm.hpp"
#include "ops/summa.hpp"
#include "ops/transpose.hpp"
#include "ops/transpose_plan.hpp"

#include "generators/laplacian.hpp"
#include "generators/molecular_chain.hpp"
#include "generators/rmat.hpp"
#include "generators/uniform_random.hpp"

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_TESSERA_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_TESSERA_HPP
#endif
