#pragma once
/// @file
/// Element-wise operations on distributed sparse matrices: scale, apply, prune,
/// add, and row and column reductions. Written against the storage concept:
/// every local block has a `values` View, and to_coo/from_coo for the rest.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_ELEMENTWISE_HPP
#endif

#include "../core/deep_copy.hpp"
#include "../core/runtime_lifetime.hpp"
#include "../comm/communicator.hpp"
#include "../concepts/backend.hpp"
#include "../core/combine.hpp"
#include "../core/error.hpp"
#include "../comm/buckets.hpp"
#include "../matrix/convert.hpp"
#include "../matrix/detail/assemble.hpp"
#include "../matrix/dist_dense.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../matrix/local_triplets.hpp"
#include "../storage/csc.hpp"
#include "../storage/csr.hpp"
#include "detail/add_local.hpp"
#include "detail/prune_local.hpp"
#include "detail/row_offsets_scan.hpp"
#include "detail/operand_checks.hpp"

#include <Kokkos_Core.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

namespace detail {
// The kernels that run a user's callable are named functors, not KOKKOS_LAMBDAs, so that the
// callable's type is never a template argument of a function holding an extended __host__
// __device__ lambda. On CUDA the callable must still be declared at namespace or class scope: a
// kernel whose template arguments name a type local to a function cannot be launched
// (docs/gpu.md, "Rules nvcc imposes").

/// out(e) = f(in(e)) for every stored value.
template <class T, class In, class Out, class F>
struct apply_values {
  In in;
  Out out;
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t e) const { out(e) = static_cast<T>(f(in(e))); }
};

/// out_ptr(r + 1) = the number of entries of row r whose f(value) is not zero.
template <class T, class InPtr, class InVal, class OutPtr, class F>
struct count_kept_entries {
  InPtr in_ptr;
  InVal in_val;
  OutPtr out_ptr;
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t r) const {
    typename OutPtr::non_const_value_type kept = 0;
    for (auto e = in_ptr(r); e < in_ptr(r + 1); ++e) kept += static_cast<T>(f(in_val(e))) != T{0} ? 1 : 0;
    out_ptr(r + 1) = kept;
  }
};

/// The kept entries of row r, with values f(value), from out_ptr(r) on.
template <class T, class Ptr, class InCol, class InVal, class OutCol, class OutVal, class F>
struct write_kept_entries {
  Ptr in_ptr;
  InCol in_col;
  InVal in_val;
  Ptr out_ptr;
  OutCol out_col;
  OutVal out_val;
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t r) const {
    auto w = out_ptr(r);
    for (auto e = in_ptr(r); e < in_ptr(r + 1); ++e) {
      const T v = static_cast<T>(f(in_val(e)));
      if (v == T{0}) continue;
      out_col(w) = in_col(e);
      out_val(w) = v;
      ++w;
    }
  }
};
/// out(s) = `op` folded left to right over the values of segment s, [ptr(s), ptr(s + 1)): a row of
/// a csr block or a column of a csc one (T{} for an empty segment).
template <class T, class Ptr, class Val, class Out, class Combine>
struct fold_segments {
  Ptr ptr;
  Val val;
  Out out;
  Combine op;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t s) const {
    auto e = ptr(s);
    const auto end = ptr(s + 1);
    T folded{};
    if (e < end) {
      folded = val(e);
      for (++e; e < end; ++e) folded = static_cast<T>(op(folded, val(e)));
    }
    out(s) = folded;
  }
};
}  // namespace detail

/// A matrix with A's structure and values f(a) for every stored a (not collective).
///
/// `f` runs in the policy's execution space: a KOKKOS_LAMBDA or a functor with
/// a KOKKOS_INLINE_FUNCTION call operator. Structure Views are shared with A.
template <matrix_value T, matrix_policy Policy, class F>
  requires std::invocable<const F&, const T&>
[[nodiscard]] dist_matrix<T, Policy> apply(const dist_matrix<T, Policy>& a, F f) {
  detail::require_runtimes_alive();  // kept past the environment: an error, not an abort
  static_assert(!tile_storage<typename Policy::storage_type>,
                "tessera::apply works on element storages (csr, csc, coo, a user's); a tile-stored matrix goes "
                "through to_elements<Policy>(A) first (matrix/convert_tiles.hpp)");
  static_assert(value_array_block<typename dist_matrix<T, Policy>::local_block_type>,
                "tessera::apply and scale rewrite the block's values in place: the storage's block needs them in "
                "one `values` View (capability value_array_block); prune(A, ...) or convert<csr>(A) work on any storage");
  using exec = typename Policy::execution_space;
  auto block = a.local();
  const auto in = a.local().values;
  decltype(block.values) out(std::string("tessera::apply"), in.extent(0));
  Kokkos::parallel_for("tessera::apply", Kokkos::RangePolicy<exec>(0, in.extent(0)),
                       detail::apply_values<T, decltype(in), decltype(out), F>{in, out, f});
  block.values = out;
  return dist_matrix<T, Policy>(detail::assembled_block, a, block);  // A's structure: A's plans
}

