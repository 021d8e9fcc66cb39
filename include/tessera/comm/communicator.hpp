#pragma once
/// @file
/// tessera::communicator: an MPI communicator that raises exceptions, counts traffic,
/// and makes every rank agree on failure.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_COMMUNICATOR_HPP
#endif

#include <mpi.h>

#include "../core/error.hpp"
#include "../core/profiling_region.hpp"
#include "../core/runtime_lifetime.hpp"
#include "../core/typed_cache.hpp"
#include "counters.hpp"
#include "mpi_check.hpp"
#include "mpi_datatype.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessera {

/// A handle to an MPI communicator owned by tessera.
///
/// Copies share the same MPI communicator and the same traffic counters.
/// The communicator is a duplicate of the one it was made from, so tessera's
/// messages never match a user's, and it uses MPI_ERRORS_RETURN so MPI
/// failures surface as tessera::error instead of aborting.
class communicator {
 public:
  /// Duplicate `comm` (collective over `comm`).
  static communicator duplicate(MPI_Comm comm) {
    MPI_Comm dup = MPI_COMM_NULL;
    TESSERA_MPI(MPI_Comm_dup(comm, &dup));
    TESSERA_MPI(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    return communicator(dup);
  }

  /// The underlying MPI communicator, for mixing in plain MPI calls.
  [[nodiscard]] MPI_Comm get() const noexcept { return state_->comm; }
  [[nodiscard]] int rank() const noexcept { return state_->rank; }
  [[nodiscard]] int size() const noexcept { return state_->size; }

  /// Whether `other` has the same processes in the same rank order (MPI_IDENT or
  /// MPI_CONGRUENT), so that operands living on it can be combined with operands
  /// living here: rank r means the same process on both (not collective).
  [[nodiscard]] bool same_ranks_as(const communicator& other) const {
    detail::require_runtimes_alive();
    int result = MPI_UNEQUAL;
    TESSERA_MPI(MPI_Comm_compare(get(), other.get(), &result));
    return result == MPI_IDENT || result == MPI_CONGRUENT;
  }

  /// Traffic counters of this rank (shared by all copies of this communicator).
  [[nodiscard]] comm_stats& stats() const noexcept { return state_->stats; }

  /// What operations on this communicator share between calls (the windows and buffers of
  /// SpMM and SpGEMM workspaces), kept by type and shared by all copies of this communicator.
  /// Entries that hold this communicator must be held here by weak_ptr, or they keep it alive.
  [[nodiscard]] typed_cache& shared_resources() const noexcept { return state_->resources; }

  void barrier() const {
    collective([&] { TESSERA_MPI(MPI_Barrier(get())); }, [&](MPI_Request* r) { TESSERA_MPI(MPI_Ibarrier(get(), r)); });
  }

  /// Allreduce of one value with an MPI operation (MPI_SUM, MPI_MAX, ...).
  template <class T>
  [[nodiscard]] T allreduce(T value, MPI_Op op) const {
    T result{};
    collective([&] { TESSERA_MPI(MPI_Allreduce(&value, &result, 1, mpi_datatype<T>(), op, get())); },
               [&](MPI_Request* r) { TESSERA_MPI(MPI_Iallreduce(&value, &result, 1, mpi_datatype<T>(), op, get(), r)); });
    return result;
  }

  /// Register work to run while this rank waits in barrier(), allreduce() and
  /// the agreement of collectively(): a backend whose targets serve requests
  /// only when they call into it (the aggregator) keeps serving there, so a
  /// rank that finished early never starves one still waiting for a reply.
  /// @return a key for remove_progress_hook.
  int add_progress_hook(std::function<void()> hook) const {
    const int key = state_->next_hook_key++;
    state_->progress_hooks.emplace_back(key, std::move(hook));
    return key;
  }
  void remove_progress_hook(int key) const {
    std::erase_if(state_->progress_hooks, [key](const auto& h) { return h.first == key; });
  }
  /// Element-wise allreduce of a vector, in place.
  template <class T>
  void allreduce_inplace(std::vector<T>& values, MPI_Op op) const {
    require_int_count(values.size(), "allreduce");
    const int n = static_cast<int>(values.size());
    collective([&] { TESSERA_MPI(MPI_Allreduce(MPI_IN_PLACE, values.data(), n, mpi_datatype<T>(), op, get())); },
               [&](MPI_Request* r) {
                 TESSERA_MPI(MPI_Iallreduce(MPI_IN_PLACE, values.data(), n, mpi_datatype<T>(), op, get(), r));
               });
  }
  template <class T>
  [[nodiscard]] T sum(T value) const { return allreduce(value, MPI_SUM); }
  template <class T>
  [[nodiscard]] T max(T value) const { return allreduce(value, MPI_MAX); }
  template <class T>
  [[nodiscard]] T min(T value) const { return allreduce(value, MPI_MIN); }

  /// Sum of `value` over the ranks below this one (0 on rank 0).
  template <class T>
  [[nodiscard]] T exclusive_prefix_sum(T value) const {
    T result{};
    collective([&] { TESSERA_MPI(MPI_Exscan(&value, &result, 1, mpi_datatype<T>(), MPI_SUM, get())); },
               [&](MPI_Request* r) { TESSERA_MPI(MPI_Iexscan(&value, &result, 1, mpi_datatype<T>(), MPI_SUM, get(), r)); });
    return rank() == 0 ? T{} : result;
  }

  /// One value from every rank, in rank order, on every rank.
  template <class T>
  [[nodiscard]] std::vector<T> allgather(T value) const {
    std::vector<T> result(static_cast<std::size_t>(size()));
    const auto type = mpi_datatype<T>();
    collective([&] { TESSERA_MPI(MPI_Allgather(&value, 1, type, result.data(), 1, type, get())); },
               [&](MPI_Request* r) { TESSERA_MPI(MPI_Iallgather(&value, 1, type, result.data(), 1, type, get(), r)); });
    return result;
  }

  /// Every rank's `mine`, concatenated in rank order, on every rank (ranks may give different lengths).
  template <class T>
  [[nodiscard]] std::vector<T> allgather_concatenated(const std::vector<T>& mine) const {
    return concatenate(mine, -1);
  }
  /// Every rank's `mine`, concatenated in rank order, on `root`; empty on the other ranks.
  template <class T>
  [[nodiscard]] std::vector<T> gather_concatenated(const std::vector<T>& mine, int root) const {
    return concatenate(mine, root);
  }

  /// Broadcast a vector (its size too) from `root`.
  template <class T>
  void broadcast(std::vector<T>& values, int root) const {
    auto n = static_cast<std::uint64_t>(values.size());
    collective([&] { TESSERA_MPI(MPI_Bcast(&n, 1, MPI_UINT64_T, root, get())); },
               [&](MPI_Request* r) { TESSERA_MPI(MPI_Ibcast(&n, 1, MPI_UINT64_T, root, get(), r)); });
    values.resize(n);
    require_int_count(n, "broadcast");
    if (n == 0) return;
    const int count = static_cast<int>(n);
    collective([&] { TESSERA_MPI(MPI_Bcast(values.data(), count, mpi_datatype<T>(), root, get())); },
               [&](MPI_Request* r) { TESSERA_MPI(MPI_Ibcast(values.data(), count, mpi_datatype<T>(), root, get(), r)); });
  }
  void broadcast(std::string& text, int root) const {
    std::vector<char> chars(text.begin(), text.end());
    broadcast(chars, root);
    text.assign(chars.begin(), chars.end());
  }

  /// Run `local_work` on this rank, then make all ranks agree on its outcome.
  ///
  /// This is tessera's answer to the hang that PETSc, Tpetra, CombBLAS and
  /// Global Arrays users meet when one rank fails inside a collective: every
  /// collective operation runs its local phases through here, so if any rank
  /// throws, *every* rank throws a tessera::error carrying the message of the
  /// lowest failing rank, and no rank is left waiting. Costs one MPI_Allreduce
  /// of an int when nothing fails.
  ///
  /// @return what `local_work` returned.
  template <class F>
  std::invoke_result_t<F&> collectively(F&& local_work) const {
    using result_type = std::invoke_result_t<F&>;
    std::exception_ptr failure;
    if constexpr (std::is_void_v<result_type>) {
      try {
        local_work();
      } catch (...) {
        failure = std::current_exception();
      }
      agree(failure);
    } else {
      std::optional<result_type> result;
      try {
        result.emplace(local_work());
      } catch (...) {
        failure = std::current_exception();
      }
      agree(failure);
      return std::move(*result);
    }
  }

  /// Collective: throw on every rank if `failure` is set on any rank.
  void agree(const std::exception_ptr& failure) const {
    const int first = allreduce(failure ? rank() : INT_MAX, MPI_MIN);
    if (first != INT_MAX) raise_agreed(first, failure);
  }

  /// As agree(failure), and `least` (in and out) becomes its element-wise minimum over the ranks, in
  /// the same allreduce: a choice the ranks make together (pass x and -x for the least and the
  /// greatest x). Costs one allreduce of 1 + least.size() integers when nothing fails.
  void agree(const std::exception_ptr& failure, std::vector<std::int64_t>& least) const {
    std::vector<std::int64_t> values(least.size() + 1);
    values[0] = failure ? rank() : INT_MAX;
    std::copy(least.begin(), least.end(), values.begin() + 1);
    allreduce_inplace(values, MPI_MIN);
    std::copy(values.begin() + 1, values.end(), least.begin());
    if (values[0] != INT_MAX) raise_agreed(static_cast<int>(values[0]), failure);
  }

 private:
  // Throw on every rank what the lowest failing rank, `first`, failed with.
  [[noreturn]] void raise_agreed(int first, const std::exception_ptr& failure) const {
    // The lowest failing rank describes its failure to everybody.
    std::vector<std::int64_t> header(2, 0);  // kind, line
    std::string message, file;
    if (rank() == first) describe(failure, header, message, file);
    broadcast(header, first);
    broadcast(message, first);
    broadcast(file, first);
    // file() must outlive the exception: keep the broadcast names alive.
    const char* stable_file = intern(file);
    throw error(static_cast<error_kind>(header[0]), std::move(message), stable_file, static_cast<int>(header[1]), first);
  }

 public:
  /// Throw unless `n` fits the int count of classic MPI calls.
  static void require_int_count(std::uint64_t n, const char* what) {
    TESSERA_REQUIRE(n <= static_cast<std::uint64_t>(INT_MAX), unsupported,
                    "{} of {} elements exceeds MPI's int count limit", what, n);
  }

 private:
  struct state {
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0;
    int size = 1;
    comm_stats stats;
    typed_cache resources;
    std::vector<std::pair<int, std::function<void()>>> progress_hooks;
    int next_hook_key = 0;
    ~state() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    }
  };

