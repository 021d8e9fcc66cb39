#pragma once
/// @file
/// mpi_rma: one-sided access through MPI-3 passive-target windows (lock_all,
/// request-based operations, flush): the fix the SGA authors propose for the
/// progress-rank bottleneck. Targets never take part in a transfer.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_RMA_HPP
#endif

// Seen by tessera::instantiations' extern declarations (instantiations/declarations.hpp).
#define TESSERA_COMPONENT_mpi_rma 1

#include <mpi.h>

#include "buckets.hpp"
#include "communicator.hpp"
#include "conveyor.hpp"
#include "mpi_check.hpp"
#include "mpi_datatype.hpp"
#include "mpi_memory.hpp"
#include "one_sided_api.hpp"
#include "personalised_exchange.hpp"

#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace tessera {

namespace detail {

struct rma_segment_state : segment_state {
  MPI_Win window = MPI_WIN_NULL;
  MPI_Datatype element_type = MPI_DATATYPE_NULL;
  /// Operations started on this window since the last flush_all: only these windows are flushed
  /// (one context serves every plan of a communicator: flushing all its windows would cost each
  /// product one MPI_Win_flush_all per window that product never touched).
  bool started = false;
  bool owns_element_type = false;
  std::vector<std::byte> owned;  ///< memory of an allocated segment on a one-rank communicator
  ~rma_segment_state() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (window != MPI_WIN_NULL) {
      MPI_Win_unlock_all(window);
      MPI_Win_free(&window);
    }
    if (owns_element_type) MPI_Type_free(&element_type);
  }
};

/// A committed datatype freed at scope exit (MPI lets an operation that uses it finish).
class scoped_datatype {
 public:
  scoped_datatype(MPI_Datatype base, const strided_region& r, std::size_t stride) {
    communicator::require_int_count(r.count, "strided transfer blocks");
    communicator::require_int_count(r.block_length, "strided transfer block length");
    communicator::require_int_count(stride, "strided transfer stride");
    if (r.count == 1 || stride == r.block_length) {
      communicator::require_int_count(r.elements(), "transfer");
      TESSERA_MPI(MPI_Type_contiguous(static_cast<int>(r.elements()), base, &type_));
    } else {
      TESSERA_MPI(MPI_Type_vector(static_cast<int>(r.count), static_cast<int>(r.block_length),
                                  static_cast<int>(stride), base, &type_));
    }
    TESSERA_MPI(MPI_Type_commit(&type_));
  }
  ~scoped_datatype() { MPI_Type_free(&type_); }
  scoped_datatype(const scoped_datatype&) = delete;
  scoped_datatype& operator=(const scoped_datatype&) = delete;
  [[nodiscard]] MPI_Datatype get() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

struct mpi_request_state final : request_state {
  MPI_Request handle = MPI_REQUEST_NULL;
  bool test() override {
    int done = 0;
    TESSERA_MPI(MPI_Test(&handle, &done, MPI_STATUS_IGNORE));
    return done != 0;
  }
  void wait() override { TESSERA_MPI(MPI_Wait(&handle, MPI_STATUS_IGNORE)); }
};

}  // namespace detail

/// The MPI RMA backend.
///
/// Counts one message per get/put/accumulate/fetch_add to another rank, with
/// the bytes of data it moves (a strided transfer is one message: one call
/// with a derived datatype). Mailboxes run on a direct conveyor.
///
/// On a one-rank communicator no window is made and operations are local
/// copies: some MPI builds (Debian's Open MPI disables osc/pt2pt) cannot
/// create a window on a single process. A device-aware build
/// (TESSERA_DEVICE_AWARE_MPI, comm/mpi_memory.hpp) makes windows there too,
/// because those host copies cannot read device memory.
struct mpi_rma : alltoall_exchanges {
  static constexpr std::string_view name() noexcept { return "rma"; }
  /// Gets and puts complete without the target calling tessera (see is_passive_target).
  static constexpr bool passive_target = true;
  /// Local buffers and windows go to MPI untouched: a device-aware MPI may be given device memory.
  static constexpr bool device_memory_transfers = true;

  struct options {
    conveyor_options messaging{};  ///< the conveyor behind mailboxes
  };

  class context;
};

/// Per-communicator state of mpi_rma: its windows and its conveyor. Collective to make.
class mpi_rma::context : public one_sided_api<mpi_rma::context> {
 public:
  explicit context(const communicator& comm, mpi_rma::options options = {})
      : comm_(comm), messages_(std::make_unique<conveyor>(comm, options.messaging)) {}