namespace detail {
template <class T>
struct times {
  T factor;
  KOKKOS_INLINE_FUNCTION T operator()(const T& v) const { return factor * v; }
};
}  // namespace detail

/// alpha * A (not collective).
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_matrix<T, Policy> scale(const dist_matrix<T, Policy>& a, T alpha) {
  return apply(a, detail::times<T>{alpha});
}

/// A without the entries for which `drop(value)` is true (collective: the
/// global count changes, and columns nobody references leave the column map).
///
/// `drop` runs in the policy's execution space, as apply's `f` does: a KOKKOS_LAMBDA or a functor
/// with a KOKKOS_INLINE_FUNCTION call operator (a plain lambda works on host spaces). With csr
/// storage each rank prunes its block there (a count, a scan, a write, and the column map
/// renumbered; nothing is sent); other storages go through their entries on the host. If `drop`
/// throws on any rank (host spaces that run kernels on the calling thread only: on OpenMP an
/// exception inside a kernel ends the program, device code cannot throw), every rank throws.
template <matrix_value T, matrix_policy Policy, class Predicate>
  requires std::predicate<const Predicate&, const T&>
[[nodiscard]] dist_matrix<T, Policy> prune(const dist_matrix<T, Policy>& a, Predicate drop) {
  detail::require_runtimes_alive();  // kept past the environment: an error, not an abort
  static_assert(!tile_storage<typename Policy::storage_type>,
                "tessera::prune works on element storages (csr, csc, coo, a user's); a tile-stored matrix goes "
                "through to_elements<Policy>(A) first (matrix/convert_tiles.hpp)");
  if constexpr (std::same_as<typename Policy::storage_type, csr>) {
    auto [block, col_map] = a.comm().collectively(
        [&] { return detail::prune_local<typename Policy::execution_space>(a.local(), a.col_map(), drop); });
    return dist_matrix<T, Policy>(detail::assembled_block, a.comm(), a.mapping(), std::move(block), std::move(col_map));
  } else {
    auto kept = a.comm().collectively([&] {
      auto entries = detail::held_triplets(a);
      entries.retain([&](global_index, global_index, const T& v) { return !drop(v); });
      return entries;
    });
    // Every entry stays on its rank, under A's row split.
    return detail::assemble_owned<T, Policy>(a.comm(), a.mapping(), kept, combine::any{});
  }
}

namespace detail {
/// The fused count / scan / write passes of apply_drop_zeros on one rank's block.
template <class Exec, class T, class Mem, class F>
csr_block<T, Mem> apply_drop_zeros_local(const csr_block<T, Mem>& in, const F& f) {
  using exec = Exec;
  using mem = Mem;
  const auto rows = static_cast<std::size_t>(in.rows);
  const auto in_ptr = in.row_ptr;
  const auto in_col = in.col_idx;
  const auto in_val = in.values;
  Kokkos::View<offset_type*, mem> ptr("tessera::apply_drop_zeros::row_ptr", rows + 1);
  Kokkos::parallel_for("tessera::apply_drop_zeros::count", Kokkos::RangePolicy<exec>(0, rows),
                       detail::count_kept_entries<T, decltype(in_ptr), decltype(in_val), decltype(ptr), F>{
                           in_ptr, in_val, ptr, f});
  const offset_type total = inclusive_scan_in_place<exec, mem>(ptr, "tessera::apply_drop_zeros::scan");
  csr_block<T, mem> out{in.rows, in.cols, ptr,
                        Kokkos::View<local_index*, mem>("tessera::apply_drop_zeros::col_idx", static_cast<std::size_t>(total)),
                        Kokkos::View<T*, mem>("tessera::apply_drop_zeros::values", static_cast<std::size_t>(total))};
  const Kokkos::View<const offset_type*, mem> kept_ptr = ptr;
  Kokkos::parallel_for("tessera::apply_drop_zeros::write", Kokkos::RangePolicy<exec>(0, rows),
                       detail::write_kept_entries<T, decltype(kept_ptr), decltype(in_col), decltype(in_val),
                                                  decltype(out.col_idx), decltype(out.values), F>{
                           in_ptr, in_col, in_val, kept_ptr, out.col_idx, out.values, f});
  exec().fence();
  return out;
}
}  // namespace detail

