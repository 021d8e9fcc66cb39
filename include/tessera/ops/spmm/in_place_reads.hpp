#pragma once
/// @file
/// spmm_in_place_reads: what spmm_plan keeps to read X where it lies, in node-shared memory
/// (share_on_node): per column of A, X's owner and its row there; per entry, its row in the node's
/// one array of X; all of A's rows as one list and the kernel's state for it.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/spmm/in_place_reads.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../comm/node_shared_array.hpp"
#include "../../core/index_types.hpp"
#include "../../kernels/spmm_balanced.hpp"
#include "../../matrix/to_view.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::detail {

/// Host memory only (node-shared memory is the host's): spmm_plan has one where it reads HostSpace.
template <class T, class MemorySpace>
class spmm_in_place_reads {
 public:
  /// At inspection, column by column of A's column map: the rank that owns its row of X, and the row there.
  void add_column(int owner, local_index row) {
    column_owner_.push_back(owner);
    column_row_.push_back(row);
  }

  /// The per-entry rows of `shared`'s node array for A's columns `col_idx` (X of width k), made on
  /// the first product over such an X and again only when a node's layout differs (another node
  /// emulation): a second X of the same layout reuses them. Rows `0 .. rows - 1` as one list.
  void prepare(const Kokkos::View<const local_index*, MemorySpace>& col_idx, local_index rows,
               const node_shared_array<T>& shared, std::size_t k) {
    if (shared.id() == made_for_ && source_.extent(0) == col_idx.extent(0)) return;
    const int ranks = shared.comm().size();
    std::vector<std::int64_t> first_row(static_cast<std::size_t>(ranks), -1);
    for (int r = 0; r < ranks; ++r)
      if (shared.on_node(r)) first_row[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(shared.offset_on_node(r) / k);
    made_for_ = shared.id();
    if (source_.extent(0) == col_idx.extent(0) && first_row == first_row_) return;
    Kokkos::View<local_index*, MemorySpace> source(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::in_place_source"),
                                                   col_idx.extent(0));
    for (std::size_t e = 0; e < source.extent(0); ++e) {
      const auto c = static_cast<std::size_t>(col_idx(e));
      source(e) = static_cast<local_index>(first_row[static_cast<std::size_t>(column_owner_[c])] + column_row_[c]);
    }
    source_ = source;
    first_row_ = std::move(first_row);
    state_ = {};  // the row groups and pieces follow the sources
    if (all_rows_.extent(0) != static_cast<std::size_t>(rows)) {
      std::vector<local_index> every(static_cast<std::size_t>(rows));
      for (local_index r = 0; r < rows; ++r) every[static_cast<std::size_t>(r)] = r;
      all_rows_ = to_view<local_index, MemorySpace>(every, "tessera::spmm::all_rows");
    }
  }

  [[nodiscard]] const Kokkos::View<const local_index*, MemorySpace>& source() const noexcept { return source_; }
  [[nodiscard]] const Kokkos::View<const local_index*, MemorySpace>& all_rows() const noexcept { return all_rows_; }
  [[nodiscard]] kernels::spmm_rows_state<T, MemorySpace>& state() noexcept { return state_; }

 private:
  std::vector<int> column_owner_;
  std::vector<local_index> column_row_;
  Kokkos::View<const local_index*, MemorySpace> source_;
  std::uint64_t made_for_ = 0;         ///< the node-shared array the sources were last checked against
  std::vector<std::int64_t> first_row_;  ///< per rank, its first row in the node array (-1: off the node)
  Kokkos::View<const local_index*, MemorySpace> all_rows_;
  kernels::spmm_rows_state<T, MemorySpace> state_;
};

}  // namespace tessera::detail