  [[nodiscard]] const communicator& comm() const noexcept { return comm_; }
  /// The transport of this context's mailboxes.
  [[nodiscard]] conveyor& messages() noexcept { return *messages_; }

  /// Collective: a new segment of `n` elements on this rank (MPI_Win_allocate).
  template <class T>
    requires std::is_trivially_copyable_v<T>
  segment<T> allocate(std::size_t n) {
    auto state = make_state<T>(n);
    if (local_only()) {
      state->owned.resize(n * sizeof(T));
      state->local_base = state->owned.data();
      return segment<T>(std::move(state));
    }
    void* base = nullptr;
    TESSERA_MPI(MPI_Win_allocate(static_cast<MPI_Aint>(n * sizeof(T)), static_cast<int>(sizeof(T)), MPI_INFO_NULL,
                                 comm_.get(), &base, &state->window));
    state->local_base = static_cast<std::byte*>(base);
    return finish<T>(std::move(state));
  }

  /// Collective: expose `memory` itself (MPI_Win_create); it must outlive the segment.
  template <class T>
    requires std::is_trivially_copyable_v<T>
  segment<T> expose(std::span<T> memory) {
    auto state = make_state<T>(memory.size());
    state->local_base = reinterpret_cast<std::byte*>(memory.data());
    if (local_only()) return segment<T>(std::move(state));
    TESSERA_MPI(MPI_Win_create(memory.data(), static_cast<MPI_Aint>(memory.size_bytes()), static_cast<int>(sizeof(T)),
                               MPI_INFO_NULL, comm_.get(), &state->window));
    return finish<T>(std::move(state));
  }

  request start_get(const segment_state& s, int rank, const strided_region& r, std::byte* local,
                    std::size_t local_stride) {
    return transfer(detail::remote_kind::get, s, rank, r, local, local_stride, scalar_code::opaque);
  }
  request start_put(const segment_state& s, int rank, const strided_region& r, const std::byte* local,
                    std::size_t local_stride) {
    return transfer(detail::remote_kind::put, s, rank, r, const_cast<std::byte*>(local), local_stride,
                    scalar_code::opaque);
  }
  request start_accumulate(const segment_state& s, int rank, const strided_region& r, const std::byte* local,
                           std::size_t local_stride, scalar_code scalar) {
    return transfer(detail::remote_kind::accumulate, s, rank, r, const_cast<std::byte*>(local), local_stride, scalar);
  }

  request start_fetch_add(const segment_state& s, int rank, std::size_t offset, std::int64_t value,
                          std::int64_t* old) {
    auto& w = window(s);
    if (local_only()) {
      *old = detail::fetch_add_at(w.local_base, offset, value);
      return {};
    }
    auto req = std::make_unique<detail::mpi_request_state>();
    // The addend must outlive the operation: keep it in the request.
    auto addend = std::make_unique<std::int64_t>(value);
    w.started = true;
    TESSERA_MPI(MPI_Rget_accumulate(addend.get(), 1, MPI_INT64_T, old, 1, MPI_INT64_T, rank,
                                    static_cast<MPI_Aint>(offset), 1, MPI_INT64_T, MPI_SUM, w.window, &req->handle));
    count(rank, sizeof(std::int64_t));
    return request(std::make_unique<owning_request>(std::move(req), std::move(addend)));
  }

  /// Complete every operation this rank started on `rank` (remote completion).
  void flush(int rank) {
    for_each_started_window([&](detail::rma_segment_state& w) { TESSERA_MPI(MPI_Win_flush(rank, w.window)); });
  }
  /// Complete every operation this rank started.
  void flush_all() {
    for_each_started_window([](detail::rma_segment_state& w) {
      TESSERA_MPI(MPI_Win_flush_all(w.window));
      w.started = false;
    });
  }
  /// Collective: every operation any rank started is complete and visible everywhere.
  void barrier() {
    flush_all();
    comm_.barrier();
    for_each_window([](MPI_Win w) { TESSERA_MPI(MPI_Win_sync(w)); });
  }

 private:
  struct owning_request final : request_state {
    owning_request(std::unique_ptr<detail::mpi_request_state> r, std::unique_ptr<std::int64_t> v)
        : inner(std::move(r)), addend(std::move(v)) {}
    bool test() override { return inner->test(); }
    void wait() override { inner->wait(); }
    std::unique_ptr<detail::mpi_request_state> inner;
    std::unique_ptr<std::int64_t> addend;
  };

