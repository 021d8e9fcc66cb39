#pragma once
/// @file
/// spmm_kernel::kokkos_kernels's two copies: X's rows gathered in A's column-map order into the
/// LayoutLeft multivector KokkosSparse::spmv multiplies, and its LayoutLeft result back into Y's
/// rows. Free functions because nvcc refuses an extended (__host__ __device__) lambda inside a
/// private member.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/spmm/column_major.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../kernels/spmm_rows.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace tessera {

namespace detail {

/// gathered(c, :) = X's row for local column c, from this rank's X or from the halo: the
/// LayoutLeft multivector KokkosSparse::spmv multiplies. The device kernels of spmm_plan are free
/// functions because nvcc refuses an extended (__host__ __device__) lambda inside a private member.
template <class ExecSpace, class T, class MemorySpace>
void gather_by_column(const kernels::column_sources<MemorySpace>& sources,
                      const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                      const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& halo,
                      const Kokkos::View<T**, Kokkos::LayoutLeft, MemorySpace>& gathered) {
  const auto local = sources.local;
  const auto row = sources.row;
  const auto k = gathered.extent(1);
  Kokkos::parallel_for(
      "tessera::spmm::gather", Kokkos::RangePolicy<ExecSpace>(0, gathered.extent(0)), KOKKOS_LAMBDA(const std::size_t c) {
        for (std::size_t t = 0; t < k; ++t) gathered(c, t) = local(c) ? x_local(row(c), t) : halo(row(c), t);
      });
}

/// out = in, from KokkosSparse::spmv's LayoutLeft result into Y's LayoutRight rows.
template <class ExecSpace, class T, class MemorySpace>
void copy_to_rows(const Kokkos::View<const T**, Kokkos::LayoutLeft, MemorySpace>& in,
                  const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& out) {
  const auto k = out.extent(1);
  Kokkos::parallel_for(
      "tessera::spmm::scatter", Kokkos::RangePolicy<ExecSpace>(0, out.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        for (std::size_t t = 0; t < k; ++t) out(i, t) = in(i, t);
      });
}

}  // namespace detail

}  // namespace tessera