/// A matrix with values f(a) for every stored a, without the entries where f
/// gives zero (collective: only the global count). One fused device pass
/// counts each row's survivors, a scan places them, a second pass writes: the
/// form of prune(apply(A, f), is_zero) that a layer-by-layer loop (SpDNN's
/// bias + ReLU + clamp) wants, with no host round trip. The column map is
/// kept (it may list columns no surviving entry uses). Other storages than csr
/// go through CSR and back (O(nnz), local). If `f` throws on any rank (host
/// execution spaces only: device code cannot throw), every rank throws.
template <matrix_value T, matrix_policy Policy, class F>
  requires std::invocable<const F&, const T&>
[[nodiscard]] dist_matrix<T, Policy> apply_drop_zeros(const dist_matrix<T, Policy>& a, F f) {
  detail::require_runtimes_alive();  // kept past the environment: an error, not an abort
  static_assert(!tile_storage<typename Policy::storage_type>,
                "tessera::apply_drop_zeros works on element storages (csr, csc, coo, a user's); a tile-stored matrix goes "
                "through to_elements<Policy>(A) first (matrix/convert_tiles.hpp)");
  if constexpr (!std::same_as<typename Policy::storage_type, csr>) {
    return convert<typename Policy::storage_type>(apply_drop_zeros(convert<csr>(a), f));
  } else {
    auto out = a.comm().collectively(
        [&] { return detail::apply_drop_zeros_local<typename Policy::execution_space>(a.local(), f); });
    return dist_matrix<T, Policy>(detail::assembled_block, a.comm(), a.mapping(), std::move(out), a.col_map());
  }
}


/// C = A + B (collective). A and B must have the same shape and the same mapping (any distribution).
/// Where both store an entry the two are folded by `combine(a, b)` (summed by default; any
/// `T(T, T)` callable in the execution space, e.g. combine::max or a semiring's addition).
///
/// With csr storage each rank merges its two blocks in the execution space (the column maps, then
/// each row's sorted lists: one pass, no communication but the new entry count); C's column map is
/// the union of A's and B's. Other storages assemble both sides' entries by row.
template <matrix_value T, matrix_policy Policy, class Combine = combine::sum>
[[nodiscard]] dist_matrix<T, Policy> add(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                         Combine combine = {}) {
  static_assert(!tile_storage<typename Policy::storage_type>,
                "tessera::add works on element storages (csr, csc, coo, a user's); a tile-stored matrix goes "
                "through to_elements<Policy>(A) first (matrix/convert_tiles.hpp)");
  a.comm().collectively([&] {
    detail::require_same_ranks("add", a.comm(), b.comm(), "B");
    TESSERA_REQUIRE(a.num_rows() == b.num_rows() && a.num_cols() == b.num_cols(), dimension_mismatch,
                    "add: A is {} x {} but B is {} x {}", a.num_rows(), a.num_cols(), b.num_rows(), b.num_cols());
    TESSERA_REQUIRE(a.mapping() == b.mapping(), dimension_mismatch,
                    "add: A and B are distributed differently; redistribute one of them first");
  });
  if constexpr (std::same_as<typename Policy::storage_type, csr>) {
    auto [block, col_map] = a.comm().collectively([&] {
      return detail::add_local<typename Policy::execution_space>(a.local(), a.col_map(), b.local(), b.col_map(),
                                                                 combine);
    });
    return dist_matrix<T, Policy>(detail::assembled_block, a.comm(), a.mapping(), std::move(block), std::move(col_map));
  } else {
    auto both = detail::held_triplets(a);
    const auto more = detail::held_triplets(b);
    both.rows.insert(both.rows.end(), more.rows.begin(), more.rows.end());
    both.cols.insert(both.cols.end(), more.cols.begin(), more.cols.end());
    both.values.insert(both.values.end(), more.values.begin(), more.values.end());
    // Both sides' entries of a row live on the same rank: assemble in place, folding where both store one.
    return detail::assemble_owned<T, Policy>(a.comm(), a.mapping(), both, combine);
  }
}

/// One value per row: `op` folded over the row's stored values in column order (T{} for a row
/// without entries). The result is split like A's rows. Not collective. `op` is a `T(T, T)`
/// callable in the execution space, as add's `combine`: with csr storage and whole-row
/// distributions each row is folded there, by a work item per row.
template <matrix_value T, matrix_policy Policy, class Combine = combine::sum>
[[nodiscard]] dist_dense<T, Policy> reduce_rows(const dist_matrix<T, Policy>& a, Combine op = {}) {
  dist_dense<T, Policy> out(a.comm(), a.mapping(), 1);
  if constexpr (std::same_as<typename Policy::storage_type, csr> && whole_row_mapping<typename Policy::mapping_type>) {
    using exec = typename Policy::execution_space;
    const auto& block = a.local();
    const auto folded = Kokkos::subview(out.local(), Kokkos::ALL, 0);
    Kokkos::parallel_for("tessera::reduce_rows", Kokkos::RangePolicy<exec>(0, static_cast<std::size_t>(block.rows)),
                         detail::fold_segments<T, decltype(block.row_ptr), decltype(block.values), decltype(folded), Combine>{
                             block.row_ptr, block.values, folded, op});
    exec().fence();
  } else {
    const auto entries = local_triplets(a);
    auto host = Kokkos::create_mirror_view(out.local());
    std::vector<bool> seen(host.extent(0), false);
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const auto r = static_cast<std::size_t>(a.mapping().local_row(entries.rows[k]));
      host(r, 0) = seen[r] ? op(host(r, 0), entries.values[k]) : entries.values[k];
      seen[r] = true;
    }
    tessera::detail::deep_copy(out.local(), host);
  }
  return out;
}

