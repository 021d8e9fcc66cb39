#pragma once
/// @file
/// tessera::environment: the lifetime of MPI and Kokkos for a program.

#include <mpi.h>

#include "../comm/communicator.hpp"
#include "error.hpp"

#include <Kokkos_Core.hpp>

#include <optional>

namespace tessera {

/// Options of an environment.
struct environment_options {
  /// Thread support requested from MPI_Init_thread when tessera initialises MPI.
  int mpi_thread_level = MPI_THREAD_FUNNELED;
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
class environment {
 public:
  environment(int& argc, char**& argv, environment_options options = {}) { start(&argc, &argv, options); }
  explicit environment(environment_options options = {}) { start(nullptr, nullptr, options); }

  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;

  ~environment() {
    world_.reset();
    if (started_kokkos_ && Kokkos::is_initialized()) Kokkos::finalize();
    if (started_mpi_) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    }
  }

  /// All ranks of MPI_COMM_WORLD, as a tessera communicator (a duplicate).
  [[nodiscard]] const communicator& world() const { return *world_; }

  /// Whether this environment started MPI / Kokkos (and so will finalise them).
  [[nodiscard]] bool owns_mpi() const noexcept { return started_mpi_; }
  [[nodiscard]] bool owns_kokkos() const noexcept { return started_kokkos_; }

 private:
  void start(int* argc, char*** argv, const environment_options& options) {
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
    if (!Kokkos::is_initialized()) {
      if (argc != nullptr) Kokkos::initialize(*argc, *argv);
      else Kokkos::initialize();
      started_kokkos_ = true;
    }
    world_.emplace(communicator::duplicate(MPI_COMM_WORLD));
  }

  bool started_mpi_ = false;
  bool started_kokkos_ = false;
  std::optional<communicator> world_;
};

}  // namespace tessera
