#pragma once
/// @file
/// Distributed SpMM, Y = A * X: on whole-row distributions through the inspected plan kept with A
/// (spmm/plan.hpp), on grids and other splits of X through the 2-D product (grid/spmm_grid.hpp).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_HPP
#endif

#include "../core/error.hpp"
#include "../matrix/dist_dense.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../policy.hpp"
#include "detail/compiled_paths.hpp"
#include "detail/operand_checks.hpp"
#include "detail/tiles_as_elements.hpp"
#include "grid/spmm_grid.hpp"
#include "kept_plans.hpp"
#include "spmm/options.hpp"
#include "spmm/plan.hpp"

#include <cstdint>
#include <memory>

namespace tessera {

/// The plan for A * X, made on first use and kept in A.plan_cache() (collective; kept_plans.hpp:
/// the plans of the splits and widths of X used with A, agreed over the ranks).
template <matrix_value T, matrix_policy Policy>
spmm_plan<T, Policy>& spmm_plan_for(const dist_matrix<T, Policy>& a, const dist_dense<T, Policy>& x,
                                    spmm_options options = {}) {
  // Alternating between two splits of X reuses both plans instead of re-inspecting A at every call.
  return kept_plan<spmm_plan<T, Policy>>(
      a.comm(), a.plan_cache(), [&](const auto& plan) { return plan.fits(x.mapping(), x.num_vectors(), options); },
      [&] {
        a.comm().collectively([&] { detail::require_same_ranks("spmm", a.comm(), x.comm(), "X"); });
        return std::make_shared<spmm_plan<T, Policy>>(a, x.mapping(), x.num_vectors(), options);
      });
}

namespace detail {

/// Y = A * X through the plan kept with A. The lookup's one allreduce also agrees on apply's
/// checks (the kept plan must accept A, X and Y on every rank) and on reading X in place (X in
/// node-shared memory everywhere: spmm_plan::in_place_answer), so a product through a kept plan
/// costs one agreement, as it did when plans were looked up rank by rank.
template <compiled_paths Paths, matrix_value T, matrix_policy Policy>
void multiply_through_kept_plan(const dist_matrix<T, Policy>& a, const dist_dense<T, Policy>& x,
                                dist_dense<T, Policy>& y, const spmm_options& options) {
  using plan_type = spmm_plan<T, Policy>;
  const auto block = plan_type::compressed_rows(a);
  auto found = find_or_make_plan<plan_type>(
      a.comm(), a.plan_cache(),
      [&](const plan_type& plan) -> std::int64_t {
        // 0: does not fit; else how this rank would read X (agreed in the same allreduce).
        return plan.fits(x.mapping(), x.num_vectors(), options) && plan.accepts(block, a, x, y)
                   ? plan.in_place_answer(x)
                   : 0;
      },
      [&] {
        a.comm().collectively([&] { detail::require_same_ranks("spmm", a.comm(), x.comm(), "X"); });
        return std::make_shared<plan_type>(a, x.mapping(), x.num_vectors(), options);
      });
  if (found.kept)
    found.plan.template apply_checked<Paths>(
        block, x, y, found.agreed >= 2 ? plan_type::x_rows_read::in_place : plan_type::x_rows_read::fetched);
  else
    found.plan.template apply<Paths>(a, x, y);
}

}  // namespace detail

/// Y = A * X, Y split like A's rows, with tessera's kernel (collective). The first call with a
/// given split and width of X inspects A; later calls reuse that plan. Only this kernel is
/// compiled: Kokkos-Kernels' spmv, which spmm(A, X, options) can choose, is not.
template <matrix_value T, matrix_policy Policy>
dist_dense<T, Policy> spmm(const dist_matrix<T, Policy>& a, const dist_dense<T, Policy>& x) {
  dist_dense<T, Policy> y(a.comm(), a.mapping(), x.num_vectors());
  detail::multiply_through_kept_plan<detail::compiled_paths::plain>(a, x, y, spmm_options{});
  return y;
}

/// Y = A * X with the kernel and the streaming threshold that `options` choose (collective; as
/// spmm(A, X) otherwise). Compiles both kernels.
template <matrix_value T, matrix_policy Policy>
dist_dense<T, Policy> spmm(const dist_matrix<T, Policy>& a, const dist_dense<T, Policy>& x, spmm_options options) {
  dist_dense<T, Policy> y(a.comm(), a.mapping(), x.num_vectors());
  detail::multiply_through_kept_plan<detail::compiled_paths::any>(a, x, y, options);
  return y;
}

/// Y = A * X into an existing Y, with tessera's kernel (collective); no allocation after the first call.
template <matrix_value T, matrix_policy Policy>
void spmm(const dist_matrix<T, Policy>& a, const dist_dense<T, Policy>& x, dist_dense<T, Policy>& y) {
  detail::multiply_through_kept_plan<detail::compiled_paths::plain>(a, x, y, spmm_options{});
}

/// Y = A * X for an A distributed otherwise than X: a grid (block_cyclic_2d, replicated_columns),
/// a user's distribution, or another row split. X and Y are dense blocks on any whole-row
/// distribution, Y split by X's distribution over A's rows (collective; traffic under "spmm").
/// The 2-D product (grid/spmm_grid.hpp): each rank multiplies what it holds (a replica its share
/// of the rows) by the rows of X its columns name, and the partial rows of Y are added on Y's
/// owners. A tile-stored A is multiplied through its elements (to_elements on every call, O(nnz)).
template <matrix_value T, matrix_policy PA, matrix_policy PX>
  requires(!std::same_as<PA, PX>)
[[nodiscard]] dist_dense<T, PX> spmm(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x) {
  if constexpr (tile_storage<typename PA::storage_type>) {
    // Tiles: multiplied as elements (one conversion of A per call: convert once and keep it to
    // multiply the same A many times).
    return spmm(detail::tiles_as_elements(a), x);
  } else {
    const auto rows = a.comm().collectively([&] { return x.mapping().with_shape(a.num_rows(), x.num_vectors()); });
    dist_dense<T, PX> y(a.comm(), rows, x.num_vectors());
    detail::multiply_dense_on_grid(a, x, y);
    return y;
  }
}

/// As spmm(A, X) for an A distributed otherwise than X: the options choose the 1-D plan's kernels
/// and have no effect here.
template <matrix_value T, matrix_policy PA, matrix_policy PX>
  requires(!std::same_as<PA, PX>)
[[nodiscard]] dist_dense<T, PX> spmm(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x, spmm_options) {
  return spmm(a, x);
}

/// Y = A * X into an existing Y, for an A distributed otherwise than X and Y (collective).
template <matrix_value T, matrix_policy PA, matrix_policy PX>
  requires(!std::same_as<PA, PX>)
void spmm(const dist_matrix<T, PA>& a, const dist_dense<T, PX>& x, dist_dense<T, PX>& y) {
  if constexpr (tile_storage<typename PA::storage_type>)
    detail::multiply_dense_on_grid(detail::tiles_as_elements(a), x, y);
  else
    detail::multiply_dense_on_grid(a, x, y);
}

/// y = A * x for a single vector (x and y are dist_dense with one column).
template <matrix_value T, matrix_policy Policy>
dist_dense<T, Policy> spmv(const dist_matrix<T, Policy>& a, const dist_dense<T, Policy>& x) {
  a.comm().collectively([&] {
    TESSERA_REQUIRE(x.num_vectors() == 1, dimension_mismatch, "spmv: x has {} columns, not 1", x.num_vectors());
  });
  return spmm(a, x);
}

}  // namespace tessera

#ifdef TESSERA_USE_INSTANTIATIONS  // compiled once in tessera::instantiations, not in this unit
#include "../instantiations/use.hpp"
TESSERA_FOR_EACH_INSTANTIATED_POLICY(TESSERA_INSTANTIATE_SPMM, extern)
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_HPP
#endif
