#pragma once
/// @file
/// dist_matrix<T, Policy>: a sparse matrix distributed over the ranks of a communicator.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_DIST_MATRIX_HPP
#endif

#include "../comm/communicator.hpp"
#include "../core/error.hpp"
#include "../core/index_types.hpp"
#include "../core/typed_cache.hpp"
#include "../policy.hpp"
#include "../storage/tiles.hpp"
#include "detail/adopted_block_checks.hpp"
#include "detail/same_mapping.hpp"

#include <Kokkos_Core.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <climits>
#include <type_traits>
#include <utility>

namespace tessera {

namespace detail {
/// Tag of dist_matrix's constructor for blocks tessera assembled itself (checked by construction).
struct assembled_block_t {
  explicit assembled_block_t() = default;
};
inline constexpr assembled_block_t assembled_block{};
}  // namespace detail

/// Value types a dist_matrix may hold.
template <class T>
concept matrix_value = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

/// A distributed sparse matrix.
///
/// Each rank holds the entries its distribution assigns to it in a local block
/// of the policy's storage format, on Views in the policy's memory space. The
/// block's column indices are compressed: local column c is global column
/// `col_map()(c)`, and col_map is sorted, so column order is preserved. Local
/// rows map to global rows through the distribution's mapping.
///
/// Build one with build_from_triplets, read_matrix_market or a generator.
///
/// With tile storage (`policy<block_cyclic_2d, tiles, Backend>`) it is the
/// block-sparse matrix of bsgemm and summa: the local block holds the
/// replicated shape and this rank's dense tiles (storage/tiles.hpp), there is
/// no column map, and `shape()`, `row_tiles()`, `col_tiles()`, `local_tile(k)`
/// and `density()` describe it. Make one with make_block_sparse or to_tiles.
template <matrix_value T, matrix_policy Policy>
class dist_matrix {
 public:
  using value_type = T;
  using policy_type = Policy;
  using distribution_type = typename Policy::distribution_type;
  using storage_type = typename Policy::storage_type;
  using backend_type = typename Policy::backend_type;
  using execution_space = typename Policy::execution_space;
  using memory_space = typename Policy::memory_space;
  using device_type = typename Policy::device_type;
  using mapping_type = typename Policy::mapping_type;
  using local_block_type = typename storage_type::template block<T, memory_space>;
  using col_map_type = Kokkos::View<global_index*, memory_space>;
  /// Whether the local block is tiles (bsgemm, summa) rather than element entries (spmm, spgemm, ...).
  static constexpr bool tiled = tile_storage<storage_type>;

  /// Adopt a local block (collective: computes the global nonzero count).
  ///
  /// Every rank checks what it adopts (shape against the distribution, row offsets ascending,
  /// column positions inside the column map, the column map's global columns distinct, ascending
  /// and inside the matrix) and all ranks throw invalid_argument or dimension_mismatch together
  /// if any rank's block is wrong: O(nnz) kernels on the block's execution space, once.
  ///
  /// @param local    this rank's entries; column indices are positions in `col_map`
  /// @param col_map  sorted, distinct global columns of this rank's entries
  dist_matrix(communicator comm, mapping_type mapping, local_block_type local, col_map_type col_map)
    requires(!tiled)
      : comm_(std::move(comm)), mapping_(std::move(mapping)), local_(std::move(local)), col_map_(std::move(col_map)) {
    adopt(std::nullopt);
  }

  /// Adopt a local block whose global nonzero count is already known (collective: checks the
  /// block as the constructor above does, and that `global_nnz` is the sum of the ranks' entries).
  dist_matrix(communicator comm, mapping_type mapping, local_block_type local, col_map_type col_map, offset_type global_nnz)
    requires(!tiled)
      : comm_(std::move(comm)), mapping_(std::move(mapping)), local_(std::move(local)), col_map_(std::move(col_map)) {
    adopt(global_nnz);
  }

  /// Adopt a block that tessera's own operations assembled (not checked again; the global
  /// nonzero count is the sum of the ranks' entries when `global_nnz` is negative: collective then).
  dist_matrix(detail::assembled_block_t, communicator comm, mapping_type mapping, local_block_type local,
              col_map_type col_map, offset_type global_nnz = -1)
    requires(!tiled)
      : comm_(std::move(comm)),
        mapping_(std::move(mapping)),
        local_(std::move(local)),
        col_map_(std::move(col_map)),
        global_nnz_(global_nnz) {
    if (global_nnz_ < 0) global_nnz_ = comm_.sum(primary_nnz());
  }

