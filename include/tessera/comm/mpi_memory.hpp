#pragma once
/// @file
/// Where the memory that MPI reads and writes lives: the one place that decides between staging
/// device data through host memory and handing device pointers to a device-aware MPI.
///
/// The build option `TESSERA_DEVICE_AWARE_MPI` (CMake `-DTESSERA_DEVICE_AWARE_MPI=ON`, or the macro
/// defined to 1) says that the MPI library accepts device pointers (Open MPI or MPICH built with
/// CUDA/ROCm support). It takes effect only for backends that hand local buffers straight to MPI
/// (they declare `static constexpr bool device_memory_transfers = true;`, as mpi_rma does); the
/// others copy requests through host memory themselves, so their buffers stay on the host.
///
/// Every operation that moves data with a backend asks this header:
///  - the windows others read from: `staging_window` (device memory exposed to MPI, or host memory
///    the backend allocates);
///  - the buffers gets land in: `mpi_buffer_for(view)` (the View itself, or a host mirror);
///  - the ordering: `fence_before_mpi(exec)` before MPI reads what kernels wrote, and
///    `copy_from_mpi(view, buffer)` after MPI wrote a buffer (a copy only when the buffer is a mirror).
/// On host execution spaces every one of these is the plain host path: no copies are added.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_MEMORY_HPP
#endif

#include "../core/deep_copy.hpp"
#include "backend_traits.hpp"
#include "segment.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#ifndef TESSERA_DEVICE_AWARE_MPI
#define TESSERA_DEVICE_AWARE_MPI 0
#endif

namespace tessera {

/// True in a build that hands device pointers to MPI (TESSERA_DEVICE_AWARE_MPI).
inline constexpr bool device_aware_mpi = TESSERA_DEVICE_AWARE_MPI != 0;

/// Whether MPI, through Backend, may read and write memory of MemorySpace directly: host-accessible
/// memory always; device memory in a device-aware build with a backend that allows it.
template <class MemorySpace, class Backend>
inline constexpr bool mpi_reaches =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible ||
    (device_aware_mpi && transfers_device_memory<Backend>);

/// The memory space of the windows and buffers MPI uses for data that lives in MemorySpace.
template <class MemorySpace, class Backend>
using mpi_memory_space = std::conditional_t<mpi_reaches<MemorySpace, Backend>, MemorySpace, Kokkos::HostSpace>;

/// The buffer MPI fills (gets) or reads for `view`: the View itself when MPI reaches its memory,
/// otherwise a host mirror of it. Use it as the destination of gets, then copy_from_mpi.
template <class Backend, class View>
  requires Kokkos::is_view<View>::value
auto mpi_buffer_for(const View& view) {
  if constexpr (mpi_reaches<typename View::memory_space, Backend>)
    return view;
  else
    return Kokkos::create_mirror_view(Kokkos::HostSpace{}, view);
}

/// After MPI wrote `buffer` (its requests completed): the data in `view` for the kernels. A copy
/// (which fences) when `buffer` is a host mirror; nothing when it is the View itself.
template <class View, class Buffer>
  requires Kokkos::is_view<View>::value && Kokkos::is_view<Buffer>::value
void copy_from_mpi(const View& view, const Buffer& buffer) {
  if constexpr (!std::is_same_v<typename View::memory_space, typename Buffer::memory_space>) tessera::detail::deep_copy(view, buffer);
}

/// Before MPI reads memory that kernels on `exec` wrote (a staged window, a put's source): those
/// kernels must be complete, because MPI neither knows nor waits for the execution space's queue.
template <class ExecutionSpace>
void fence_before_mpi(const ExecutionSpace& exec) {
  exec.fence();
}

/// A window of `T` that other ranks read, for data that lives in MemorySpace (collective to make).
///
/// With device memory and a device-aware MPI, the window is device memory exposed to MPI
/// (`expose`), so staging X or A is a device-to-device copy and gets read device memory. Otherwise
/// it is memory the backend allocates (MPI_Win_allocate, node-shared memory, ...), which is host
/// memory.
template <class T, class MemorySpace, class Backend>
class staging_window {
 public:
  /// Where the window's local part lives.
  using memory_space = mpi_memory_space<MemorySpace, Backend>;
  /// The local part as a View (unmanaged: the window owns it).
  using local_view_type = Kokkos::View<T*, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  /// Whether the window is the data's own (device) memory rather than backend-allocated host memory.
  static constexpr bool exposes_device_memory =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible && mpi_reaches<MemorySpace, Backend>;

  staging_window() = default;
  staging_window(const staging_window&) = default;
  staging_window(staging_window&&) noexcept = default;
  ~staging_window() = default;
  /// Replacing a window closes the old one before its memory is freed.
  staging_window& operator=(staging_window other) noexcept {
    segment_ = std::move(other.segment_);
    memory_ = std::move(other.memory_);
    return *this;
  }

  /// A window of `elements` on this rank (collective over the context's ranks).
  template <class Context>
  staging_window(Context& context, std::size_t elements) {
    if constexpr (exposes_device_memory) {
      memory_ = Kokkos::View<T*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::window"), elements);
      segment_ = context.template expose<T>(std::span<T>(memory_.data(), elements));
    } else {
      segment_ = context.template allocate<T>(elements);
    }
  }

  /// The segment to name in gets and puts.
  [[nodiscard]] const segment<T>& segment_handle() const noexcept { return segment_; }
  /// This rank's part.
  [[nodiscard]] local_view_type local() const {
    const auto part = segment_.local();
    return local_view_type(part.data(), part.size());
  }
  [[nodiscard]] bool valid() const noexcept { return segment_.valid(); }

 private:
  // Declared first so the window (segment_) closes before its memory is freed.
  Kokkos::View<T*, MemorySpace> memory_;
  segment<T> segment_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_MEMORY_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_MPI_MEMORY_HPP
#endif
