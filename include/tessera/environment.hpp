#pragma once
/// @file
/// tessera::environment: the lifetime of MPI and Kokkos for a program.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_ENVIRONMENT_HPP
#endif

#include <mpi.h>

#include "comm/communicator.hpp"
#include "comm/detail/progress_service.hpp"
#include "core/error.hpp"
#include "core/freed_memory.hpp"

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

namespace tessera {

/// Options of an environment.
struct environment_options {
  /// Thread support requested from MPI_Init_thread when tessera initialises MPI.
  int mpi_thread_level = MPI_THREAD_FUNNELED;
  /// Split one process per node off as a progress rank (needed by the
  /// progress_rank backend). Progress ranks serve until the environment ends
  /// and never return from the constructor; world() holds the others.
  bool progress_ranks = false;
  /// 0: nodes are the real shared-memory nodes. k > 0: each group of k
  /// consecutive processes of a real node counts as a node, to exercise the
  /// multi-node paths on one machine.
  int ranks_per_node = 0;
  /// Keep freed host memory for the next allocation (core/freed_memory.hpp): loops that make and
  /// drop Views of the same size stop faulting pages in again, which is what keeps threads inside
  /// a rank from scaling. The footprint stays at its peak.
  bool retain_freed_memory = false;

  /// Defaults, overridden by TESSERA_PROGRESS_RANKS=0|1, TESSERA_RANKS_PER_NODE=k and
  /// TESSERA_RETAIN_FREED_MEMORY=0|1 when set.
  [[nodiscard]] static environment_options from_environment_variables() {
    environment_options options;
    if (const char* v = std::getenv("TESSERA_PROGRESS_RANKS")) options.progress_ranks = std::string(v) == "1";
    if (const char* v = std::getenv("TESSERA_RANKS_PER_NODE")) options.ranks_per_node = std::atoi(v);
    if (const char* v = std::getenv("TESSERA_RETAIN_FREED_MEMORY")) options.retain_freed_memory = std::string(v) == "1";
    return options;
  }
};

/// Initialises MPI and Kokkos unless the program already did, and finalises
/// only what it initialised, in reverse order.
///
/// @code
/// int main(int argc, char** argv) {
///   tessera::environment env(argc, argv);
///   auto comm = env.world();
///   ...
/// }  // Kokkos then MPI finalised here (if tessera started them)
/// @endcode
///
/// Kokkos Views must be destroyed before the environment is, as with
/// Kokkos::finalize: keep matrices in an inner scope.
///
/// If the constructor throws (a bad option, progress ranks on nodes of one
/// process), it has already finalised what it started, so a program that
/// catches the error exits cleanly. Such errors are raised on every rank
/// alike; MPI_Finalize waits for all ranks.
class environment {
 public:
  environment(int& argc, char**& argv, environment_options options = {}) { start(&argc, &argv, options); }
  explicit environment(environment_options options = {}) { start(nullptr, nullptr, options); }

  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;

  ~environment() {
    if (progress_) {
      // Every compute rank is done with one-sided traffic; then each tells its server to stop.
      MPI_Barrier(progress_->compute_comm());
      progress_->stop_server();
      detail::active_progress_service() = nullptr;
    }
    world_.reset();
    if (started_kokkos_ && Kokkos::is_initialized()) {
      Kokkos::finalize();
      detail::kokkos_ended_by_environment() = true;
    }
    if (started_mpi_) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    }
  }

  /// All compute ranks (all of MPI_COMM_WORLD unless progress ranks were split
  /// off), as a tessera communicator (a duplicate).
  [[nodiscard]] const communicator& world() const { return *world_; }

  /// Whether this environment started MPI / Kokkos (and so will finalise them).
  [[nodiscard]] bool owns_mpi() const noexcept { return started_mpi_; }
  [[nodiscard]] bool owns_kokkos() const noexcept { return started_kokkos_; }
  /// Whether progress ranks serve this environment's compute ranks.
  [[nodiscard]] bool has_progress_ranks() const noexcept { return static_cast<bool>(progress_); }

 private:
  void start(int* argc, char*** argv, const environment_options& options) {
    if (options.retain_freed_memory) (void)retain_freed_memory();  // before anything is allocated
    int finalized = 0;
    MPI_Finalized(&finalized);
    TESSERA_REQUIRE(!finalized, invalid_argument, "environment: MPI was already finalised");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      TESSERA_MPI(MPI_Init_thread(argc, argv, options.mpi_thread_level, &provided));
      started_mpi_ = true;
    }
    // No destructor runs for a constructor that throws: without this, a bad option would leave MPI
    // initialised and the launcher would report a process that "exited without calling finalize".
    try {
      start_after_mpi(argc, argv, options);
    } catch (...) {
      abandon();
      throw;
    }
  }

  void start_after_mpi(int* argc, char*** argv, const environment_options& options) {
    TESSERA_REQUIRE(options.ranks_per_node >= 0, invalid_argument, "environment: ranks_per_node {} is negative",
                    options.ranks_per_node);
    if (options.progress_ranks) {
      TESSERA_REQUIRE(detail::active_progress_service() == nullptr, invalid_argument,
                      "environment: progress ranks are already running (one such environment per program)");
      // The same on every rank: whether the program's units include the backend is one answer.
      TESSERA_REQUIRE(detail::registered_progress_service() != nullptr, invalid_argument,
                      "environment: progress ranks serve the progress_rank backend, which no unit of this program "
                      "includes (<tessera/comm/progress_rank.hpp> or <tessera/tessera.hpp>)");
      progress_ = detail::registered_progress_service()(options.ranks_per_node);
      if (progress_->is_server()) {
        // A progress rank never runs user code: it serves, then ends the process.
        progress_->serve();
        progress_.reset();
        MPI_Finalize();
        std::exit(0);
      }
      detail::active_progress_service() = progress_.get();
    }
    if (!Kokkos::is_initialized()) {
      if (argc != nullptr) Kokkos::initialize(*argc, *argv);
      else Kokkos::initialize();
      started_kokkos_ = true;
    }
    world_.emplace(communicator::duplicate(progress_ ? progress_->compute_comm() : MPI_COMM_WORLD));
  }

  /// Undoes what start() did, in reverse order, when it cannot finish: the caller then gets the
  /// exception with MPI and Kokkos as they were before (or finalised, if this environment started them).
  void abandon() noexcept {
    world_.reset();
    if (progress_ && detail::active_progress_service() == progress_.get()) {
      // This rank's server is serving and waits for a shutdown from each of its compute ranks.
      // No barrier as in the destructor: no one-sided traffic can have started yet.
      progress_->stop_server();
      detail::active_progress_service() = nullptr;
    }
    progress_.reset();
    if (started_kokkos_ && Kokkos::is_initialized()) {
      Kokkos::finalize();
      detail::kokkos_ended_by_environment() = true;
    }
    started_kokkos_ = false;
    if (started_mpi_) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    }
    started_mpi_ = false;
  }

  bool started_mpi_ = false;
  bool started_kokkos_ = false;
  std::unique_ptr<detail::progress_service> progress_;
  std::optional<communicator> world_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_ENVIRONMENT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_ENVIRONMENT_HPP
#endif