  /// `structure`'s matrix with other values (tessera's element-wise maps): the same mapping,
  /// column map and entries, and the same plans, since plans depend on the structure only (not
  /// collective; `local` must have structure's row and column arrays).
  dist_matrix(detail::assembled_block_t, const dist_matrix& structure, local_block_type local)
    requires(!tiled)
      : comm_(structure.comm_),
        mapping_(structure.mapping_),
        local_(std::move(local)),
        col_map_(structure.col_map_),
        global_nnz_(structure.global_nnz_),
        plans_(structure.plans_) {}

  /// Adopt a shape and this rank's tiles (tile storage; not collective: the shape in `local` is
  /// the same on every rank, and gives the global element count).
  dist_matrix(communicator comm, mapping_type mapping, local_block_type local)
    requires tiled
      : comm_(std::move(comm)), mapping_(std::move(mapping)), local_(std::move(local)) {
    for (std::size_t k = 0; k < local_.shape.num_nonzero_tiles(); ++k)
      global_nnz_ += static_cast<offset_type>(local_.shape.tile_elements(k));
    check_tiles();
  }

  /// Copies share the local Views, the column map and the plan cache (handles, not data). A move
  /// is a copy of those handles: the moved-from matrix stays the matrix it was, so using it after
  /// std::move is valid (as a std type's "valid but unspecified" state), never a null dereference.
  dist_matrix(const dist_matrix&) = default;
  dist_matrix(dist_matrix&& other) noexcept : dist_matrix(static_cast<const dist_matrix&>(other)) {}
  dist_matrix& operator=(const dist_matrix&) = default;
  dist_matrix& operator=(dist_matrix&& other) noexcept { return *this = static_cast<const dist_matrix&>(other); }
  ~dist_matrix() = default;

  [[nodiscard]] global_index num_rows() const noexcept { return mapping_.global_rows(); }
  [[nodiscard]] global_index num_cols() const noexcept { return mapping_.global_cols(); }
  [[nodiscard]] offset_type global_nnz() const noexcept { return global_nnz_; }
  /// Entries in this rank's block (replicas included under a replicated distribution).
  [[nodiscard]] offset_type local_nnz() const noexcept { return local_.nnz(); }
  /// Rows of the local block (with tiles: of the whole tiling, which the local tiles address).
  [[nodiscard]] local_index local_rows() const noexcept { return local_.num_rows(); }
  /// Number of distinct global columns this rank's entries touch (with tiles: of the tiling).
  [[nodiscard]] local_index local_cols() const noexcept { return local_.num_cols(); }

  [[nodiscard]] const communicator& comm() const noexcept { return comm_; }
  [[nodiscard]] const mapping_type& mapping() const noexcept { return mapping_; }
  [[nodiscard]] const local_block_type& local() const noexcept { return local_; }
  /// The local tiles, to refine their values in place (tile storage): write into `values`, or
  /// give it another View of the same length; the shape and the tiles' places stay.
  [[nodiscard]] local_block_type& local() noexcept
    requires tiled
  {
    return local_;
  }
  /// Local column -> global column, on the policy's memory space (empty with tiles).
  [[nodiscard]] const col_map_type& col_map() const noexcept { return col_map_; }

  /// Plans of operations on this matrix's structure (SpMM's halo plan, ...), kept by type and
  /// shared by copies, so repeated products reuse their inspector.
  [[nodiscard]] typed_cache& plan_cache() const { return *plans_; }

  /// The nonzero tiles and their norms, the same on every rank (tile storage).
  [[nodiscard]] const block_sparse_shape& shape() const noexcept
    requires tiled
  {
    return local_.shape;
  }
  [[nodiscard]] const tiled_range& row_tiles() const noexcept
    requires tiled
  {
    return local_.shape.row_tiles();
  }
  [[nodiscard]] const tiled_range& col_tiles() const noexcept
    requires tiled
  {
    return local_.shape.col_tiles();
  }
  /// Fraction of elements in nonzero tiles (tile storage).
  [[nodiscard]] double density() const noexcept
    requires tiled
  {
    return local_.shape.density();
  }
  /// Local tile k as a column-major m x n View, in the memory space (tile storage).
  [[nodiscard]] auto local_tile(std::size_t k) const
    requires tiled
  {
    const auto& t = local_.shape.tiles()[local_.index[k]];
    return local_.tile(k, static_cast<std::size_t>(row_tiles().size(static_cast<std::size_t>(t.row))),
                       static_cast<std::size_t>(col_tiles().size(static_cast<std::size_t>(t.col))));
  }

