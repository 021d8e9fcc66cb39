// spdnn::cli::run under the progress_rank backend (run.hpp says why the example is split).
#include "run_backend.hpp"

#include <tessera/comm/progress_rank.hpp>

template int spdnn::cli::run<tessera::progress_rank>(const spdnn::cli::options&, const tessera::communicator&);
