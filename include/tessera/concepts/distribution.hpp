#pragma once
/// @file
/// The requirements of a distribution policy.
///
/// A distribution is a small tag type (it may carry options, e.g. how
/// row_block balances) with a nested `mapping`: a copyable object, like
/// mdspan's layout mapping, that answers who owns entry (i, j) and where it
/// lives locally. Mappings need no MPI, so they are tested on their own.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_DISTRIBUTION_HPP
#endif

#include "../comm/communicator.hpp"
#include "../core/index_types.hpp"
#include "../distribution/tiled_range.hpp"

#include <concepts>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

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

/// Capability "ranks own whole rows": every row lives, with all its columns, on one rank.
///
/// This is what the 1-D algorithms (spmm, spgemm, transpose, the element-wise
/// operations) and dist_dense need, and all they ask of a distribution: they
/// find a row through the mapping, never by assuming contiguous ranges, so a
/// row-cyclic or hashed distribution runs them as row_block does.
///  - `row_owner(i)`: the rank holding global row i;
///  - `local_row(i)`: row i's position among its owner's rows (to_local's row);
///  - `with_shape(rows, cols)`: the same distribution over another shape (the
///    result of A * B, A^T, or a dense block next to A). With `rows` unchanged
///    it must keep every row on the same rank at the same local position, so
///    C = A * B and Y = A * X are split exactly like A.
/// Global rows of local rows come from the general `to_global(rank, li, 0)`.
template <class M>
concept whole_row_mapping = distribution_mapping<M> &&
    requires(const M& m, global_index i, global_index rows, global_index cols) {
      { m.row_owner(i) } -> std::convertible_to<int>;
      { m.local_row(i) } -> std::same_as<global_index>;
      { m.with_shape(rows, cols) } -> std::same_as<M>;
    };

/// Capability "rows are contiguous ranges": rank r owns rows [row_begin(r), row_end(r)).
/// No operation needs it; it is what code that slices rows by range (a peer
/// library's input, a file reader) may ask for.
template <class M>
concept contiguous_row_mapping = whole_row_mapping<M> && requires(const M& m, int rank) {
  { m.row_begin(rank) } -> std::same_as<global_index>;
  { m.row_end(rank) } -> std::same_as<global_index>;
};

/// The old name of contiguous_row_mapping.
template <class M>
concept row_distribution_mapping = contiguous_row_mapping<M>;

/// Capability "a p x q process grid": tiles of both dimensions dealt over grid rows and columns
/// (block_cyclic_2d; block-sparse operations).
/// What the grid operations ask of a mapping's process grid (`grid()`): its p x q shape, its
/// size, a rank's grid row and column, and equality (operands must share one grid).
template <class G>
concept process_grid_like = std::equality_comparable<G> && requires(const G& g, int rank) {
  { g.p } -> std::convertible_to<int>;
  { g.q } -> std::convertible_to<int>;
  { g.size() } -> std::convertible_to<int>;
  { g.row_of(rank) } -> std::convertible_to<int>;
  { g.col_of(rank) } -> std::convertible_to<int>;
};

template <class M>
concept grid_mapping = distribution_mapping<M> && requires(const M& m, std::size_t ti, std::size_t tj, int rank) {
  { m.grid() } -> process_grid_like;
  m.row_tiles();
  m.col_tiles();
  { m.tile_owner(ti, tj) } -> std::convertible_to<int>;
  { m.holds(rank, ti, tj) } -> std::convertible_to<bool>;
};

/// Capability "tiles dealt over a grid, one rank each": every tile row lives on one grid row and
/// every tile column on one grid column (tile_row_owner, tile_col_owner, column_owners), and the
/// same distribution re-tiles to another shape on the same grid with `with_tiles(rows, cols,
/// column_owners)`. The A and C operands of bsgemm and all three of summa need it: C is made
/// as A's distribution with A's rows and B's columns.
template <class M>
concept tile_grid_mapping = grid_mapping<M> &&
    requires(const M& m, std::size_t t, const tiled_range& range, const std::vector<int>& owners) {
      { m.tile_row_owner(t) } -> std::convertible_to<int>;
      { m.tile_col_owner(t) } -> std::convertible_to<int>;
      { m.column_owners() } -> std::convertible_to<const std::vector<int>&>;
      { m.with_tiles(range, range, owners) } -> std::same_as<M>;
    };

/// Capability "tile columns replicated over grid rows": each tile column on one grid column, every
/// rank of that grid column holding all of it (replicated_columns). bsgemm's stationary B needs
/// it: B never moves, so its columns fix where C's columns are computed.
template <class M>
concept replicated_column_mapping = grid_mapping<M> && requires(const M& m, std::size_t t, global_index i) {
  { m.tile_col_owner(t) } -> std::convertible_to<int>;
  { m.column_owners() } -> std::convertible_to<const std::vector<int>&>;
  { m.replicas(i, i) } -> std::convertible_to<std::vector<int>>;
};

/// Capability "a grid that re-tiles": a grid mapping that also makes the mapping of a product
/// (`with_tiles(rows, cols, column_owners)`: the same grid over A's rows and B's columns) and of a
/// transpose (`transposed()`). This is all the 2-D element-sparse algorithms ask of a distribution
/// whose ranks do not own whole rows (spgemm's layered SUMMA, spmm's 2-D product, transpose):
/// they find every entry's rank through the general mapping and the tilings, so block_cyclic_2d,
/// replicated_columns and a user's grid distribution run them alike.
template <class M>
concept retiling_grid_mapping = grid_mapping<M> &&
    requires(const M& m, const tiled_range& range, const std::vector<int>& owners) {
      { m.row_tiles() } -> std::convertible_to<const tiled_range&>;
      { m.col_tiles() } -> std::convertible_to<const tiled_range&>;
      { m.column_owners() } -> std::convertible_to<const std::vector<int>&>;
      { m.with_tiles(range, range, owners) } -> std::same_as<M>;
      { m.transposed() } -> std::same_as<M>;
    };

/// Capability "replicas": entries kept on several ranks, `owner` being the copy written.
template <class M>
concept replicated_mapping = distribution_mapping<M> && requires(const M& m, global_index i, global_index j) {
  { m.replicas(i, j) } -> std::convertible_to<std::vector<int>>;
};

/// True when two whole-row mappings put every row on the same rank at the same local position
/// (their column counts may differ): Y = A * X needs Y split like A, C += A .* B needs B split like A.
template <whole_row_mapping M>
[[nodiscard]] bool same_rows(const M& a, const M& b) {
  return a.global_rows() == b.global_rows() && a.with_shape(a.global_rows(), 0) == b.with_shape(b.global_rows(), 0);
}

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

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_DISTRIBUTION_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CONCEPTS_DISTRIBUTION_HPP
#endif
