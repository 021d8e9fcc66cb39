#pragma once
/// @file
/// Distributed SpGEMM C = A * B (optionally C<M> = A * B) over row-block CSR,
/// any semiring, under an optional memory budget.
///
/// The 1-D algorithm of the SGA paper, improved: a rank fetches only the rows
/// of B its local A references (not whole blocks), one-sided, per run of
/// consecutive rows of an owner: one get for their row pointers, then one for
/// their columns and one for their values. The node-local product is
/// expand-sort-compress on Kokkos (kernels/spgemm_esc.hpp), row batches sized
/// so their products fit the budget. C is split like A's rows.

#include "../comm/communicator.hpp"
#include "../comm/request.hpp"
#include "../comm/segment.hpp"
#include "../core/error.hpp"
#include "../core/policy.hpp"
#include "../kernels/sort_rows.hpp"
#include "../kernels/spgemm_esc.hpp"
#include "../matrix/detail/compress_columns.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../storage/csr.hpp"
#include "detail/device_copy.hpp"
#include "semiring.hpp"

#include <Kokkos_Core.hpp>
#include <KokkosKernels_Handle.hpp>
#include <KokkosKernels_SparseUtils.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
// GCC reports -Wmaybe-uninitialized inside Kokkos-Kernels' compression functor at -O3 (float instantiations).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <KokkosSparse_spgemm.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace tessera {

/// Which node-local kernel multiplies.
enum class spgemm_kernel {
  automatic,       ///< Kokkos-Kernels for plain plus-times, expand-sort-compress otherwise
  kokkos_kernels,  ///< KokkosSparse::spgemm_symbolic/numeric (plus-times only; no mask, no budget)
  esc,             ///< tessera's expand-sort-compress: any semiring, masks, memory budgets
};

/// Options of spgemm.
template <class Semiring = semirings::plus_times>
struct spgemm_options {
  Semiring ring{};
  spgemm_kernel kernel = spgemm_kernel::automatic;
  /// Bytes the products of one batch of rows may take (0: no limit). Rows are
  /// multiplied in batches whose expanded products fit; a single row larger
  /// than the budget still runs, alone.
  std::size_t memory_budget_bytes = 0;
  /// If set, receives the number of row batches this rank used.
  std::size_t* batches = nullptr;
};

