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
#include "../../kernels/spgemm_esc.hpp"
#include "../../kernels/spgemm_gustavson.hpp"
#include "../../core/device_algorithms.hpp"
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

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#define TESSERA_SPGEMM_NEEDS_KOKKOS_KERNELS                                                              \
  "tessera::spgemm with options (or on a device space) can run Kokkos-Kernels' SpGEMM: include "      \
  "<tessera/ops/spgemm.hpp>, not only <tessera/ops/spgemm_default.hpp> (which compiles spgemm(A, B) " \
  "with the host's default kernel)"

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
  std::size_t batches = 1;  ///< the batches of rows it was multiplied in (spgemm_options::batches)
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

/// Plus-times through Kokkos-Kernels (or cuSPARSE) from the referenced rows (the default kernel on
/// device spaces, spgemm_kernel::kokkos_kernels on request). Defined in kokkos_kernels_product.hpp,
/// which <tessera/ops/spgemm.hpp> includes, and <tessera/ops/spgemm_default.hpp> only where Kokkos
/// has a device backend: its Kokkos-Kernels headers are ~70 MB of compiler memory a unit that
/// multiplies with the host's default kernel does not spend.
template <matrix_value T, matrix_policy Policy>
auto multiply_referenced_kokkos_kernels(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                        const referenced_rows<T>& referenced);

/// True once kokkos_kernels_product.hpp is included (it specialises this), so a call that needs
/// that kernel without it stops at a static_assert that says which header to include.
template <class T>
struct kokkos_kernels_product_included : std::false_type {};

/// `product`, its batches of rows told to `batches` (spgemm_options::batches) when that is set:
/// every kernel's product reports them this one way.
template <matrix_value T, matrix_policy Policy>
local_product<T, Policy> reporting_batches(local_product<T, Policy> product, std::size_t* batches) {
  if (batches != nullptr) *batches = product.batches;
  return product;
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
    if constexpr (on_host) {
      return reporting_batches(multiply_gustavson(a, b, referenced, options.ring), options.batches);
    } else {
      static_assert(kokkos_kernels_product_included<T>::value, TESSERA_SPGEMM_NEEDS_KOKKOS_KERNELS);
      return reporting_batches(multiply_referenced_kokkos_kernels(a, b, referenced), options.batches);
    }
  } else {
    const bool unbatched = mask == nullptr && options.memory_budget_bytes == 0;
    const bool plain = std::is_same_v<Semiring, semirings::plus_times> && unbatched;
    if constexpr (on_host) {
      if (unbatched && (options.kernel == spgemm_kernel::gustavson || options.kernel == spgemm_kernel::automatic)) {
        return reporting_batches(multiply_gustavson(a, b, referenced, options.ring), options.batches);
      }
    }
    if constexpr (std::is_same_v<Semiring, semirings::plus_times>) {
      if (plain && options.kernel != spgemm_kernel::esc) {
        static_assert(kokkos_kernels_product_included<T>::value, TESSERA_SPGEMM_NEEDS_KOKKOS_KERNELS);
        return reporting_batches(multiply_referenced_kokkos_kernels(a, b, referenced), options.batches);
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
    return reporting_batches(local_product<T, Policy>{block, to_view<global_index, mem>(used, "tessera::spgemm::col_map"), batches},
                             options.batches);
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