namespace detail {
/// This rank's fold of each column it stores, ascending by global column, each column's values
/// folded in local row order. csr and csc blocks fold in the execution space (a csr block is
/// regrouped by column first, stably); other storages fold their triplets on the host.
template <matrix_value T, matrix_policy Policy, class Combine>
std::vector<std::pair<global_index, T>> column_partials(const dist_matrix<T, Policy>& a, const Combine& op) {
  using storage = typename Policy::storage_type;
  std::vector<std::pair<global_index, T>> partial;
  if constexpr (std::same_as<storage, csr> || std::same_as<storage, csc>) {
    using exec = typename Policy::execution_space;
    const auto by_columns = [&] {
      if constexpr (std::same_as<storage, csc>) return a;
      else return convert<csc>(a);
    }();
    const auto& block = by_columns.local();
    Kokkos::View<T*, typename Policy::memory_space> folded(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tessera::reduce_columns")), static_cast<std::size_t>(block.cols));
    Kokkos::parallel_for("tessera::reduce_columns", Kokkos::RangePolicy<exec>(0, static_cast<std::size_t>(block.cols)),
                         fold_segments<T, decltype(block.col_ptr), decltype(block.values), decltype(folded), Combine>{
                             block.col_ptr, block.values, folded, op});
    exec().fence();
    const auto host_folded = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, folded);
    const auto host_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, block.col_ptr);
    const auto host_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, by_columns.col_map());
    for (std::size_t c = 0; c < host_folded.extent(0); ++c)
      if (host_ptr(c + 1) > host_ptr(c)) partial.emplace_back(host_map(c), host_folded(c));
  } else {
    std::map<global_index, T> folded;
    const auto entries = local_triplets(a);
    for (std::size_t k = 0; k < entries.size(); ++k) {
      auto [it, fresh] = folded.try_emplace(entries.cols[k], entries.values[k]);
      if (!fresh) it->second = op(it->second, entries.values[k]);
    }
    partial.assign(folded.begin(), folded.end());
  }
  return partial;
}
}  // namespace detail

/// One value per column: `op` folded over the column's stored values on every
/// rank (T{} for an empty column), as a num_cols x 1 block split evenly by
/// rows (collective: each rank's partial results go to the column's owner,
/// which folds them in rank order). `op` is a `T(T, T)` callable in the
/// execution space and on the host, as add's `combine`: with csr and csc storage
/// each rank folds its columns in the execution space. If `op` throws on any
/// rank (host execution spaces), every rank throws.
template <matrix_value T, matrix_policy Policy, class Combine = combine::sum>
[[nodiscard]] dist_dense<T, Policy> reduce_columns(const dist_matrix<T, Policy>& a, Combine op = {}) {
  const stats_scope scope(a.comm(), "reduce_columns");
  dist_dense<T, Policy> out(a.comm(), a.num_cols(), 1);
  // `op` is the user's: both folds run inside an agreement, so a throw on one rank is raised on all.
  const auto partial = a.comm().collectively([&] { return detail::column_partials(a, op); });
  struct record {
    global_index col;
    T value;
  };
  bucket_builder<record> outgoing(a.comm().size());
  for (const auto& [col, value] : partial) outgoing.count(out.mapping().row_owner(col));
  outgoing.allocate();
  for (const auto& [col, value] : partial) outgoing.push(out.mapping().row_owner(col), record{col, value});
  const auto incoming = exchange_records(typename Policy::backend_type{}, a.comm(), std::move(outgoing).finish());
  a.comm().collectively([&] {
    auto host = Kokkos::create_mirror_view(out.local());
    std::vector<bool> seen(host.extent(0), false);
    for (const auto& r : incoming.data) {
      const auto i = static_cast<std::size_t>(out.mapping().local_row(r.col));
      host(i, 0) = seen[i] ? op(host(i, 0), r.value) : r.value;
      seen[i] = true;
    }
    tessera::detail::deep_copy(out.local(), host);
  });
  return out;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_ELEMENTWISE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_ELEMENTWISE_HPP
#endif
