#pragma once
/// @file
/// Distributed SpGEMM C = A * B (optionally C<M> = A * B) over any distribution
/// whose ranks own whole rows and any storage, any semiring, under an optional
/// memory budget.
///
/// The 1-D algorithm of the SGA paper, improved: a rank fetches only the rows
/// of B its local A references that other ranks own (not whole blocks),
/// one-sided, per run of consecutive rows of an owner: one get for their row
/// pointers, then one for their columns and one for their values; its own rows
/// of B are read in place. Owners stage only the rows anyone fetches, in windows
/// kept across products. The node-local product is row-wise Gustavson
/// (kernels/spgemm_gustavson.hpp) by default on host spaces, expand-sort-compress
/// (kernels/spgemm_esc.hpp) for masks and memory budgets, whose row batches are
/// sized so their products fit; Kokkos-Kernels on request. C is split like A's rows.

#include "../comm/communicator.hpp"
#include "../comm/request.hpp"
#include "../comm/segment.hpp"
#include "../core/error.hpp"
#include "../policy.hpp"
#include "../kernels/sort_rows.hpp"
#include "../kernels/spgemm_esc.hpp"
#include "../kernels/spgemm_gustavson.hpp"
#include "../matrix/detail/compress_columns.hpp"
#include "../matrix/convert.hpp"
#include "../matrix/redistribute.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../storage/csr.hpp"
#include "../matrix/to_view.hpp"
#include "detail/operand_checks.hpp"
#include "detail/row_batches.hpp"
#include "detail/structure_fingerprint.hpp"
#include "detail/tiles_as_elements.hpp"
#include "elementwise.hpp"
#include "semiring.hpp"
#include "spgemm/options.hpp"
#include "grid/spgemm_grid.hpp"
#include "transpose.hpp"

