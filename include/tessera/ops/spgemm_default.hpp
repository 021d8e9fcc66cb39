#pragma once
/// @file
/// Distributed SpGEMM C = A * B (optionally C<M> = A * B, or C = C ⊕ A * B) over any distribution
/// whose ranks own whole rows or that re-tiles a process grid, any storage, any semiring, under
/// an optional memory budget; the plans that keep its inspector's work.
///
/// On whole rows, the 1-D algorithm of the SGA paper, improved: a rank fetches only the rows of B
/// its local A references that other ranks own, one-sided, per run of consecutive rows of an owner
/// (spgemm/fetch.hpp), and multiplies them node-locally (spgemm/local_product.hpp: row-wise
/// Gustavson by default on host spaces, expand-sort-compress for masks and budgets, Kokkos-Kernels
/// on request); C is split like A's rows. On grids, sparse SUMMA and its 3-D form (grid/).
///
/// This header compiles spgemm(A, B) and its plans with the execution space's default kernel; it
/// leaves out Kokkos-Kernels' SpGEMM (spgemm_kernel::kokkos_kernels, spgemm/kokkos_kernels_product.hpp)
/// where Kokkos has no device backend, and with it ~70 MB of compiler memory per unit. Calls with
/// options need <tessera/ops/spgemm.hpp>, which adds it (a unit that calls them with this header
/// alone fails to compile at multiply_referenced_kokkos_kernels' declaration).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_DEFAULT_HPP
#endif

#include "../core/error.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../matrix/redistribute.hpp"
#include "../policy.hpp"
#include "detail/operand_checks.hpp"
#include "kept_plans.hpp"
#include "detail/structure_fingerprint.hpp"
#include "detail/tiles_as_elements.hpp"
#include "elementwise.hpp"
#include "grid/spgemm_grid.hpp"
#include "semiring.hpp"
#include "spgemm/fetch.hpp"
#include "spgemm/local_product.hpp"
#include "spgemm/options.hpp"
#include "transpose.hpp"

#include <Kokkos_Core.hpp>
// Kokkos-Kernels' SpGEMM is the default kernel on device spaces (local_product.hpp).
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL) || \
    defined(KOKKOS_ENABLE_OPENMPTARGET)