  explicit communicator(MPI_Comm owned) : state_(std::make_shared<state>()) {
    state_->comm = owned;
    TESSERA_MPI(MPI_Comm_rank(owned, &state_->rank));
    TESSERA_MPI(MPI_Comm_size(owned, &state_->size));
  }

  // The concatenation of every rank's vector, on `root` (root < 0: on every rank).
  template <class T>
  std::vector<T> concatenate(const std::vector<T>& mine, int root) const {
    require_int_count(mine.size(), "gather");
    const auto counts = allgather(static_cast<int>(mine.size()));
    std::vector<int> displs(counts.size(), 0);
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      displs[r] = static_cast<int>(total);
      total += static_cast<std::size_t>(counts[r]);
      require_int_count(total, "gather");
    }
    std::vector<T> all(root < 0 || rank() == root ? total : 0);
    const auto type = mpi_datatype<T>();
    const int n = static_cast<int>(mine.size());
    if (root < 0)
      collective([&] { TESSERA_MPI(MPI_Allgatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, get())); },
                 [&](MPI_Request* r) {
                   TESSERA_MPI(MPI_Iallgatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, get(), r));
                 });
    else
      collective([&] { TESSERA_MPI(MPI_Gatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, root, get())); },
                 [&](MPI_Request* r) {
                   TESSERA_MPI(MPI_Igatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, root, get(), r));
                 });
    return all;
  }

  // Run a collective blocking, or non-blocking while serving the progress hooks.
  template <class Blocking, class Start>
  void collective(Blocking&& blocking, Start&& start) const {
    detail::require_runtimes_alive();  // a communicator kept past the environment: an error, not an MPI abort
    if (state_->progress_hooks.empty()) {
      blocking();
      return;
    }
    MPI_Request r;
    start(&r);
    wait_with_progress(r);
  }

  void wait_with_progress(MPI_Request& r) const {
    for (int done = 0;;) {
      TESSERA_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
      if (done) return;
      for (const auto& [key, hook] : state_->progress_hooks) hook();
    }
  }

  static void describe(const std::exception_ptr& failure, std::vector<std::int64_t>& header, std::string& message,
                       std::string& file) {
    try {
      std::rethrow_exception(failure);
    } catch (const error& e) {
      header = {static_cast<std::int64_t>(e.kind()), e.line()};
      message = e.message();
      file = e.file();
    } catch (const std::exception& e) {
      header = {static_cast<std::int64_t>(error_kind::external), 0};
      message = e.what();
    } catch (...) {
      header = {static_cast<std::int64_t>(error_kind::external), 0};
      message = "unknown exception";
    }
  }

  static const char* intern(const std::string& name) {
    static std::vector<std::unique_ptr<std::string>> names;
    for (const auto& n : names)
      if (*n == name) return n->c_str();
    names.push_back(std::make_unique<std::string>(name));
    return names.back()->c_str();
  }

  std::shared_ptr<state> state_;
};