#include <Kokkos_Core.hpp>
#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include "../core/format.hpp"
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
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tessera {

namespace detail {

/// The windows B's rows are staged in for other ranks to get from, kept across products on one
/// communicator (and backend and value type), and grown collectively when a product's B is larger.
///
/// Making a context and three windows per product, then filling fresh shared memory, was a
/// quarter of a Laplacian product (page faults); now only the first product pays them. Windows
/// are sized for the whole of B's local rows, but a product stages only the rows someone fetches
/// (at their own offsets), so untouched pages cost nothing.
template <class T, class Policy>
struct spgemm_workspace {
  using backend_context = typename Policy::backend_type::context;

  explicit spgemm_workspace(const communicator& comm)
      : context(std::make_unique<backend_context>(comm, typename Policy::backend_type::options{})) {}

  /// Whether this rank's B does not fit the windows (not collective).
  [[nodiscard]] bool too_small(std::size_t rows, std::size_t nnz) const noexcept {
    return !allocated || rows + 1 > row_capacity || nnz > entry_capacity;
  }

  /// Collective (every rank, once any rank found its windows too small): windows for at least
  /// `rows` rows and `nnz` entries on this rank.
  void grow(std::size_t rows, std::size_t nnz) {
    // The previous product's gets are complete: each rank waited for its own before it
    // entered the allreduce that decided this growth.
    row_capacity = std::max(row_capacity, rows + 1);
    entry_capacity = std::max(entry_capacity, nnz);
    ptr = segment<std::int64_t>{};
    cols = segment<std::int64_t>{};
    values = segment<T>{};
    ptr = context->template allocate<std::int64_t>(row_capacity);
    cols = context->template allocate<std::int64_t>(entry_capacity);
    values = context->template allocate<T>(entry_capacity);
    allocated = true;
  }

  /// The workspace of B's communicator, made collectively on first use; B's plan cache keeps it
  /// alive and the communicator knows it (weakly: the workspace holds the communicator), so every
  /// B on a communicator shares one (collective: every rank asks with the same B).
  template <class Matrix>
  static std::shared_ptr<spgemm_workspace> of(const Matrix& b) {
    auto& held = b.plan_cache().template entries<std::shared_ptr<spgemm_workspace>>();
    if (!held.empty()) return held.front();
    auto& known = b.comm().shared_resources().template entries<std::weak_ptr<spgemm_workspace>>();
    std::erase_if(known, [](const auto& w) { return w.expired(); });
    std::shared_ptr<spgemm_workspace> live = known.empty() ? nullptr : known.front().lock();
    if (!live) {
      live = std::make_shared<spgemm_workspace>(b.comm());
      known.push_back(live);
    }
    held.push_back(live);
    return live;
  }

  std::unique_ptr<backend_context> context;
  segment<std::int64_t> ptr;   ///< B's row pointers
  segment<std::int64_t> cols;  ///< B's columns, global
  segment<T> values;
  std::size_t row_capacity = 0, entry_capacity = 0;
  bool allocated = false;
};

/// Where each row of B that the local A references is: B's own local rows are read in place;
/// the others were fetched one-sided into `ptr`, `cols` (global) and `values`.
template <class T>
struct referenced_rows {
  /// Per local column c of A: B's local row (>= 0), or -(k + 1) for fetched row k.
  std::vector<local_index> source;
  std::vector<offset_type> ptr{0};
  std::vector<global_index> cols;
  std::vector<T> values;
};

/// The inspector's half of the 1-D fetch: which rows of B the local A references, which of them
/// other ranks own (as runs of consecutive rows of one owner), and which of this rank's rows of B
/// anyone fetches. It depends on A's column map and B's row split only, so a plan keeps it while
/// values (and B's rows' contents) change.
struct fetch_schedule {
  struct run {
    int owner;
    std::size_t first_row, count, first_fetched;
  };
  /// Per local column c of A: B's local row (>= 0), or -(k + 1) for fetched row k.
  std::vector<local_index> source;
  std::vector<run> runs;
  std::size_t fetched = 0;
  /// This rank's rows of B that others fetch: [lo, hi) (empty when hi <= lo).
  std::size_t lo = 0, hi = 0;
  /// Whether any rank fetches anything (the same on every rank).
  bool anyone_fetches = false;
};

/// Make the fetch schedule of A * B (collective: one allreduce of 2P + 1 integers).
///
/// Fetched rows are owner-major, each owner's ascending, so consecutive rows of an owner are one
/// run whatever the mapping interleaves (row-cyclic B: no two adjacent columns of A on one owner).
template <matrix_value T, matrix_policy Policy>
fetch_schedule schedule_referenced_rows(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b) {
  const auto& comm = a.comm();
  const int me = comm.rank();
  const auto ranks = static_cast<std::size_t>(comm.size());
  const auto a_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.col_map());
  const auto columns = static_cast<std::size_t>(a_map.extent(0));
  fetch_schedule out;
  out.source.resize(columns);
  // Per owner: -(lowest row) and (highest row + 1) anyone fetches.
  constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> need(2 * ranks, 0);
  for (std::size_t o = 0; o < ranks; ++o) need[o] = -none;
  struct remote_column {
    int owner;
    std::size_t row;  ///< on the owner
    std::size_t column;
  };
  std::vector<remote_column> remote;
  const auto& b_rows_map = b.mapping();
  for (std::size_t c = 0; c < columns; ++c) {
    const int owner = b_rows_map.row_owner(a_map(c));
    const auto row = static_cast<std::size_t>(b_rows_map.local_row(a_map(c)));
    if (owner == me)
      out.source[c] = static_cast<local_index>(row);
    else
      remote.push_back({owner, row, c});
  }
  // Contiguous row ranges with A's ascending columns are in this order already.
  const auto before = [](const remote_column& x, const remote_column& y) {
    return x.owner < y.owner || (x.owner == y.owner && x.row < y.row);
  };
  if (!std::is_sorted(remote.begin(), remote.end(), before)) std::sort(remote.begin(), remote.end(), before);
  for (const auto& [owner, row, c] : remote) {
    out.source[c] = -static_cast<local_index>(out.fetched) - 1;
    if (!out.runs.empty() && out.runs.back().owner == owner && out.runs.back().first_row + out.runs.back().count == row)
      ++out.runs.back().count;
    else
      out.runs.push_back({owner, row, 1, out.fetched});
    ++out.fetched;
    const auto o = static_cast<std::size_t>(owner);
    need[o] = std::max(need[o], -static_cast<std::int64_t>(row));
    need[ranks + o] = std::max(need[ranks + o], static_cast<std::int64_t>(row) + 1);
  }
  comm.allreduce_inplace(need, MPI_MAX);
  for (std::size_t o = 0; o < ranks; ++o) out.anyone_fetches = out.anyone_fetches || need[ranks + o] > -need[o];
  if (need[ranks + static_cast<std::size_t>(me)] > -need[static_cast<std::size_t>(me)]) {
    out.lo = static_cast<std::size_t>(-need[static_cast<std::size_t>(me)]);
    out.hi = static_cast<std::size_t>(need[ranks + static_cast<std::size_t>(me)]);
  }
  return out;
}

/// Fetch the rows of B that the local A references and other ranks own, as `schedule` says
/// (collective: one allreduce of one integer, then the staging and the gets).
///
/// One-sided, per run of consecutive rows of an owner: one get for their row pointers, then one
/// for their columns and one for their values. Owners stage only the range of their rows anyone
/// fetches (in B's own offsets) in the workspace's windows; the allreduce, which decides whether
/// the windows must grow, also orders the previous product's gets before this staging.
template <matrix_value T, matrix_policy Policy>
referenced_rows<T> fetch_referenced_rows(const fetch_schedule& schedule, const dist_matrix<T, Policy>& a,
                                         const dist_matrix<T, Policy>& b) {
  const auto& comm = a.comm();
  const auto b_rows = static_cast<std::size_t>(b.local_rows());
  const auto b_nnz = static_cast<std::size_t>(b.local_nnz());
  const auto& runs = schedule.runs;
  const std::size_t fetched = schedule.fetched;
  referenced_rows<T> out;
  out.source = schedule.source;
  auto workspace = spgemm_workspace<T, Policy>::of(b);
  if (!schedule.anyone_fetches) return out;
  const int grow = comm.max(workspace->too_small(b_rows, b_nnz) ? 1 : 0);
  if (grow != 0) workspace->grow(b_rows, b_nnz);
  auto& ws = *workspace;

  // Stage the rows others fetch from me: their row pointers (one past the last, too), global
  // columns and values, where they are in B.
  const std::size_t lo = schedule.lo, hi = schedule.hi;
  const auto b_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().row_ptr);
  if (hi > lo) {
    const auto b_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().col_idx);
    const auto b_val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().values);
    const auto b_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.col_map());
    std::int64_t* ptr = ws.ptr.local().data();
    std::int64_t* cols = ws.cols.local().data();
    T* values = ws.values.local().data();
    for (std::size_t r = lo; r <= hi; ++r) ptr[r] = b_ptr(r);
    for (auto e = static_cast<std::size_t>(b_ptr(lo)); e < static_cast<std::size_t>(b_ptr(hi)); ++e) {
      cols[e] = b_map(static_cast<std::size_t>(b_col(e)));
      values[e] = b_val(e);
    }
  }
  ws.context->barrier();

  // Round 1: the row pointers of every run (count + 1 values), one get each.
  std::vector<std::int64_t> run_ptr(fetched + runs.size());
  std::vector<request> pending;
  pending.reserve(2 * runs.size());
  for (std::size_t k = 0; k < runs.size(); ++k)
    pending.push_back(ws.context->get_nb(ws.ptr, runs[k].owner, runs[k].first_row,
                                         std::span<std::int64_t>(run_ptr.data() + runs[k].first_fetched + k,
                                                                 runs[k].count + 1)));
  wait_all(pending);
  pending.clear();

  out.ptr.assign(fetched + 1, 0);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::int64_t* p = run_ptr.data() + runs[k].first_fetched + k;
    for (std::size_t i = 0; i < runs[k].count; ++i) out.ptr[runs[k].first_fetched + i + 1] = p[i + 1] - p[i];
  }
  for (std::size_t f = 0; f < fetched; ++f) out.ptr[f + 1] += out.ptr[f];
  out.cols.resize(static_cast<std::size_t>(out.ptr.back()));
  out.values.resize(out.cols.size());

  // Round 2: each run's entries are contiguous at the owner: one get for columns, one for values.
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::int64_t* p = run_ptr.data() + runs[k].first_fetched + k;
    const auto at = static_cast<std::size_t>(out.ptr[runs[k].first_fetched]);
    const auto from = static_cast<std::size_t>(p[0]);
    const auto length = static_cast<std::size_t>(p[runs[k].count] - p[0]);
    if (length == 0) continue;
    pending.push_back(
        ws.context->get_nb(ws.cols, runs[k].owner, from, std::span<std::int64_t>(out.cols.data() + at, length)));
    pending.push_back(ws.context->get_nb(ws.values, runs[k].owner, from, std::span<T>(out.values.data() + at, length)));
  }
  wait_all(pending);
  // With a passive-target backend no closing barrier: every rank enters the next product's opening
  // allreduce only after its own gets completed, so no owner restages under a reader. The
  // aggregator serves gets only inside tessera calls: its owners must keep serving until all are done.
  if constexpr (!is_passive_target<typename Policy::backend_type>) ws.context->barrier();
  return out;
}