  /// Global index of local row `li` of this rank.
  [[nodiscard]] global_index global_row(global_index li) const noexcept {
    return mapping_.to_global(comm_.rank(), li, 0).row;
  }

 private:
  void check_tiles() const {
    TESSERA_REQUIRE(mapping_.grid().size() == comm_.size(), dimension_mismatch,
                    "dist_matrix: the {} x {} grid needs {} ranks but the communicator has {}", mapping_.grid().p,
                    mapping_.grid().q, mapping_.grid().size(), comm_.size());
    TESSERA_REQUIRE(mapping_.row_tiles() == local_.shape.row_tiles() && mapping_.col_tiles() == local_.shape.col_tiles(),
                    dimension_mismatch,
                    "dist_matrix: the shape is tiled {} x {} but the distribution's tilings are {} x {}",
                    local_.shape.row_tiles().num_tiles(), local_.shape.col_tiles().num_tiles(),
                    mapping_.row_tiles().num_tiles(), mapping_.col_tiles().num_tiles());
  }

  /// The entries this rank is the owner of: all of its block, except under a replicated
  /// distribution, whose replicas are not counted again.
  [[nodiscard]] offset_type primary_nnz() const {
    if constexpr (replicated_mapping<mapping_type>) {
      const execution_space space{};
      const auto coo = storage_type::to_coo(space, local_);
      space.fence();
      const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, coo.row_idx);
      const auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, coo.col_idx);
      const auto map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, col_map_);
      const int me = comm_.rank();
      offset_type mine = 0;
      for (std::size_t k = 0; k < rows.extent(0); ++k) {
        const global_index i = mapping_.to_global(me, rows(k), 0).row;
        if (mapping_.owner(i, map(static_cast<std::size_t>(cols(k)))) == me) ++mine;
      }
      return mine;
    } else {
      return local_.nnz();
    }
  }

  // The adopting constructors: the block checked and the mapping compared (one agreement), then
  // the global count summed and, when the caller gave one, compared with it on every rank.
  void adopt(std::optional<offset_type> given) {
    detail::agree_checks_and_mapping(comm_, mapping_, "dist_matrix", detail::mapping_detail::split,
                                     [&] { check_adopted(); });
    global_nnz_ = comm_.sum(primary_nnz());
    if (given)
      comm_.collectively([&] {  // each rank passed its own count: agreed, never thrown on some ranks only
        TESSERA_REQUIRE(*given == global_nnz_, invalid_argument,
                        "dist_matrix: global_nnz is {} but the ranks' blocks hold {} entries", *given, global_nnz_);
      });
  }

  void check_adopted() const {
    check_local_shape();
    detail::check_adopted_block<execution_space>(local_, col_map_, mapping_.global_cols());
  }

  void check_local_shape() const {
    const local_extents ext = mapping_.extents(comm_.rank());
    TESSERA_REQUIRE(mapping_.num_ranks() == comm_.size(), dimension_mismatch,
                    "dist_matrix: the mapping is for {} ranks but the communicator has {}", mapping_.num_ranks(),
                    comm_.size());
    TESSERA_REQUIRE(ext.rows == local_.num_rows(), dimension_mismatch,
                    "dist_matrix: the local block has {} rows but the distribution gives this rank {}",
                    local_.num_rows(), ext.rows);
    TESSERA_REQUIRE(static_cast<offset_type>(col_map_.extent(0)) == local_.num_cols(), dimension_mismatch,
                    "dist_matrix: the local block has {} columns but the column map has {}", local_.num_cols(),
                    col_map_.extent(0));
  }

  communicator comm_;
  mapping_type mapping_;
  local_block_type local_;
  col_map_type col_map_;
  offset_type global_nnz_ = 0;
  std::shared_ptr<typed_cache> plans_ = std::make_shared<typed_cache>();
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_DIST_MATRIX_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_DIST_MATRIX_HPP
#endif
