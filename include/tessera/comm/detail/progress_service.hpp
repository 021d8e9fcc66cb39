#pragma once
/// @file
/// What the environment needs of the progress ranks' runtime, behind an interface. The runtime
/// (progress_runtime.hpp) serves the progress_rank backend only and registers itself wherever
/// that backend's header is included, so a program that never uses the backend does not compile
/// the runtime (0.3 s of g++ per unit with tessera::instantiations, up to 0.9 s without).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/comm/detail/progress_service.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include <mpi.h>

#include <memory>

namespace tessera::detail {

/// The progress ranks' runtime as the environment drives it: made collectively over
/// MPI_COMM_WORLD, it splits one process per node off as a server.
class progress_service {
 public:
  virtual ~progress_service() = default;
  /// Whether this process is a progress rank: it serves and never returns to user code.
  [[nodiscard]] virtual bool is_server() const noexcept = 0;
  /// A progress rank's loop, until every compute rank of its node has stopped it.
  virtual void serve() = 0;
  /// The compute ranks, what environment::world() duplicates.
  [[nodiscard]] virtual MPI_Comm compute_comm() const noexcept = 0;
  /// Tell this compute rank's server that the rank is done (one message).
  virtual void stop_server() noexcept = 0;
};

using progress_service_factory = std::unique_ptr<progress_service> (*)(int ranks_per_node);

/// The factory progress_runtime.hpp registers; null in a program none of whose units includes it.
inline progress_service_factory& registered_progress_service() noexcept {
  static progress_service_factory factory = nullptr;
  return factory;
}

/// The runtime this process's environment started (one at a time), which the progress_rank
/// backend talks to; null when none runs.
inline progress_service*& active_progress_service() noexcept {
  static progress_service* active = nullptr;
  return active;
}

}  // namespace tessera::detail