/// Every row of B the local A references, in A's column order, with global columns: what the
/// expand-sort-compress and Kokkos-Kernels kernels multiply by (B's local rows copied in).
template <class T>
struct fetched_rows {
  std::vector<offset_type> ptr;
  std::vector<global_index> cols;
  std::vector<T> values;
};

template <matrix_value T, matrix_policy Policy>
fetched_rows<T> gather_referenced_rows(const dist_matrix<T, Policy>& b, const referenced_rows<T>& rows) {
  const auto b_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().row_ptr);
  const auto b_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().col_idx);
  const auto b_val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().values);
  const auto b_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.col_map());
  fetched_rows<T> out;
  const std::size_t columns = rows.source.size();
  out.ptr.assign(columns + 1, 0);
  for (std::size_t c = 0; c < columns; ++c) {
    const local_index s = rows.source[c];
    const auto length = s >= 0 ? b_ptr(static_cast<std::size_t>(s) + 1) - b_ptr(static_cast<std::size_t>(s))
                               : rows.ptr[static_cast<std::size_t>(-s)] - rows.ptr[static_cast<std::size_t>(-s - 1)];
    out.ptr[c + 1] = out.ptr[c] + length;
  }
  out.cols.resize(static_cast<std::size_t>(out.ptr.back()));
  out.values.resize(out.cols.size());
  for (std::size_t c = 0; c < columns; ++c) {
    const local_index s = rows.source[c];
    auto at = static_cast<std::size_t>(out.ptr[c]);
    if (s >= 0) {
      for (auto e = b_ptr(static_cast<std::size_t>(s)); e < b_ptr(static_cast<std::size_t>(s) + 1); ++e, ++at) {
        out.cols[at] = b_map(static_cast<std::size_t>(b_col(static_cast<std::size_t>(e))));
        out.values[at] = b_val(static_cast<std::size_t>(e));
      }
    } else {
      const auto h = static_cast<std::size_t>(-s - 1);
      for (auto e = rows.ptr[h]; e < rows.ptr[h + 1]; ++e, ++at) {
        out.cols[at] = rows.cols[static_cast<std::size_t>(e)];
        out.values[at] = rows.values[static_cast<std::size_t>(e)];
      }
    }
  }
  return out;
}

/// This rank's block of C and its column map: what the node-local kernels produce.
template <class T, class Policy>
struct local_product {
  typename dist_matrix<T, Policy>::local_block_type block;
  Kokkos::View<global_index*, typename Policy::memory_space> col_map;
};