namespace detail {

/// B's rows that the local A references, fetched one-sided; row c is A's local column c.
template <class T>
struct fetched_rows {
  std::vector<offset_type> ptr;
  std::vector<global_index> cols;
  std::vector<T> values;
};

template <matrix_value T, matrix_policy Policy>
fetched_rows<T> fetch_referenced_rows(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b) {
  const auto& comm = a.comm();
  typename Policy::backend_type::context ctx(comm, typename Policy::backend_type::options{});

  // Expose B's local rows: row pointers, global columns, values.
  const auto b_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().row_ptr);
  const auto b_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().col_idx);
  const auto b_val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().values);
  const auto b_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.col_map());
  const auto b_rows = static_cast<std::size_t>(b.local_rows());
  const auto b_nnz = static_cast<std::size_t>(b.local_nnz());
  auto ptr_seg = ctx.template allocate<std::int64_t>(b_rows + 1);
  auto col_seg = ctx.template allocate<std::int64_t>(b_nnz);
  auto val_seg = ctx.template allocate<T>(b_nnz);
  for (std::size_t r = 0; r <= b_rows; ++r) ptr_seg.local()[r] = b_ptr(r);
  for (std::size_t e = 0; e < b_nnz; ++e) {
    col_seg.local()[e] = b_map(static_cast<std::size_t>(b_col(e)));
    val_seg.local()[e] = b_val(e);
  }
  ctx.barrier();

  // Which row of which owner each local column of A needs; runs of consecutive rows per owner.
  struct run {
    int owner;
    std::size_t first_row, count, first_column;
  };
  const auto a_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.col_map());
  const auto columns = static_cast<std::size_t>(a_map.extent(0));
  std::vector<run> runs;
  for (std::size_t c = 0; c < columns; ++c) {
    const int owner = b.mapping().row_owner(a_map(c));
    const auto row = static_cast<std::size_t>(a_map(c) - b.mapping().row_begin(owner));
    if (!runs.empty() && runs.back().owner == owner && runs.back().first_row + runs.back().count == row)
      ++runs.back().count;
    else
      runs.push_back({owner, row, 1, c});
  }

  // Round 1: the row pointers of every run (count + 1 values), one get each.
  std::vector<std::vector<std::int64_t>> run_ptr(runs.size());
  std::vector<request> pending;
  // This rank's own rows are read in place, not through its window (half or more of the rows on
  // banded inputs such as the Laplacian).
  const int me = comm.rank();
  for (std::size_t k = 0; k < runs.size(); ++k) {
    run_ptr[k].resize(runs[k].count + 1);
    if (runs[k].owner == me) {
      for (std::size_t i = 0; i <= runs[k].count; ++i) run_ptr[k][i] = b_ptr(runs[k].first_row + i);
      continue;
    }
    pending.push_back(ctx.get_nb(ptr_seg, runs[k].owner, runs[k].first_row, std::span<std::int64_t>(run_ptr[k])));
  }
  wait_all(pending);
  pending.clear();

  fetched_rows<T> out;
  out.ptr.assign(columns + 1, 0);
  for (std::size_t k = 0; k < runs.size(); ++k)
    for (std::size_t i = 0; i < runs[k].count; ++i)
      out.ptr[runs[k].first_column + i + 1] = run_ptr[k][i + 1] - run_ptr[k][i];
  for (std::size_t c = 0; c < columns; ++c) out.ptr[c + 1] += out.ptr[c];
  out.cols.resize(static_cast<std::size_t>(out.ptr.back()));
  out.values.resize(out.cols.size());

  // Round 2: each run's entries are contiguous at the owner: one get for columns, one for values.
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto at = static_cast<std::size_t>(out.ptr[runs[k].first_column]);
    const auto from = static_cast<std::size_t>(run_ptr[k].front());
    const auto length = static_cast<std::size_t>(run_ptr[k].back() - run_ptr[k].front());
    if (length == 0) continue;
    if (runs[k].owner == me) {
      for (std::size_t e = 0; e < length; ++e) {
        out.cols[at + e] = b_map(static_cast<std::size_t>(b_col(from + e)));
        out.values[at + e] = b_val(from + e);
      }
      continue;
    }
    pending.push_back(ctx.get_nb(col_seg, runs[k].owner, from, std::span<std::int64_t>(out.cols.data() + at, length)));
    pending.push_back(ctx.get_nb(val_seg, runs[k].owner, from, std::span<T>(out.values.data() + at, length)));
  }
  wait_all(pending);
  ctx.barrier();  // nobody reads B's segments any more: they may go
  return out;
}