  [[nodiscard]] bool local_only() const noexcept { return comm_.size() == 1 && !device_aware_mpi; }

  // One request-based MPI call, with derived datatypes on both sides (so a strided region is one call).
  request transfer(detail::remote_kind kind, const segment_state& s, int rank, const strided_region& r,
                   std::byte* local, std::size_t local_stride, scalar_code scalar) {
    auto& w = window(s);
    if (local_only()) return apply_locally(kind, w, r, local, local_stride, scalar);
    detail::scoped_datatype origin(w.element_type, r, local_stride), target(w.element_type, r, r.stride);
    auto req = std::make_unique<detail::mpi_request_state>();
    const auto at = static_cast<MPI_Aint>(r.offset);
    w.started = true;
    if (kind == detail::remote_kind::get)
      TESSERA_MPI(MPI_Rget(local, 1, origin.get(), rank, at, 1, target.get(), w.window, &req->handle));
    else if (kind == detail::remote_kind::put)
      TESSERA_MPI(MPI_Rput(local, 1, origin.get(), rank, at, 1, target.get(), w.window, &req->handle));
    else
      TESSERA_MPI(MPI_Raccumulate(local, 1, origin.get(), rank, at, 1, target.get(), MPI_SUM, w.window, &req->handle));
    count(rank, r.elements() * s.element_size);
    return request(std::move(req));
  }

  request apply_locally(detail::remote_kind kind, detail::rma_segment_state& w, const strided_region& r,
                        std::byte* local, std::size_t local_stride, scalar_code scalar) {
    const auto h = detail::make_header(kind, w, 0, r, scalar);
    staging_.resize(r.elements() * w.element_size);
    if (kind == detail::remote_kind::get) {
      detail::pack_region(w.local_base, h.region(), w.element_size, staging_.data());
      unpack_strided(local, r, local_stride, w.element_size, staging_.data());
    } else {
      pack_strided(local, r, local_stride, w.element_size, staging_.data());
      detail::apply_write(h, w.local_base, staging_.data());
    }
    return {};
  }

  template <class T>
  std::shared_ptr<detail::rma_segment_state> make_state(std::size_t n) {
    auto state = std::make_shared<detail::rma_segment_state>();
    state->id = next_id_++;
    state->element_size = sizeof(T);
    state->rank = comm_.rank();
    if constexpr (has_mpi_datatype<T>) {
      state->element_type = mpi_datatype<T>();
    } else {
      TESSERA_MPI(MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &state->element_type));
      TESSERA_MPI(MPI_Type_commit(&state->element_type));
      state->owns_element_type = true;
    }
    const auto all = comm_.allgather(static_cast<std::uint64_t>(n));
    state->extents.assign(all.begin(), all.end());
    return state;
  }

  template <class T>
  segment<T> finish(std::shared_ptr<detail::rma_segment_state> state) {
    TESSERA_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, state->window));
    windows_.push_back(state);
    return segment<T>(std::move(state));
  }

  detail::rma_segment_state& window(const segment_state& s) {
    auto* w = dynamic_cast<const detail::rma_segment_state*>(&s);
    TESSERA_REQUIRE(w != nullptr, invalid_argument, "mpi_rma: segment {} was not made by an mpi_rma context", s.id);
    return const_cast<detail::rma_segment_state&>(*w);
  }

  template <class F>
  void for_each_started_window(F&& f) {
    std::erase_if(windows_, [](const auto& w) { return w.expired(); });
    for (const auto& weak : windows_)
      if (auto w = weak.lock(); w && w->window != MPI_WIN_NULL && w->started) f(*w);
  }

  template <class F>
  void for_each_window(F&& f) {
    std::erase_if(windows_, [](const auto& w) { return w.expired(); });
    for (const auto& weak : windows_)
      if (auto w = weak.lock(); w && w->window != MPI_WIN_NULL) f(w->window);
  }

  void count(int rank, std::size_t bytes) {
    if (rank != comm_.rank()) comm_.stats().record(1, bytes);
  }

  communicator comm_;
  std::unique_ptr<conveyor> messages_;
  std::uint32_t next_id_ = 0;
  std::vector<std::weak_ptr<detail::rma_segment_state>> windows_;
  std::vector<std::byte> staging_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_RMA_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_RMA_HPP
#endif