#include "spgemm/kokkos_kernels_product.hpp"
#endif

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace tessera {

namespace detail {

/// A valued mask's explicit zeros: what prune drops from it before it selects (a functor, callable
/// in any execution space).
template <class T>
struct is_zero {
  KOKKOS_INLINE_FUNCTION bool operator()(const T& v) const { return v == T{0}; }
};

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

/// `m` on the process grid of `other` (moved there by redistribute when its grid differs, counted
/// under "redistribute"; returned as it is otherwise, and on whole-row distributions).
template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> on_grid_of(const dist_matrix<T, Policy>& m, const dist_matrix<T, Policy>& other) {
  if constexpr (retiling_grid_mapping<typename Policy::mapping_type>) {
    if (!(m.mapping().grid() == other.mapping().grid())) {
      const auto& own = m.mapping();
      return redistribute(m, other.mapping().with_tiles(own.row_tiles(), own.col_tiles(), std::vector<int>{}));
    }
  }
  return m;
}

/// A transposed operand on the grid of the operand it meets: a grid's transpose lives on the
/// transposed (q x p) grid, which a p != q product cannot use as it is.
template <matrix_value T, matrix_policy Policy>
dist_matrix<T, Policy> transposed_for(const dist_matrix<T, Policy>& t, const dist_matrix<T, Policy>& other) {
  return on_grid_of(transpose(t), other);
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
    const auto selecting = prune(*mask, detail::is_zero<T>{});
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
  /// A plan stays where it was made (it holds windows, a shared context and registrations): it
  /// is neither copied nor moved, so no moved-from plan exists. Share it by reference, through
  /// the plans kept with a matrix (kept_plans.hpp) or a std::shared_ptr.
  spgemm_plan(const spgemm_plan&) = delete;
  spgemm_plan& operator=(const spgemm_plan&) = delete;

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
  [[nodiscard]] bool fits(const matrix& a, const matrix& b, const spgemm_options<Semiring>& options) const {
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
    a.comm().collectively([&] { require_fits(a, b); });
    if constexpr (on_rows) {
      // The user's options (batches: where to report) are this call's; the plan's decide the rest.
      return detail::multiply<detail::compiled_paths::any>(a, b, mask, *options_, schedule_);
    } else {
      return detail::multiply_on_grid(a, b, mask, *options_, *grid_);
    }
  }

  /// The plain product through the plan (plus-times, no mask, the space's default kernel): what
  /// spgemm(A, B) without options calls. It compiles none of the paths that options select
  /// (expand-sort-compress, Kokkos-Kernels on host spaces), so it needs a plan made with default
  /// options (refused otherwise).
  [[nodiscard]] matrix multiply_plain(const matrix& a, const matrix& b)
    requires on_rows && std::is_same_v<Semiring, semirings::plus_times>
  {
    a.comm().collectively([&] {
      TESSERA_REQUIRE(options_->kernel == spgemm_kernel::automatic && options_->memory_budget_bytes == 0,
                      invalid_argument,
                      "spgemm_plan::multiply_plain: the plan was made with a kernel or a memory budget; use "
                      "multiply or apply");
      require_fits(a, b);
    });
    return detail::multiply<detail::compiled_paths::plain>(a, b, static_cast<const matrix*>(nullptr), *options_,
                                                          schedule_);
  }

  /// Take this call's semiring object and batch report (spgemm_options::ring, ::batches), which a
  /// kept plan must not hold over from the call that made it.
  void use_call_options(const spgemm_options<Semiring>& options) { options_.emplace(options); }

 private:
  // multiply's check on this rank (throws; the callers agree on it).
  void require_fits(const matrix& a, const matrix& b) const {
    TESSERA_REQUIRE(fits(a, b, *options_), invalid_argument,
                    "spgemm_plan: A's structure or B's distribution is not what the plan was made for; make a new "
                    "plan");
  }

  std::optional<spgemm_options<Semiring>> options_;  // re-made per call: a semiring need not be assignable
  mapping_type a_mapping_, b_mapping_;
  mutable detail::structure_fingerprint<1> a_cols_;  // remembers arrays that matched
  detail::fetch_schedule schedule_;
  std::optional<detail::grid_product_setup<mapping_type>> grid_;
};

/// The plan of A * B under `options`, made on first use and kept in A.plan_cache() (collective;
/// kept_plans.hpp: the plans of A's products with several Bs or options, agreed over the ranks).
template <matrix_value T, matrix_policy Policy, class Semiring>
spgemm_plan<T, Policy, Semiring>& spgemm_plan_for(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                                  const spgemm_options<Semiring>& options = {}) {
  using plan_type = spgemm_plan<T, Policy, Semiring>;
  auto& plan = kept_plan<plan_type>(
      a.comm(), a.plan_cache(), [&](const plan_type& kept) { return kept.fits(a, b, options); },
      [&] { return std::make_shared<plan_type>(a, b, options); });
  plan.use_call_options(options);
  return plan;
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


/// C = A * B over a semiring, split like A's rows, in A's storage (collective). Needs whole rows
/// on each rank; storages other than csr are converted to CSR and back (O(nnz), local). Traffic is
/// counted under "spgemm". `options.transpose_a` / `transpose_b` multiply A^T / B^T; the options
/// also choose the kernel, a memory budget and the semiring, and a unit that passes them compiles
/// every path they can select (spgemm(A, B) without options compiles one).
template <matrix_value T, matrix_policy Policy, class Semiring = semirings::plus_times>
[[nodiscard]] dist_matrix<T, Policy> spgemm(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b,
                                            const spgemm_options<Semiring>& options) {
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
    if constexpr (retiling_grid_mapping<typename Policy::mapping_type>) {
      // B on another grid of A's ranks (B = transpose(A) of a p x q A lives on the q x p grid):
      // SUMMA meets A's grid rows with B's grid columns, so B moves to A's grid first.
      const bool other_grid =
          options.layers == 1 && !options.transpose_a && !options.transpose_b && a.comm().size() == b.comm().size() &&
          a.comm().collectively([&] { return !(a.mapping().grid() == b.mapping().grid()); });
      if (other_grid) return spgemm(a, detail::on_grid_of(b, a), options);
    }
    auto* plan = options.transpose_a || options.transpose_b ? nullptr : &spgemm_plan_for(a, b, options);
    return detail::product(a, b, static_cast<const dist_matrix<T, Policy>*>(nullptr), options, plan);
  } else {
    return a;  // refused above; not instantiating the algorithm keeps the compiler's report to that sentence
  }
}

/// C = A * B over plus-times with the default options (collective; as spgemm(A, B, options)
/// otherwise). On whole rows this compiles only the product the execution space runs by
/// default (Gustavson on host spaces, Kokkos-Kernels or cuSPARSE on devices): neither transposes,
/// masks, budgets nor another kernel, about half the compile time of the options' form.
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_matrix<T, Policy> spgemm(const dist_matrix<T, Policy>& a, const dist_matrix<T, Policy>& b) {
  static_assert(TESSERA_SPGEMM_CAN_MULTIPLY(typename Policy::mapping_type), TESSERA_SPGEMM_NEEDS_WHOLE_ROWS);
  if constexpr (whole_row_mapping<typename Policy::mapping_type> && !tile_storage<typename Policy::storage_type>)
    return spgemm_plan_for(a, b, spgemm_options<>{}).multiply_plain(a, b);
  else
    return spgemm(a, b, spgemm_options<>{});  // grids and tiles (multiplied on a grid): SUMMA takes the options' form
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

#ifdef TESSERA_USE_INSTANTIATIONS  // compiled once in tessera::instantiations, not in this unit
#include "../instantiations/use.hpp"
TESSERA_FOR_EACH_INSTANTIATED_POLICY(TESSERA_INSTANTIATE_SPGEMM, extern)
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_DEFAULT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPGEMM_DEFAULT_HPP
#endif