/// Row-wise Gustavson (kernels/spgemm_gustavson.hpp) over an accumulator column space that is
/// the union, in global order, of B's local column map and the fetched rows' columns: B's local
/// rows are read in place through a translation table, so nothing of B is copied.
template <matrix_value T, matrix_policy Policy, class Semiring>
local_product<T, Policy> multiply_gustavson(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                          const referenced_rows<T>& rows, const Semiring& ring) {
  using mem = typename Policy::memory_space;
  using exec = typename Policy::execution_space;
  const auto b_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.col_map());
  const auto fetched = compress_columns(rows.cols, b.num_cols());
  // Merge B's column map with the fetched rows' distinct columns (both ascending).
  const auto nb = static_cast<std::size_t>(b_map.extent(0));
  const std::size_t nf = fetched.used.size();
  std::vector<global_index> acc_global;
  acc_global.reserve(nb + nf);
  std::vector<local_index> b_to_acc(nb), f_to_acc(nf);
  for (std::size_t i = 0, j = 0; i < nb || j < nf;) {
    const auto at = static_cast<local_index>(acc_global.size());
    if (j == nf || (i < nb && b_map(i) < fetched.used[j])) {
      acc_global.push_back(b_map(i));
      b_to_acc[i++] = at;
    } else if (i == nb || fetched.used[j] < b_map(i)) {
      acc_global.push_back(fetched.used[j]);
      f_to_acc[j++] = at;
    } else {
      acc_global.push_back(b_map(i));
      b_to_acc[i++] = at;
      f_to_acc[j++] = at;
    }
  }
  // B's columns keep their order among the accumulator columns; when no extra column falls between
  // two of them (banded matrices: the extras lie all after or all before), they are merely shifted
  // and B's own column array serves; else a translated copy (one pass over B's entries, against
  // a table lookup in the kernel's dependent chain per product).
  const bool shifted = nb == 0 || b_to_acc.back() - b_to_acc.front() == static_cast<local_index>(nb) - 1;
  std::vector<local_index> h_col(fetched.local.size());
  for (std::size_t e = 0; e < h_col.size(); ++e) h_col[e] = f_to_acc[static_cast<std::size_t>(fetched.local[e])];

  kernels::gustavson_operands<T, mem> op;
  op.a_ptr = a.local().row_ptr;
  op.a_col = a.local().col_idx;
  op.a_val = a.local().values;
  op.source = to_view<local_index, mem>(rows.source, "tessera::spgemm::source");
  op.b_ptr = b.local().row_ptr;
  op.b_col = b.local().col_idx;
  op.b_val = b.local().values;
  if (shifted) {
    op.b_offset = nb == 0 ? 0 : b_to_acc.front();
  } else {
    const auto table = to_view<local_index, mem>(b_to_acc, "tessera::spgemm::b_to_acc");
    const auto cols = b.local().col_idx;
    Kokkos::View<local_index*, mem> translated(
        Kokkos::view_alloc(std::string("tessera::spgemm::b_acc_col"), Kokkos::WithoutInitializing), cols.extent(0));
    // A host lambda: Gustavson runs on host spaces only, so no extended lambda (and none of nvcc's
    // rules for them) is needed here.
    Kokkos::parallel_for(
        "tessera::spgemm::translate", Kokkos::RangePolicy<exec>(0, cols.extent(0)),
        [=](const std::size_t e) { translated(e) = table(cols(e)); });
    op.b_col = translated;
  }
  op.h_ptr = to_view<offset_type, mem>(rows.ptr, "tessera::spgemm::h_ptr");
  op.h_col = to_view<local_index, mem>(h_col, "tessera::spgemm::h_col");
  op.h_val = to_view<T, mem>(rows.values, "tessera::spgemm::h_val");
  op.width = static_cast<local_index>(acc_global.size());
  const auto c = kernels::gustavson(exec{}, op, ring);

  const auto used = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c.used);
  Kokkos::View<global_index*, mem> col_map(
      Kokkos::view_alloc(std::string("tessera::spgemm::col_map"), Kokkos::WithoutInitializing), used.extent(0));
  auto col_map_host = Kokkos::create_mirror_view(col_map);
  for (std::size_t j = 0; j < used.extent(0); ++j) col_map_host(j) = acc_global[static_cast<std::size_t>(used(j))];
  Kokkos::deep_copy(col_map, col_map_host);
  typename dist_matrix<T, Policy>::local_block_type block;
  block.rows = a.local_rows();
  block.cols = static_cast<local_index>(used.extent(0));
  block.row_ptr = c.row_ptr;
  block.col_idx = c.col_idx;
  block.values = c.values;
  return {block, col_map};
}