/// RAII scope that attributes the traffic recorded on `comm` to `name`.
class stats_scope {
 public:
  /// Also a Kokkos profiling region "tessera::<name>" (profiling_region), so that Kokkos Tools
  /// (and tools/kernel-times) attribute the operation's kernels, copies and host time to it.
  stats_scope(const communicator& comm, std::string name) : region_("tessera::" + name), stats_(&comm.stats()) {
    stats_->push_scope(std::move(name));
  }
  ~stats_scope() { stats_->pop_scope(); }
  stats_scope(const stats_scope&) = delete;
  stats_scope& operator=(const stats_scope&) = delete;

 private:
  profiling_region region_;
  comm_stats* stats_;
};

/// Traffic of every rank in one scope, reduced over the communicator (collective).
struct traffic_summary {
  traffic total;        ///< summed over ranks
  traffic max_per_rank; ///< the largest rank's count (messages and bytes maximised separately)
};

/// Reduce one rank-local traffic count over all ranks (collective).
[[nodiscard]] inline traffic_summary reduce_traffic(const communicator& comm, const traffic& mine) {
  return {{comm.sum(mine.messages), comm.sum(mine.bytes)}, {comm.max(mine.messages), comm.max(mine.bytes)}};
}

/// Reduce one scope's counters over all ranks (collective).
[[nodiscard]] inline traffic_summary reduce_traffic(const communicator& comm, const std::string& scope) {
  return reduce_traffic(comm, comm.stats().of(scope));
}

/// Reduce the all-scope totals over all ranks (collective).
[[nodiscard]] inline traffic_summary reduce_traffic(const communicator& comm) {
  return reduce_traffic(comm, comm.stats().total());
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_COMMUNICATOR_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_COMMUNICATOR_HPP
#endif
