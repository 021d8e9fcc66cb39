#pragma once
/// @file
/// The 1-D SpGEMM's node-local product: this rank's rows of A times the rows of B they reference
/// (B's own rows in place, the fetched ones from fetch.hpp), by row-wise Gustavson, Kokkos-Kernels
/// or expand-sort-compress (masks, memory budgets), and the product C = A * B on whole rows.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_LOCAL_PRODUCT_HPP
#endif

#include "../../core/deep_copy.hpp"
#include "../../core/error.hpp"
#include "../../core/profiling_region.hpp"
#include "../../core/scratch_pool.hpp"
#include "../../kernels/offset_width.hpp"
#include "../../kernels/sort_rows.hpp"
#include "../../kernels/spgemm_cusparse.hpp"
#include "../../kernels/spgemm_esc.hpp"
#include "../../kernels/spgemm_gustavson.hpp"
#include "../../core/device_algorithms.hpp"
#include "referenced_rows_on_device.hpp"
#include "../../matrix/convert.hpp"
#include "../../matrix/detail/compress_columns.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../matrix/to_view.hpp"
#include "../../storage/csr.hpp"
#include "../detail/compiled_paths.hpp"
#include "../detail/operand_checks.hpp"
#include "../detail/row_batches.hpp"
#include "../semiring.hpp"
#include "fetch.hpp"
#include "options.hpp"