/// Plus-times through Kokkos-Kernels: B's fetched rows get compressed local
/// columns, KokkosSparse multiplies, rows are sorted. Returns C's local block and column map.
template <matrix_value T, matrix_policy Policy>
local_product<T, Policy> multiply_kokkos_kernels(const dist_matrix<T, Policy>& a, const fetched_rows<T>& fetched, global_index b_cols) {
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

/// This rank's rows of C from its rows of A and the rows of B they reference (not collective:
/// runs the user's semiring, so multiply() runs it inside an agreement).
template <matrix_value T, matrix_policy Policy, class Semiring>
local_product<T, Policy> multiply_local(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                        const dist_matrix<T, Policy>* mask, const referenced_rows<T>& referenced,
                                        const spgemm_options<Semiring>& options) {
  using mem = typename Policy::memory_space;
  using exec = typename Policy::execution_space;
  const bool unbatched = mask == nullptr && options.memory_budget_bytes == 0;
  const bool plain = std::is_same_v<Semiring, semirings::plus_times> && unbatched;
  // Dense per-thread accumulators suit host execution spaces (a GPU's thread count times the
  // column space would not fit); elsewhere the default stays Kokkos-Kernels.
  constexpr bool on_host = Kokkos::SpaceAccessibility<exec, Kokkos::HostSpace>::accessible;
  if constexpr (on_host) {
    if (unbatched && (options.kernel == spgemm_kernel::gustavson || options.kernel == spgemm_kernel::automatic)) {
      if (options.batches != nullptr) *options.batches = 1;
      return multiply_gustavson(a, b, referenced, options.ring);
    }
  }
  const auto fetched = gather_referenced_rows(b, referenced);
  if constexpr (std::is_same_v<Semiring, semirings::plus_times>) {
    if (plain && options.kernel != spgemm_kernel::esc) {
      if (options.batches != nullptr) *options.batches = 1;
      return multiply_kokkos_kernels<T, Policy>(a, fetched, b.num_cols());
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
    const local_index last = batch_end(first, rows, options.memory_budget_bytes, per_product, [&](local_index r) {
      std::size_t products = 0;
      for (offset_type e = a_ptr(r); e < a_ptr(r + 1); ++e)
        products += static_cast<std::size_t>(fetched.ptr[static_cast<std::size_t>(a_col(e)) + 1] -
                                             fetched.ptr[static_cast<std::size_t>(a_col(e))]);
      return products;
    });
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
  return {block, to_view<global_index, mem>(used, "tessera::spgemm::col_map")};
}


/// C = A * B on whole rows, fetching as `schedule` (made for A's column map and B's row split) says.
template <matrix_value T, matrix_policy Policy, class Semiring>
dist_matrix<T, Policy> multiply(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                const dist_matrix<T, Policy>* mask, const spgemm_options<Semiring>& options,
                                const fetch_schedule& schedule) {
  static_assert(semiring<Semiring, T>, "tessera::spgemm: the semiring needs add(a, b) and multiply(a, b) on T");
  using storage = typename Policy::storage_type;
  if constexpr (!std::same_as<storage, csr>) {
    // The kernels multiply compressed rows: other storages are converted in (O(nnz) each, no
    // communication) and C is converted back, so C has the operands' storage.
    const auto mask_rows = mask != nullptr ? std::optional(convert<csr>(*mask)) : std::nullopt;
    return convert<storage>(
        multiply(convert<csr>(a), convert<csr>(b), mask_rows ? &*mask_rows : nullptr, options, schedule));
  } else {
  const auto& comm = a.comm();
  comm.collectively([&] {
    detail::require_same_ranks("spgemm", comm, b.comm(), "B");
    TESSERA_REQUIRE(a.num_cols() == b.num_rows(), dimension_mismatch, "spgemm: A is {} x {} but B is {} x {}",
                    a.num_rows(), a.num_cols(), b.num_rows(), b.num_cols());
    if (mask != nullptr) {
      detail::require_same_ranks("spgemm", comm, mask->comm(), "the mask");
      TESSERA_REQUIRE(mask->num_rows() == a.num_rows() && mask->num_cols() == b.num_cols(), dimension_mismatch,
                      "spgemm: the mask is {} x {} but A * B is {} x {}", mask->num_rows(), mask->num_cols(),
                      a.num_rows(), b.num_cols());
      TESSERA_REQUIRE(same_rows(mask->mapping(), a.mapping()), dimension_mismatch,
                      "spgemm: the mask must split its rows like A; redistribute it first");
    }
    const bool unbatched = mask == nullptr && options.memory_budget_bytes == 0;
    const bool plain = std::is_same_v<Semiring, semirings::plus_times> && unbatched;
    TESSERA_REQUIRE(options.kernel != spgemm_kernel::kokkos_kernels || plain, invalid_argument,
                    "spgemm: the Kokkos-Kernels kernel does plus-times without mask or memory budget only");
    TESSERA_REQUIRE(options.kernel != spgemm_kernel::gustavson || unbatched, invalid_argument,
                    "spgemm: the Gustavson kernel does no masks or memory budgets");
    constexpr bool on_host =
        Kokkos::SpaceAccessibility<typename Policy::execution_space, Kokkos::HostSpace>::accessible;
    TESSERA_REQUIRE(options.kernel != spgemm_kernel::gustavson || on_host, invalid_argument,
                    "spgemm: the Gustavson kernel runs on host execution spaces (its dense accumulators are per "
                    "thread); use automatic, esc or kokkos_kernels on this one");
  });
  const stats_scope scope(comm, "spgemm");
  const auto referenced = fetch_referenced_rows(schedule, a, b);
  // The kernels call the user's semiring: whatever it throws on one rank is raised on every rank,
  // instead of leaving the others waiting in C's constructor.
  auto c = comm.collectively([&] { return multiply_local(a, b, mask, referenced, options); });
  return dist_matrix<T, Policy>(comm, a.mapping().with_shape(a.num_rows(), b.num_cols()), std::move(c.block),
                                std::move(c.col_map));
  }
}

}  // namespace detail

namespace detail {

/// `c` without the entries `mask` selects (same row split; not communicating beyond the agreement).
template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> drop_selected(const dist_matrix<T, Policy>& c, const dist_matrix<T, Policy>& mask,
                                     mask_kind kind) {
  auto kept = c.comm().collectively([&] {
    const auto m = held_triplets(mask);
    std::vector<std::pair<global_index, global_index>> selected;
    selected.reserve(m.size());
    for (std::size_t k = 0; k < m.size(); ++k)
      if (kind == mask_kind::structure || m.values[k] != T{0}) selected.emplace_back(m.rows[k], m.cols[k]);
    std::sort(selected.begin(), selected.end());
    auto entries = held_triplets(c);
    entries.retain([&](global_index i, global_index j, const T&) {
      return !std::binary_search(selected.begin(), selected.end(), std::pair(i, j));
    });
    return entries;
  });
  return assemble_owned<T, Policy>(c.comm(), c.mapping(), kept, combine::any{});
}

}  // namespace detail

template <matrix_value T, matrix_policy Policy, class Semiring>
class spgemm_plan;

namespace detail {

/// The core product through `plan` (made for these operands), or through a plan made for this
/// one call when there is none (operands made inside the operation: transposes, pruned masks).
template <matrix_value T, matrix_policy Policy, class Semiring>
dist_matrix<T, Policy> multiply_any(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                    const dist_matrix<T, Policy>* mask, const spgemm_options<Semiring>& options,
                                    spgemm_plan<T, Policy, Semiring>* plan) {
  if (plan != nullptr) return plan->multiply(a, b, mask);
  spgemm_plan<T, Policy, Semiring> once(a, b, options);
  return once.multiply(a, b, mask);
}

/// A transposed operand on the grid of the operand it meets: a grid's transpose lives on the
/// transposed (q x p) grid, which a p != q product cannot use as it is.
template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> transposed_for(const dist_matrix<T, Policy>& t, const dist_matrix<T, Policy>& other) {
  auto flipped = transpose(t);
  if constexpr (retiling_grid_mapping<typename Policy::mapping_type>) {
    if (!(flipped.mapping().grid() == other.mapping().grid())) {
      const auto& m = flipped.mapping();
      return redistribute(flipped, other.mapping().with_tiles(m.row_tiles(), m.col_tiles(), std::vector<int>{}));
    }
  }
  return flipped;
}

/// Whether `mask` is distributed as A * B is (checked inside an agreement).
template <matrix_value T, matrix_policy Policy>
bool splits_like_product(const dist_matrix<T, Policy>& mask, const dist_matrix<T, Policy>& a,
                         const dist_matrix<T, Policy>& b) {
  if constexpr (whole_row_mapping<typename Policy::mapping_type>)
    return same_rows(mask.mapping(), a.mapping());
  else
    return mask.mapping() == product_mapping(a.mapping(), b.mapping());
}

/// A * B with the options' transposes and mask semantics; the core product through `plan` when
/// one is given (no transposes: the plan is for A and B as they are).
template <matrix_value T, matrix_policy Policy, class Semiring>
dist_matrix<T, Policy> product(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                               const dist_matrix<T, Policy>* mask, const spgemm_options<Semiring>& options,
                               spgemm_plan<T, Policy, Semiring>* plan = nullptr) {
  if (options.transpose_a || options.transpose_b) {
    auto plain = options;
    plain.transpose_a = plain.transpose_b = false;
    if (options.transpose_a && options.transpose_b) {
      const auto bt = transpose(b);
      return product(transposed_for(a, bt), bt, mask, plain);
    }
    if (options.transpose_a) return product(transposed_for(a, b), b, mask, plain);
    return product(a, transposed_for(b, a), mask, plain);
  }
  if (mask == nullptr) return multiply_any(a, b, mask, options, plan);
  if (options.complement_mask) {
    // Checked here as multiply checks a mask it is given: the unmasked product never sees it.
    a.comm().collectively([&] {
      require_same_ranks("spgemm", a.comm(), mask->comm(), "the mask");
      TESSERA_REQUIRE(mask->num_rows() == a.num_rows() && mask->num_cols() == b.num_cols(), dimension_mismatch,
                      "spgemm: the mask is {} x {} but A * B is {} x {}", mask->num_rows(), mask->num_cols(),
                      a.num_rows(), b.num_cols());
      TESSERA_REQUIRE(splits_like_product(*mask, a, b), dimension_mismatch,
                      "spgemm: the mask must be distributed as A * B is (A's rows; on a grid also B's columns); "
                      "redistribute it first");
    });
    return drop_selected(multiply_any(a, b, static_cast<const dist_matrix<T, Policy>*>(nullptr), options, plan),
                         *mask, options.mask);
  }
  if (options.mask == mask_kind::values) {
    const auto selecting = prune(*mask, [](const T& v) { return v == T{0}; });
    return multiply_any(a, b, &selecting, options, plan);
  }
  return multiply_any(a, b, mask, options, plan);
}

}  // namespace detail

/// The plan of C = A * B (or C<M> = A * B) under fixed options: the inspector's work, made once
/// and reused by every apply while A's structure and B's distribution stay (values may change).
///
/// On whole rows it holds the fetch schedule: which rows of B the local A references, the runs
/// of consecutive rows per owner, and which of this rank's rows others fetch (one allreduce of
/// 2P + 1 integers when made; an apply does one allreduce of one integer, the staging and the gets).
/// On a grid it holds the layered grid, C's mapping and the stage of every inner index.
/// spgemm() keeps one per (B's distribution, options) in A.plan_cache(); make one yourself to own it:
/// @code
/// tessera::spgemm_plan plan(A, B, tessera::spgemm_options{.ring = tessera::semirings::min_plus{}});
/// for (int step = 0; step < steps; ++step) C = plan.apply(A, B);   // A's values change, not its structure
/// @endcode
template <matrix_value T, matrix_policy Policy, class Semiring = semirings::plus_times>
class spgemm_plan {
  using mapping_type = typename Policy::mapping_type;
  using matrix = dist_matrix<T, Policy>;
  static constexpr bool on_rows = whole_row_mapping<mapping_type>;
  static_assert(on_rows || retiling_grid_mapping<mapping_type>,
                "tessera::spgemm_plan needs a distribution whose ranks own whole rows (whole_row_mapping) or a "
                "process grid that re-tiles (retiling_grid_mapping); redistribute A and B to row_block or "
                "block_cyclic_2d first");

 public:
  /// Inspect A * B under `options` (collective). Transposed operands are planned as what they are:
  /// transpose them first and plan their product.
  spgemm_plan(const matrix& a, const matrix& b, const spgemm_options<Semiring>& options = {})
      : options_(options), a_mapping_(a.mapping()), b_mapping_(b.mapping()) {
    a.comm().collectively([&] {
      TESSERA_REQUIRE(!options.transpose_a && !options.transpose_b, invalid_argument,
                      "spgemm_plan: a plan is for A and B as they are; transpose them first and plan their product");
      detail::require_same_ranks("spgemm", a.comm(), b.comm(), "B");
      TESSERA_REQUIRE(a.num_cols() == b.num_rows(), dimension_mismatch, "spgemm: A is {} x {} but B is {} x {}",
                      a.num_rows(), a.num_cols(), b.num_rows(), b.num_cols());
    });
    if constexpr (on_rows) {
      a_cols_ = detail::structure_fingerprint<1>(a.col_map());
      schedule_ = detail::schedule_referenced_rows(a, b);
    } else {
      grid_.emplace(detail::inspect_grid_product(a, b, options));
    }
  }

  /// C = A * B (collective). A must have the structure, B the distribution, the plan was made for.
  [[nodiscard]] matrix apply(const matrix& a, const matrix& b) {
    return detail::product(a, b, static_cast<const matrix*>(nullptr), *options_, this);
  }
  /// C<M> = A * B under the plan's options (mask kind, complement).
  [[nodiscard]] matrix apply(const matrix& mask, const matrix& a, const matrix& b) {
    return detail::product(a, b, &mask, *options_, this);
  }

  /// Whether this plan is for A's structure, B's distribution and `options` (not collective:
  /// this rank's answer; spgemm_plan_for agrees over the ranks).
  [[nodiscard]] bool fits(const matrix& a, const matrix& b, const spgemm_options<Semiring>& options) {
    const auto& mine = *options_;
    const bool same_options = options.kernel == mine.kernel && options.memory_budget_bytes == mine.memory_budget_bytes &&
                              options.mask == mine.mask && options.complement_mask == mine.complement_mask &&
                              options.layers == mine.layers && options.stages == mine.stages &&
                              !options.transpose_a && !options.transpose_b;
    if (!same_options || !(b.mapping() == b_mapping_)) return false;
    if constexpr (on_rows)
      return a_cols_.matches(a.col_map());
    else
      return a.mapping() == a_mapping_;
  }

  /// Rows of B this rank fetches per apply (whole rows), and the runs they are fetched in.
  [[nodiscard]] std::size_t fetched_rows() const noexcept { return on_rows ? schedule_.fetched : 0; }
  [[nodiscard]] std::size_t runs() const noexcept { return on_rows ? schedule_.runs.size() : 0; }
  [[nodiscard]] const spgemm_options<Semiring>& options() const noexcept { return *options_; }

  /// The core product (no transposes) through the plan; what apply and spgemm call.
  [[nodiscard]] matrix multiply(const matrix& a, const matrix& b, const matrix* mask) {
    a.comm().collectively([&] {
      TESSERA_REQUIRE(fits(a, b, *options_), invalid_argument,
                      "spgemm_plan: A's structure or B's distribution is not what the plan was made for; make a "
                      "new plan");
    });
    if constexpr (on_rows) {
      // The user's options (batches: where to report) are this call's; the plan's decide the rest.
      return detail::multiply(a, b, mask, *options_, schedule_);
    } else {
      return detail::multiply_on_grid(a, b, mask, *options_, *grid_);
    }
  }

  /// Take this call's semiring object and batch report (spgemm_options::ring, ::batches), which a
  /// kept plan must not hold over from the call that made it.
  void use_call_options(const spgemm_options<Semiring>& options) { options_.emplace(options); }

 private:
  std::optional<spgemm_options<Semiring>> options_;  // re-made per call: a semiring need not be assignable
  mapping_type a_mapping_, b_mapping_;
  detail::structure_fingerprint<1> a_cols_;
  detail::fetch_schedule schedule_;
  std::optional<detail::grid_product_setup<mapping_type>> grid_;
};

/// The plan of A * B under `options`, made on first use and kept in A.plan_cache() (collective:
/// every rank checks the plans it keeps and one allreduce agrees which one fits everywhere).
template <matrix_value T, matrix_policy Policy, class Semiring>
spgemm_plan<T, Policy, Semiring>& spgemm_plan_for(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                                  const spgemm_options<Semiring>& options = {}) {
  auto& made = a.plan_cache().template entries<std::shared_ptr<spgemm_plan<T, Policy, Semiring>>>();
  std::vector<int> fits(made.size());
  for (std::size_t i = 0; i < made.size(); ++i) fits[i] = made[i]->fits(a, b, options) ? 1 : 0;
  if (!fits.empty()) a.comm().allreduce_inplace(fits, MPI_MIN);
  for (std::size_t i = 0; i < made.size(); ++i)
    if (fits[i] != 0) {
      made[i]->use_call_options(options);
      return *made[i];
    }
  // A few plans per A (products with several Bs or options); the oldest goes first.
  constexpr std::size_t kept = 4;
  if (made.size() == kept) made.erase(made.begin());
  made.push_back(std::make_shared<spgemm_plan<T, Policy, Semiring>>(a, b, options));
  return *made.back();
}

#define TESSERA_SPGEMM_NEEDS_WHOLE_ROWS                                                                            \
  "tessera::spgemm needs a distribution whose ranks own whole rows (capability whole_row_mapping: row_owner, "   \
  "local_row, with_shape) or a process grid that re-tiles (capability retiling_grid_mapping: grid, row_tiles, "    \
  "col_tiles, column_owners, with_tiles, transposed); this one has neither: redistribute A and B to row_block or "  \
  "block_cyclic_2d first"
#define TESSERA_SPGEMM_CAN_MULTIPLY(M) (whole_row_mapping<M> || retiling_grid_mapping<M>)
#define TESSERA_SPGEMM_NO_TILES                                                                                     \
  "tessera::spgemm_masked and spgemm_accumulate take element storages (csr, csc, coo, a user's); convert a "        \
  "tile-stored matrix with to_elements<Policy>(A) first (spgemm itself converts tiles)"


/// C = A * B over a semiring (plus-times by default), split like A's rows, in A's storage
/// (collective). Needs whole rows on each rank; storages other than csr are converted to CSR
/// and back (O(nnz), local). Traffic is counted under "spgemm". `options.transpose_a` /
/// `transpose_b` multiply A^T / B^T.
template <matrix_value T, matrix_policy Policy, class Semiring = semirings::plus_times>
[[nodiscard]] dist_matrix<T, Policy> spgemm(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                            const spgemm_options<Semiring>& options = {}) {
  static_assert(TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type), TESSERA_SPGEMM_NEEDS_WHOLE_ROWS);
  if constexpr (tile_storage<typename Policy::storage_type>) {
    // Tiles: multiplied as elements on the same grid and cut back into A's row tiles and B's
    // column tiles (detail/tiles_as_elements.hpp; bsgemm and summa multiply tiles natively).
    const auto c = spgemm(detail::tiles_as_elements(a), detail::tiles_as_elements(b), options);
    const auto& rows = options.transpose_a ? a.col_tiles() : a.row_tiles();
    const auto& cols = options.transpose_b ? b.row_tiles() : b.col_tiles();
    const auto mapping = a.comm().collectively([&] { return a.mapping().with_tiles(rows, cols, std::vector<int>{}); });
    return to_tiles<Policy>(c, mapping);
  } else if constexpr (TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type)) {
    auto* plan = options.transpose_a || options.transpose_b ? nullptr : &spgemm_plan_for(a, b, options);
    return detail::product(a, b, static_cast<const dist_matrix<T, Policy>*>(nullptr), options, plan);
  } else {
    return a;  // refused above; not instantiating the algorithm keeps the compiler's report to that sentence
  }
}

