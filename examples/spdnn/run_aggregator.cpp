// spdnn::cli::run under the aggregator backend (run.hpp says why the example is split).
#include "run_backend.hpp"

#include <tessera/comm/aggregator.hpp>

template int spdnn::cli::run<tessera::aggregator>(const spdnn::cli::options&, const tessera::communicator&);
