#pragma once
/// @file
/// Moving a dist_matrix onto another mapping of the same distribution.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_REDISTRIBUTE_HPP
#endif

#include "detail/same_mapping.hpp"
#include "../core/combine.hpp"
#include "../core/error.hpp"
#include "detail/assemble.hpp"
#include "detail/route.hpp"
#include "dist_matrix.hpp"
#include "local_triplets.hpp"

#include <Kokkos_Core.hpp>

#include <vector>

namespace tessera {

/// Number of entries in each local row of this rank (not collective).
template <class T, class Policy>
[[nodiscard]] std::vector<offset_type> local_row_counts(const dist_matrix<T, Policy>& a) {
  const typename Policy::execution_space space{};
  const auto coo = Policy::storage_type::to_coo(space, a.local());
  space.fence();
  auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, coo.row_idx);
  std::vector<offset_type> counts(static_cast<std::size_t>(a.local_rows()), 0);
  for (std::size_t k = 0; k < rows.extent(0); ++k) ++counts[static_cast<std::size_t>(rows(k))];
  return counts;
}

/// The same matrix under another policy and mapping (collective; traffic under the scope
/// "redistribute"): any distribution to any other (row_block, block_cyclic_2d,
/// replicated_columns, a user's), any storage to any other, in one personalised exchange
/// through A's backend. Each entry moves at most once (to every replica of a replicated target;
/// only A's primary copies are sent).
/// @code
/// using Grid = tessera::policy<tessera::block_cyclic_2d, tessera::csr, tessera::mpi_rma>;
/// auto G = tessera::redistribute<Grid>(A, Grid::distribution_type{.grid = tessera::process_grid{2, 2}});
/// @endcode
template <matrix_policy Target, class T, class Policy>
[[nodiscard]] dist_matrix<T, Target> redistribute(const dist_matrix<T, Policy>& a,
                                                  const typename Target::mapping_type& target) {
  static_assert(!tile_storage<typename Policy::storage_type> && !tile_storage<typename Target::storage_type>,
                "tessera::redistribute works on element storages (csr, csc, coo, a user's); a tile-stored matrix goes "
                "through to_elements<Policy>(A) first, or to_tiles<Policy>(A, mapping) to make one "
                "(matrix/convert_tiles.hpp)");
  const communicator& comm = a.comm();
  const stats_scope scope(comm, "redistribute");
  // The target checked and compared over the ranks in one agreement (a split that differs on one
  // rank would send entries where nobody expects them).
  detail::agree_checks_and_mapping(comm, target, "redistribute: the target mapping", detail::mapping_detail::split, [&] {
    TESSERA_REQUIRE(target.global_rows() == a.num_rows() && target.global_cols() == a.num_cols(), dimension_mismatch,
                    "redistribute: the target mapping is {} x {} but the matrix is {} x {}", target.global_rows(),
                    target.global_cols(), a.num_rows(), a.num_cols());
    TESSERA_REQUIRE(target.num_ranks() == comm.size(), dimension_mismatch,
                    "redistribute: the target mapping is for {} ranks but the communicator has {}", target.num_ranks(),
                    comm.size());
  });
  const auto mine = comm.collectively([&] { return local_triplets(a); });
  const typename Policy::backend_type backend{};
  const auto owned = detail::route_to_owners<T>(comm, backend, target, std::span<const global_index>(mine.rows),
                                                std::span<const global_index>(mine.cols), std::span<const T>(mine.values));
  // Entries are already distinct, so no combining happens.
  return detail::assemble_owned<T, Target>(comm, target, owned, combine::any{});
}

/// The same matrix under another policy, on the mapping its distribution makes for A's shape
/// (collective; e.g. `redistribute<policy<row_block, csr, B>>(G)` brings a 2-D matrix back to rows).
template <matrix_policy Target, class T, class Policy>
[[nodiscard]] dist_matrix<T, Target> redistribute(const dist_matrix<T, Policy>& a,
                                                  const typename Target::distribution_type& distribution = {}) {
  const auto target = a.comm().collectively(
      [&] { return distribution.make_mapping(a.comm().size(), a.num_rows(), a.num_cols()); });
  return redistribute<Target>(a, target);
}

/// The same matrix on another mapping of its own distribution (collective; traffic under the
/// scope "redistribute"). Entries are routed straight to their new owners with the policy's
/// backend; each entry moves at most once.
template <class T, class Policy>
[[nodiscard]] dist_matrix<T, Policy> redistribute(const dist_matrix<T, Policy>& a,
                                                  const typename Policy::mapping_type& target) {
  return redistribute<Policy>(a, target);
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_REDISTRIBUTE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_REDISTRIBUTE_HPP
#endif