/// C<M> = A * B: only the entries the mask M selects (collective). M is m x n and split like
/// A's rows (like A^T's with transpose_a). `options.mask` selects by structure (default) or by
/// nonzero value; `options.complement_mask` keeps the entries M does not select (GrB_COMP).
template <matrix_value T, matrix_policy Policy, class Semiring = semirings::plus_times>
[[nodiscard]] dist_matrix<T, Policy> spgemm_masked(const dist_matrix<T, Policy>& mask, const dist_matrix<T, Policy>& a,
                                                   const dist_matrix<T, Policy>& b,
                                                   const spgemm_options<Semiring>& options = {}) {
  static_assert(!tile_storage<typename Policy::storage_type>, TESSERA_SPGEMM_NO_TILES);
  static_assert(TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type), TESSERA_SPGEMM_NEEDS_WHOLE_ROWS);
  if constexpr (TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type))
    return detail::product(a, b, &mask, options);
  else
    return a;
}

/// C = C ⊕ A * B: the product accumulated into an existing C with the semiring's addition where
/// both store an entry, C's other entries kept (GrB_mxm with an accumulator). C must be
/// distributed as the product is (A's rows, B's columns). Collective. Arguments in tessera's
/// order: the mask (if any), the operands, the output, the options (as spmm(A, X, Y)).
template <matrix_value T, matrix_policy Policy, class Semiring = semirings::plus_times>
void spgemm_accumulate(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b, dist_matrix<T, Policy>& c,
                       const spgemm_options<Semiring>& options = {}) {
  static_assert(!tile_storage<typename Policy::storage_type>, TESSERA_SPGEMM_NO_TILES);
  static_assert(TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type), TESSERA_SPGEMM_NEEDS_WHOLE_ROWS);
  if constexpr (TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type))
    c = add(c, detail::product(a, b, static_cast<const dist_matrix<T, Policy>*>(nullptr), options),
            detail::semiring_add<Semiring>{options.ring});
}

/// C<M> = C ⊕ A * B: accumulated only where the mask selects (options.mask, complement_mask), C's
/// entries elsewhere kept as they are (GrB_mxm with a mask and an accumulator, no GrB_REPLACE).
template <matrix_value T, matrix_policy Policy, class Semiring = semirings::plus_times>
void spgemm_accumulate(const dist_matrix<T, Policy>& mask, const dist_matrix<T, Policy>& a,
                       const dist_matrix<T, Policy>& b, dist_matrix<T, Policy>& c,
                       const spgemm_options<Semiring>& options = {}) {
  static_assert(!tile_storage<typename Policy::storage_type>, TESSERA_SPGEMM_NO_TILES);
  static_assert(TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type), TESSERA_SPGEMM_NEEDS_WHOLE_ROWS);
  if constexpr (TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type))
    c = add(c, detail::product(a, b, &mask, options), detail::semiring_add<Semiring>{options.ring});
}

#undef TESSERA_SPGEMM_NEEDS_WHOLE_ROWS
#undef TESSERA_SPGEMM_CAN_MULTIPLY
#undef TESSERA_SPGEMM_NO_TILES

}  // namespace tessera
