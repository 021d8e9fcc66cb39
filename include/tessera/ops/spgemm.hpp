#pragma once
/// @file
/// Distributed SpGEMM, every form and kernel: spgemm(A, B) and spgemm(A, B, options) (masks,
/// semirings, memory budgets, transposed operands, the kernel chosen: Gustavson, expand-sort-
/// compress, Kokkos-Kernels), spgemm_masked, spgemm_accumulate and the plans (spgemm_default.hpp),
/// with Kokkos-Kernels' SpGEMM compiled in (spgemm/kokkos_kernels_product.hpp). A unit that calls
/// spgemm(A, B) only can include spgemm_default.hpp instead and skip those headers on host-only
/// Kokkos builds.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_HPP
#endif

#include "spgemm/kokkos_kernels_product.hpp"
#include "spgemm_default.hpp"

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_HPP
#endif