/// Plus-times through Kokkos-Kernels: B's fetched rows get compressed local
/// columns, KokkosSparse multiplies, rows are sorted. Returns C's local block and column map.
template <matrix_value T, matrix_policy Policy>
std::pair<typename dist_matrix<T, Policy>::local_block_type, Kokkos::View<global_index*, typename Policy::memory_space>>
multiply_kokkos_kernels(const dist_matrix<T, Policy>& a, const fetched_rows<T>& fetched, global_index b_cols) {
  using mem = typename Policy::memory_space;
  using exec = typename Policy::execution_space;
  using crs = KokkosSparse::CrsMatrix<T, local_index, typename Policy::device_type, void, offset_type>;
  const auto [used, b_local] = compress_columns(fetched.cols, b_cols);
  const auto& block = a.local();
  const crs a_crs("tessera::spgemm::A", block.rows, block.cols, block.nnz(), block.values, block.row_ptr, block.col_idx);
  const crs b_crs("tessera::spgemm::B", block.cols, static_cast<local_index>(used.size()),
                  static_cast<offset_type>(fetched.values.size()), to_view<T, mem>(fetched.values, "tessera::spgemm::b_val"),
                  to_view<offset_type, mem>(fetched.ptr, "tessera::spgemm::b_ptr"),
                  to_view<local_index, mem>(b_local, "tessera::spgemm::b_col"));
  KokkosKernels::Experimental::KokkosKernelsHandle<offset_type, local_index, T, exec, mem, mem> handle;
  handle.create_spgemm_handle(KokkosSparse::SPGEMM_KK);
  crs c;
  KokkosSparse::spgemm_symbolic(handle, a_crs, false, b_crs, false, c);
  KokkosSparse::spgemm_numeric(handle, a_crs, false, b_crs, false, c);
  // Kokkos-Kernels leaves columns unsorted within rows. Its sort_crs_matrix took a third of the time
  // of a Laplacian product (and allocates); tessera's in-place row sort does not.
  kernels::sort_rows(exec{}, c.graph.row_map, c.graph.entries, c.values);
  typename dist_matrix<T, Policy>::local_block_type out;
  out.rows = block.rows;
  out.cols = static_cast<local_index>(used.size());
  out.row_ptr = decltype(out.row_ptr)("tessera::spgemm::row_ptr", c.graph.row_map.extent(0));
  Kokkos::deep_copy(out.row_ptr, c.graph.row_map);
  out.col_idx = c.graph.entries;
  out.values = c.values;
  return {out, to_view<global_index, mem>(used, "tessera::spgemm::col_map")};
}

