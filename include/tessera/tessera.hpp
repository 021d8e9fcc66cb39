#pragma once
/// @file
/// Umbrella header: everything tessera offers.

#include "core/combine.hpp"
#include "core/concepts/backend.hpp"
#include "core/concepts/distribution.hpp"
#include "core/concepts/storage.hpp"
#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/index_types.hpp"
#include "core/policy.hpp"

#include "comm/buckets.hpp"
#include "comm/communicator.hpp"
#include "comm/counters.hpp"
#include "comm/aggregator.hpp"
#include "comm/conveyor.hpp"
#include "comm/mailbox.hpp"
#include "comm/mpi_rma.hpp"
#include "comm/personalised_exchange.hpp"
#include "comm/progress_rank.hpp"
#include "comm/request.hpp"
#include "comm/segment.hpp"

#include "distribution/row_block.hpp"

#include "storage/coo.hpp"
#include "storage/csc.hpp"
#include "storage/csr.hpp"

#include "matrix/build.hpp"
#include "matrix/convert.hpp"
#include "matrix/dist_matrix.hpp"
#include "matrix/gather.hpp"
#include "matrix/host_csr.hpp"
#include "matrix/kokkos_interop.hpp"
#include "matrix/local_triplets.hpp"
#include "matrix/redistribute.hpp"
#include "matrix/triplets.hpp"
#include "matrix/dist_dense.hpp"
#include "matrix/matrix_market.hpp"

#include "ops/elementwise.hpp"
#include "ops/semiring.hpp"
#include "ops/spgemm.hpp"
#include "ops/spmm.hpp"
#include "ops/transpose.hpp"

#include "generators/laplacian.hpp"
#include "generators/rmat.hpp"
#include "generators/uniform_random.hpp"