#include <Kokkos_Core.hpp>
#include <KokkosKernels_Handle.hpp>
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

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera::detail {

/// Every row of B the local A references, in A's column order, with global columns: what the
/// expand-sort-compress and Kokkos-Kernels kernels multiply by (B's local rows copied in).
template <class T>
struct fetched_rows {
  std::vector<offset_type> ptr;
  std::vector<global_index> cols;
  std::vector<T> values;
};

template <matrix_value T, matrix_policy Policy>
fetched_rows<T> gather_referenced_rows(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                       const referenced_rows<T>& rows) {
  std::vector<local_index> made;
  const auto& source = host_sources(rows, a, made);
  const auto b_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().row_ptr);
  const auto b_col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().col_idx);
  const auto b_val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.local().values);
  const auto b_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.col_map());
  fetched_rows<T> out;
  const std::size_t columns = source.size();
  out.ptr.assign(columns + 1, 0);
  for (std::size_t c = 0; c < columns; ++c) {
    const local_index s = source[c];
    const auto length = s >= 0 ? b_ptr(static_cast<std::size_t>(s) + 1) - b_ptr(static_cast<std::size_t>(s))
                               : rows.ptr[static_cast<std::size_t>(-s)] - rows.ptr[static_cast<std::size_t>(-s - 1)];
    out.ptr[c + 1] = out.ptr[c] + length;
  }
  out.cols.resize(static_cast<std::size_t>(out.ptr.back()));
  out.values.resize(out.cols.size());
  for (std::size_t c = 0; c < columns; ++c) {
    const local_index s = source[c];
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
  std::vector<local_index> made;
  op.source = to_view<local_index, mem>(host_sources(rows, a, made), "tessera::spgemm::source");
  op.b_ptr = b.local().row_ptr;
  op.b_col = b.local().col_idx;
  op.b_val = b.local().values;
  if (shifted) {
    op.b_offset = nb == 0 ? 0 : b_to_acc.front();
  } else {
    const auto table = to_view<local_index, mem>(b_to_acc, "tessera::spgemm::b_to_acc");
    const auto cols = b.local().col_idx;
    Kokkos::View<local_index*, mem> translated(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::b_acc_col")), cols.extent(0));
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
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::spgemm::col_map")), used.extent(0));
  auto col_map_host = Kokkos::create_mirror_view(col_map);
  for (std::size_t j = 0; j < used.extent(0); ++j) col_map_host(j) = acc_global[static_cast<std::size_t>(used(j))];
  tessera::detail::deep_copy(col_map, col_map_host);
  typename dist_matrix<T, Policy>::local_block_type block;
  block.rows = a.local_rows();
  block.cols = static_cast<local_index>(used.extent(0));
  block.row_ptr = c.row_ptr;
  block.col_idx = c.col_idx;
  block.values = c.values;
  return {block, col_map};
}

/// Whether plus-times products go to cuSPARSE (kernels/spgemm_cusparse.hpp): on CUDA, for float or
/// double values, where Kokkos-Kernels has cuSPARSE. Kokkos-Kernels' own kernel (what tessera's
/// 64-bit offsets got) took 2-3 times cuSPARSE's time on an H100 (R-MAT 16 squared: 147 ms against
/// 67 ms).
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
template <class T, class ExecSpace>
inline constexpr bool spgemm_through_cusparse =
    std::is_same_v<ExecSpace, Kokkos::Cuda> && (std::is_same_v<T, double> || std::is_same_v<T, float>);

/// An upper bound on the nonzeros of A * B^: the products it forms, sum over A's entries (i, k) of
/// the length of B^'s row k (in the execution space; one pass over A).
template <class ExecSpace, class MemorySpace>
offset_type product_bound(const Kokkos::View<const local_index*, MemorySpace>& a_col,
                          const Kokkos::View<const offset_type*, MemorySpace>& b_ptr) {
  offset_type bound = 0;
  Kokkos::parallel_reduce(
      "tessera::spgemm::product_bound", Kokkos::RangePolicy<ExecSpace>(0, a_col.extent(0)),
      KOKKOS_LAMBDA(const std::size_t e, offset_type& acc) { acc += b_ptr(a_col(e) + 1) - b_ptr(a_col(e)); }, bound);
  return bound;
}

/// The product through cuSPARSE with 32-bit offsets (every offset of A, B^ and C below INT_MAX,
/// checked by the caller; kernels/spgemm_cusparse.hpp); C's offsets widened back.
template <matrix_value T, matrix_policy Policy>
local_product<T, Policy> multiply_with_int_offsets(const dist_matrix<T, Policy>& a,
                                                   const compressed_operand<T, typename Policy::memory_space>& b_hat) {
  using mem = typename Policy::memory_space;
  const auto& block = a.local();
  const Kokkos::Cuda space{};
  const scratch<int, mem> a_ptr32(block.row_ptr.extent(0)), b_ptr32(b_hat.ptr.extent(0));
  kernels::offsets_into(space, Kokkos::View<const offset_type*, mem>(block.row_ptr), a_ptr32.view());
  kernels::offsets_into(space, Kokkos::View<const offset_type*, mem>(b_hat.ptr), b_ptr32.view());
  const kernels::csr32<T, mem> a32{block.rows, block.cols, a_ptr32.view(), block.col_idx, block.values};
  const kernels::csr32<T, mem> b32{block.cols, static_cast<int>(b_hat.col_map.extent(0)), b_ptr32.view(), b_hat.cols,
                                   b_hat.values};
  const auto c = kernels::spgemm_cusparse(space, a32, b32);
  // cuSPARSE's rows come out sorted; sort_rows only checks them (a team per long row returns at
  // its first look).
  kernels::sort_rows(space, c.row_ptr, c.col_idx, c.values);
  typename dist_matrix<T, Policy>::local_block_type out;
  out.rows = block.rows;
  out.cols = static_cast<local_index>(b_hat.col_map.extent(0));
  out.row_ptr = kernels::offsets_as<offset_type>(space, Kokkos::View<const int*, mem>(c.row_ptr));
  out.col_idx = c.col_idx;
  out.values = c.values;
  return {out, b_hat.col_map};
}
#endif

/// Plus-times through Kokkos-Kernels on B^ (compressed_operand: the referenced rows of B with
/// compressed local columns): KokkosSparse multiplies, rows are sorted. Returns C's local block
/// and column map (B^'s).
template <matrix_value T, matrix_policy Policy>
local_product<T, Policy> multiply_kokkos_kernels(const dist_matrix<T, Policy>& a,
                                                 const compressed_operand<T, typename Policy::memory_space>& b_hat) {
  using mem = typename Policy::memory_space;
  using exec = typename Policy::execution_space;
  using crs = KokkosSparse::CrsMatrix<T, local_index, typename Policy::device_type, void, offset_type>;
  const auto& block = a.local();
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
  if constexpr (spgemm_through_cusparse<T, exec>) {
    constexpr offset_type int_max = std::numeric_limits<int>::max();
    if (block.nnz() <= int_max && static_cast<offset_type>(b_hat.values.extent(0)) <= int_max &&
        product_bound<exec, mem>(block.col_idx, b_hat.ptr) <= int_max)
      return multiply_with_int_offsets<T, Policy>(a, b_hat);
  }
#endif
  const crs a_crs("tessera::spgemm::A", block.rows, block.cols, block.nnz(), block.values, block.row_ptr, block.col_idx);
  const crs b_crs("tessera::spgemm::B", block.cols, static_cast<local_index>(b_hat.col_map.extent(0)),
                  static_cast<offset_type>(b_hat.values.extent(0)), b_hat.values, b_hat.ptr, b_hat.cols);
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
  out.cols = static_cast<local_index>(b_hat.col_map.extent(0));
  out.row_ptr = decltype(out.row_ptr)("tessera::spgemm::row_ptr", c.graph.row_map.extent(0));
  tessera::detail::deep_copy(out.row_ptr, c.graph.row_map);
  out.col_idx = c.graph.entries;
  out.values = c.values;
  return {out, b_hat.col_map};
}

/// B^ from the host-gathered rows: their global columns compressed on the host (the host
/// algorithms' path; referenced_rows_on_device builds it where the device algorithms run).
template <class T, class Mem>
compressed_operand<T, Mem> compressed_on_host(const fetched_rows<T>& fetched, global_index b_cols) {
  const auto [used, b_local] = compress_columns(fetched.cols, b_cols);
  return {to_view<offset_type, Mem>(fetched.ptr, "tessera::spgemm::b_ptr"), to_view<local_index, Mem>(b_local, "tessera::spgemm::b_col"),
          to_view<T, Mem>(fetched.values, "tessera::spgemm::b_val"), to_view<global_index, Mem>(used, "tessera::spgemm::col_map")};
}

/// Plus-times through Kokkos-Kernels (or cuSPARSE) from the referenced rows: B^ assembled on the
/// device where the device algorithms run, on the host otherwise.
template <matrix_value T, matrix_policy Policy>
local_product<T, Policy> multiply_referenced_kokkos_kernels(const dist_matrix<T, Policy>& a,
                                                            const dist_matrix<T, Policy>& b,
                                                            const referenced_rows<T>& referenced) {
  using mem = typename Policy::memory_space;
  if constexpr (uses_device_algorithms<typename Policy::execution_space>) {
    const auto b_hat = [&] {
      const profiling_region region("tessera::spgemm::b_hat");
      return referenced_rows_on_device(a, b, referenced);
    }();
    return multiply_kokkos_kernels<T, Policy>(a, b_hat);
  } else {
    return multiply_kokkos_kernels<T, Policy>(
        a, compressed_on_host<T, mem>(gather_referenced_rows(a, b, referenced), b.num_cols()));
  }
}

/// This rank's rows of C from its rows of A and the rows of B they reference (not collective:
/// runs the user's semiring, so multiply() runs it inside an agreement).
template <compiled_paths Paths, matrix_value T, matrix_policy Policy, class Semiring>
local_product<T, Policy> multiply_local(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                        const dist_matrix<T, Policy>* mask, const referenced_rows<T>& referenced,
                                        const spgemm_options<Semiring>& options) {
  using mem = typename Policy::memory_space;
  using exec = typename Policy::execution_space;
  // Dense per-thread accumulators suit host execution spaces (a GPU's thread count times the
  // column space would not fit); elsewhere the default stays Kokkos-Kernels.
  constexpr bool on_host = Kokkos::SpaceAccessibility<exec, Kokkos::HostSpace>::accessible;
  if constexpr (Paths == compiled_paths::plain) {
    static_assert(std::is_same_v<Semiring, semirings::plus_times>, "the plain product is plus-times");
    if (options.batches != nullptr) *options.batches = 1;
    if constexpr (on_host)
      return multiply_gustavson(a, b, referenced, options.ring);
    else
      return multiply_referenced_kokkos_kernels(a, b, referenced);
  } else {
    const bool unbatched = mask == nullptr && options.memory_budget_bytes == 0;
    const bool plain = std::is_same_v<Semiring, semirings::plus_times> && unbatched;
    if constexpr (on_host) {
      if (unbatched && (options.kernel == spgemm_kernel::gustavson || options.kernel == spgemm_kernel::automatic)) {
        if (options.batches != nullptr) *options.batches = 1;
        return multiply_gustavson(a, b, referenced, options.ring);
      }
    }
    if constexpr (std::is_same_v<Semiring, semirings::plus_times>) {
      if (plain && options.kernel != spgemm_kernel::esc) {
        if (options.batches != nullptr) *options.batches = 1;
        return multiply_referenced_kokkos_kernels(a, b, referenced);
      }
    }
    const auto fetched = gather_referenced_rows(a, b, referenced);

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
}


/// C = A * B on whole rows, fetching as `schedule` (made for A's column map and B's row split) says;
/// `Paths`: which local products the call can take (compiled_paths).
template <compiled_paths Paths, matrix_value T, matrix_policy Policy, class Semiring>
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
        multiply<Paths>(convert<csr>(a), convert<csr>(b), mask_rows ? &*mask_rows : nullptr, options, schedule));
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
  profiling_phases phase;
  phase.next("tessera::spgemm::fetch");
  const auto referenced = fetch_referenced_rows(schedule, a, b);
  phase.next("tessera::spgemm::local_product");
  // The kernels call the user's semiring: whatever it throws on one rank is raised on every rank,
  // instead of leaving the others waiting in C's constructor.
  auto c = comm.collectively([&] { return multiply_local<Paths>(a, b, mask, referenced, options); });
  phase.next("tessera::spgemm::assemble");
  return dist_matrix<T, Policy>(detail::assembled_block, comm, a.mapping().with_shape(a.num_rows(), b.num_cols()), std::move(c.block),
                                std::move(c.col_map));
  }
}


}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_LOCAL_PRODUCT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_LOCAL_PRODUCT_HPP
#endif