template <matrix_value T, matrix_policy Policy, class Semiring>
dist_matrix<T, Policy> multiply(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                const dist_matrix<T, Policy>* mask, const spgemm_options<Semiring>& options) {
  static_assert(std::same_as<typename Policy::storage_type, csr>,
                "tessera::spgemm: A and B must use csr storage; convert<tessera::csr>() first");
  static_assert(semiring<Semiring, T>, "tessera::spgemm: the semiring needs add(a, b) and multiply(a, b) on T");
  using mem = typename Policy::memory_space;
  using exec = typename Policy::execution_space;
  const auto& comm = a.comm();
  comm.collectively([&] {
    TESSERA_REQUIRE(a.num_cols() == b.num_rows(), dimension_mismatch, "spgemm: A is {} x {} but B is {} x {}",
                    a.num_rows(), a.num_cols(), b.num_rows(), b.num_cols());
    if (mask != nullptr) {
      TESSERA_REQUIRE(mask->num_rows() == a.num_rows() && mask->num_cols() == b.num_cols(), dimension_mismatch,
                      "spgemm: the mask is {} x {} but A * B is {} x {}", mask->num_rows(), mask->num_cols(),
                      a.num_rows(), b.num_cols());
      TESSERA_REQUIRE(mask->mapping().row_offsets() == a.mapping().row_offsets(), dimension_mismatch,
                      "spgemm: the mask must split its rows like A; redistribute it first");
    }
  });
  const stats_scope scope(comm, "spgemm");
  const auto fetched = fetch_referenced_rows(a, b);
  const bool plain = std::is_same_v<Semiring, semirings::plus_times> && mask == nullptr && options.memory_budget_bytes == 0;
  comm.collectively([&] {
    TESSERA_REQUIRE(options.kernel != spgemm_kernel::kokkos_kernels || plain, invalid_argument,
                    "spgemm: the Kokkos-Kernels kernel does plus-times without mask or memory budget only");
  });
  if constexpr (std::is_same_v<Semiring, semirings::plus_times>) {
    if (plain && options.kernel != spgemm_kernel::esc) {
      auto [block, col_map] = multiply_kokkos_kernels(a, fetched, b.num_cols());
      if (options.batches != nullptr) *options.batches = 1;
      return dist_matrix<T, Policy>(comm, typename Policy::mapping_type(a.mapping().row_offsets(), b.num_cols()), block,
                                    col_map);
    }
  }

  kernels::esc_operands<T, mem> op;
  op.a_ptr = a.local().row_ptr;
  op.a_col = a.local().col_idx;
  op.a_val = a.local().values;
  op.b_ptr = to_view<offset_type, mem>(fetched.ptr, "tessera::spgemm::b_ptr");
  op.b_col = to_view<global_index, mem>(fetched.cols, "tessera::spgemm::b_col");
  op.b_val = to_view<T, mem>(fetched.values, "tessera::spgemm::b_val");
  if (mask != nullptr) {
    const auto m_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, mask->col_map());
    const auto m_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, mask->local().col_idx);
    std::vector<global_index> global(m_col.extent(0));
    for (std::size_t e = 0; e < global.size(); ++e) global[e] = m_map(static_cast<std::size_t>(m_col(e)));
    op.mask_ptr = mask->local().row_ptr;
    op.mask_col = to_view<global_index, mem>(global, "tessera::spgemm::mask_col");
  }

  // Batches of rows whose expanded products fit the budget.
  const auto a_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.local().row_ptr);
  const auto a_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.local().col_idx);
  const local_index rows = a.local_rows();
  const std::size_t per_product = sizeof(global_index) + sizeof(T);
  std::vector<offset_type> counts;
  std::vector<global_index> cols;
  std::vector<T> values;
  counts.reserve(static_cast<std::size_t>(rows));
  std::size_t batches = 0;
  const exec space{};
  for (local_index first = 0; first < rows;) {
    local_index last = first;
    std::size_t bytes = 0;
    while (last < rows) {
      std::size_t products = 0;
      for (offset_type e = a_ptr(last); e < a_ptr(last + 1); ++e)
        products += static_cast<std::size_t>(fetched.ptr[static_cast<std::size_t>(a_col(e)) + 1] -
                                             fetched.ptr[static_cast<std::size_t>(a_col(e))]);
      if (last > first && options.memory_budget_bytes > 0 && bytes + products * per_product > options.memory_budget_bytes)
        break;
      bytes += products * per_product;
      ++last;
    }
    kernels::esc_rows<exec, T, mem, Semiring>(space, op, first, last, options.ring, counts, cols, values);
    ++batches;
    first = last;
  }
  if (options.batches != nullptr) *options.batches = batches;

  // C's local block: compress the global columns it uses.
  const auto [used, local_cols] = compress_columns(cols, b.num_cols());
  std::vector<offset_type> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) row_ptr[r + 1] = row_ptr[r] + counts[r];
  typename dist_matrix<T, Policy>::local_block_type block;
  block.rows = rows;
  block.cols = static_cast<local_index>(used.size());
  block.row_ptr = to_view<offset_type, mem>(row_ptr, "tessera::spgemm::row_ptr");
  block.col_idx = to_view<local_index, mem>(local_cols, "tessera::spgemm::col_idx");
  block.values = to_view<T, mem>(values, "tessera::spgemm::values");
  return dist_matrix<T, Policy>(comm, typename Policy::mapping_type(a.mapping().row_offsets(), b.num_cols()), block,
                                to_view<global_index, mem>(used, "tessera::spgemm::col_map"));
}

}  // namespace detail

/// C = A * B over a semiring (plus-times by default), split like A's rows (collective).
/// Traffic is counted under "spgemm".
template <matrix_value T, matrix_policy Policy, class Semiring = semirings::plus_times>
  requires row_distribution_mapping<typename Policy::mapping_type>
[[nodiscard]] dist_matrix<T, Policy> spgemm(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                            const spgemm_options<Semiring>& options = {}) {
  return detail::multiply(a, b, static_cast<const dist_matrix<T, Policy>*>(nullptr), options);
}

/// C<M> = A * B: only the entries where the mask M stores one (collective).
/// M is m x n and split like A's rows.
template <matrix_value T, matrix_policy Policy, class Semiring = semirings::plus_times>
  requires row_distribution_mapping<typename Policy::mapping_type>
[[nodiscard]] dist_matrix<T, Policy> spgemm_masked(const dist_matrix<T, Policy>& mask, const dist_matrix<T, Policy>& a,
                                                   const dist_matrix<T, Policy>& b,
                                                   const spgemm_options<Semiring>& options = {}) {
  return detail::multiply(a, b, &mask, options);
}

}  // namespace tessera
