#pragma once
/// @file
/// The requirements of a distribution policy.
///
/// A distribution is a small tag type (it may carry options, e.g. how
/// row_block balances) with a nested `mapping`: a copyable object, like
/// mdspan's layout mapping, that answers who owns entry (i, j) and where it
/// lives locally. Mappings need no MPI, so they are tested on their own.

#include "../../comm/communicator.hpp"
#include "../index_types.hpp"

#include <concepts>
#include <optional>
#include <span>
#include <string_view>

namespace tessera {

/// What a distribution's mapping must answer.
template <class M>
concept distribution_mapping = std::copyable<M> && std::equality_comparable<M> &&
    requires(const M& m, global_index i, global_index j, int rank) {
      { m.num_ranks() } -> std::convertible_to<int>;
      { m.global_rows() } -> std::same_as<global_index>;
      { m.global_cols() } -> std::same_as<global_index>;
      { m.owner(i, j) } -> std::convertible_to<int>;          ///< the rank that stores (i, j)
      { m.to_local(i, j) } -> std::same_as<local_coordinate>;  ///< owner and local position
      { m.to_global(rank, i, j) } -> std::same_as<global_coordinate>;
      { m.extents(rank) } -> std::same_as<local_extents>;
    };

/// A mapping whose ranks own whole rows (row_block; needed by dist_dense and by 1-D algorithms).
template <class M>
concept row_distribution_mapping = distribution_mapping<M> && requires(const M& m, global_index i, int rank) {
  { m.row_owner(i) } -> std::convertible_to<int>;
  { m.row_begin(rank) } -> std::same_as<global_index>;
  { m.row_end(rank) } -> std::same_as<global_index>;
};

/// A distribution policy: a tag with a mapping type and a factory for the default mapping.
template <class D>
concept distribution_policy = std::default_initializable<D> && std::copyable<D> &&
    requires { typename D::mapping; } && distribution_mapping<typename D::mapping> &&
    requires(const D& d, int num_ranks, global_index rows, global_index cols) {
      { D::name() } -> std::convertible_to<std::string_view>;
      { d.make_mapping(num_ranks, rows, cols) } -> std::same_as<typename D::mapping>;
    };

/// Optional: a distribution that can refine its mapping once it sees the data
/// (row_block balancing by nonzeros). `rebalance` is collective and returns
/// the better mapping, or nothing if the current one stays.
template <class D>
concept rebalancing_distribution = distribution_policy<D> &&
    requires(const D& d, const communicator& comm, const typename D::mapping& m, std::span<const offset_type> local_row_nnz) {
      { d.rebalance(comm, m, local_row_nnz) } -> std::same_as<std::optional<typename D::mapping>>;
    };

}  // namespace tessera
