#pragma once
/// @file
/// spmm_plan: the inspector/executor of the 1-D SpMM. The inspector finds exactly which remote
/// rows of X each rank's columns need; the executor fetches them one-sided (one get per owner:
/// the owner packs the requested rows into one block when they form several runs, else the single
/// run is read from its staged X) while the rows that need no remote data are computed, then
/// finishes the rest. Written once against the backend concept.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_PLAN_HPP
#endif

#include "../../core/deep_copy.hpp"
#include "column_major.hpp"
#include "in_place_reads.hpp"
#include "options.hpp"
#include "workspace.hpp"
#include "../../comm/buckets.hpp"
#include "../../comm/communicator.hpp"
#include "../../concepts/backend.hpp"
#include "../../comm/mpi_memory.hpp"
#include "../../comm/request.hpp"
#include "../../comm/segment.hpp"
#include "../../core/error.hpp"
#include "../../core/scratch_pool.hpp"
#include "../../policy.hpp"
#include "../../kernels/gather_rows.hpp"
#include "../../kernels/offset_width.hpp"
#include "../../kernels/spmm_cusparse.hpp"
#include "../../kernels/spmm_balanced.hpp"
#include "../../kernels/spmm_rows.hpp"
#include "../../comm/node_shared_array.hpp"
#include "../../matrix/dist_dense.hpp"
#include "../../matrix/dist_matrix.hpp"
#include "../../matrix/as_compressed_rows.hpp"
#include "../../storage/csr.hpp"
#include "../../matrix/to_view.hpp"
#include "../detail/compiled_paths.hpp"
#include "../detail/operand_checks.hpp"
#include "../detail/structure_fingerprint.hpp"

#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
// GCC reports -Wmaybe-uninitialized inside Kokkos-Kernels' spmv functors at -O3 even from a system header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <KokkosKernels_config.h>
#include <KokkosSparse_spmv.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "../../core/format.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tessera {


/// The plan of Y = A * X for one sparsity structure of A, one row split of X and k columns.
///
/// Build it once (collective), apply it many times (collective): SpDNN-style
/// loops multiply by the same A again and again. spmm(A, X) keeps plans in
/// A.plan_cache(), so it inspects only on the first call.
///
/// A may use any storage: csr (or any storage with compressed rows) is read in place, others are
/// converted to CSR on every apply (matrix/as_compressed_rows.hpp). The distribution needs one
/// capability, whole rows on each rank (whole_row_mapping); X may be split differently from A.
template <matrix_value T, matrix_policy Policy>
class spmm_plan {
  static_assert(whole_row_mapping<typename Policy::mapping_type>,
                "tessera::spmm needs a distribution whose ranks own whole rows (capability whole_row_mapping: "
                "row_owner, local_row, with_shape); 2-D and replicated distributions do not have it: redistribute "
                "A to row_block (or your own row distribution) first");

 public:
  /// A plan stays where it was made (it holds windows, a shared context and registrations): it
  /// is neither copied nor moved, so no moved-from plan exists. Share it by reference, through
  /// the plans kept with a matrix (kept_plans.hpp) or a std::shared_ptr.
  spmm_plan(const spmm_plan&) = delete;
  spmm_plan& operator=(const spmm_plan&) = delete;

  using matrix_type = dist_matrix<T, Policy>;
  using dense_type = dist_dense<T, Policy>;
  using memory_space = typename Policy::memory_space;
  using execution_space = typename Policy::execution_space;
  using backend_context = typename Policy::backend_type::context;
  using mapping_type = typename Policy::mapping_type;
  using rows_block = csr_block<T, memory_space>;
  /// The windows X is staged in (comm/mpi_memory.hpp decides their memory).
  using window_type = typename detail::spmm_workspace<T, Policy>::window_type;

 private:
  // Whether spmm_kernel::kokkos_kernels runs cuSPARSE's SpMM directly (kernels/spmm_cusparse.hpp,
  // 32-bit offsets): on CUDA, for float or double, where Kokkos-Kernels has cuSPARSE. Through
  // KokkosSparse::spmv a unit compiled 64 spmv kernel variants of Kokkos-Kernels' own beside the
  // cuSPARSE call it makes (86% of the device code of a unit with spmm's options).
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
  static constexpr bool spmm_through_cusparse =
      std::is_same_v<execution_space, Kokkos::Cuda> && std::is_same_v<local_index, int> &&
      (std::is_same_v<T, double> || std::is_same_v<T, float>);
#else
  static constexpr bool spmm_through_cusparse = false;
#endif
  // Whether the plan's kernels run where node-shared memory (host memory) is read with plain loads:
  // X read in place, and the per-column owners that needs, exist only then.
  static constexpr bool reads_host_memory = std::is_same_v<memory_space, Kokkos::HostSpace> &&
                                            Kokkos::SpaceAccessibility<execution_space, Kokkos::HostSpace>::accessible;

 public:

  /// Inspect A's columns against X's row split (collective).
  spmm_plan(const matrix_type& a, const typename Policy::mapping_type& x_rows, global_index k,
            spmm_options options = {})
      : comm_(a.comm()), x_rows_(x_rows), k_(k), options_(options) {
    const profiling_region region("tessera::spmm_plan");
    comm_.collectively([&] {
      TESSERA_REQUIRE(a.num_cols() == x_rows.global_rows(), dimension_mismatch,
                      "spmm: A is {} x {} but X has {} rows", a.num_rows(), a.num_cols(), x_rows.global_rows());
      TESSERA_REQUIRE(x_rows.num_ranks() == comm_.size(), dimension_mismatch,
                      "spmm: X's rows are split over {} ranks but A's communicator has {}", x_rows.num_ranks(),
                      comm_.size());
      TESSERA_REQUIRE(k >= 0, invalid_argument, "spmm: X has {} columns", k);
      if constexpr (spmm_through_cusparse)
        TESSERA_REQUIRE(options.kernel != spmm_kernel::kokkos_kernels ||
                            a.local().nnz() <= static_cast<decltype(a.local().nnz())>(std::numeric_limits<int>::max()),
                        unsupported,
                        "spmm: spmm_kernel::kokkos_kernels on CUDA runs cuSPARSE with 32-bit offsets, and this "
                        "rank's block has {} nonzeros; use spmm_kernel::tessera",
                        a.local().nnz());
      inspect(compressed_rows(a), a.col_map(), x_rows);
    });
    // A product nobody fetches for (block-diagonal A, one rank) skips the barriers.
    std::vector<std::int64_t> fetches{runs_.empty() ? 0 : 1};
    comm_.allreduce_inplace(fetches, MPI_MAX);
    anyone_fetches_ = fetches[0] > 0;
    const auto my_rows = static_cast<std::size_t>(x_rows.extents(comm_.rank()).rows);
    if (anyone_fetches_) plan_packing(my_rows);  // no exchange (and no traffic) when nobody fetches
    // Windows to stage X in only where someone fetches (agreed: every rank makes them or none):
    // for a width of 65,536 on a GPU they were two host windows of 256 MiB, allocated for nothing.
    if (anyone_fetches_) {
      workspace_ = detail::spmm_workspace<T, Policy>::shared(comm_, x_rows, k_);
      workspace_->reserve_staging(packed_base_ + pack_rows_.size() * static_cast<std::size_t>(k_));
    }
    pack_rows_view_ = to_view<local_index, memory_space>(pack_rows_, "tessera::spmm::pack_rows");
  }

  /// Y = A * X (collective). A must have the structure the plan was made for (its values may
  /// change); X and Y must live on the plan's ranks, and Y must not share memory with X or A.
  /// `Paths` = detail::compiled_paths::plain (what spmm(A, X) without options uses) compiles
  /// tessera's kernel only, not Kokkos-Kernels' spmv (two thirds of such a unit's code), and needs
  /// a plan made for that kernel.
  ///
  /// When X lies in node-shared memory on every rank (share_on_node) and every rank this plan
  /// fetches from shares the reader's node, the rows are read where they lie instead of fetched,
  /// as the plan's spmm_options::read_x_in_place allows (agreed in the allreduce that agrees on
  /// the checks; spmm(A, X) agrees in its plan lookup).
  template <detail::compiled_paths Paths = detail::compiled_paths::any>
  void apply(const matrix_type& a, const dense_type& x, dense_type& y) {
    const rows_block block = compressed_rows(a);
    // The checks and the in-place answer in one allreduce (its least and, negated, greatest).
    std::exception_ptr failure;
    std::vector<std::int64_t> answers{1, -1};
    try {
      check(block, a, x, y);
      const std::int64_t mine = in_place_answer(x);
      answers = {mine, -mine};
    } catch (...) {
      failure = std::current_exception();
    }
    comm_.agree(failure, answers);
    apply_checked<Paths>(block, x, y, agreed_read(answers));
  }

  /// How apply_checked reads the rows of X that other ranks own.
  enum class x_rows_read {
    fetched,   ///< staged by their owners and fetched through the backend into a halo
    in_place,  ///< read where they lie, in X's node-shared memory (all ranks agreed: in_place_answer)
  };

  /// This rank's answer on reading X in place, for an agreement over the ranks (spmm's kept-plan
  /// lookup makes it): 2 + the id of X's node-shared memory when X lies in node-shared memory of
  /// the contiguous layout (share_on_node), this plan runs tessera's kernel and fetches, its
  /// options' read_x_in_place allows it (by default: with huge pages, or a small X), and every rank it fetches
  /// from shares this rank's node; otherwise 1. Not collective.
  [[nodiscard]] std::int64_t in_place_answer(const dense_type& x) const {
    if constexpr (reads_host_memory) {
      const auto& shared = x.node_shared();
      const auto k = static_cast<std::size_t>(x.num_vectors());
      if (!anyone_fetches_ || shared == nullptr || options_.kernel != spmm_kernel::tessera || k == 0 ||
          options_.read_x_in_place == x_in_place::never ||
          (options_.read_x_in_place == x_in_place::automatic && !shared->huge_pages() &&
           shared->node_span().size() * sizeof(T) > x_in_place_small_bytes) ||
          shared->layout() != node_layout::contiguous || !shared->comm().same_ranks_as(comm_))
        return 1;
      const auto fits_on_node = [&](int rank) {
        return shared->on_node(rank) && shared->offset_on_node(rank) % k == 0;
      };
      if (!fits_on_node(comm_.rank()) || shared->node_span().size() / k > static_cast<std::size_t>(INT_MAX)) return 1;
      for (const auto& r : runs_)
        if (!fits_on_node(r.owner)) return 1;
      return 2 + static_cast<std::int64_t>(shared->id());
    } else {
      return 1;
    }
  }

  /// The read every rank agreed on: in place where every rank answered the same in-place answer
  /// (`answers`: the least answer and the negated greatest, in_place_answer's over the ranks).
  [[nodiscard]] static x_rows_read agreed_read(const std::vector<std::int64_t>& answers) noexcept {
    return answers[0] >= 2 && answers[0] == -answers[1] ? x_rows_read::in_place : x_rows_read::fetched;
  }

  /// Collective: whether every rank reads X in place (in_place_answer agreed by one allreduce),
  /// or fetches. No communication when nobody fetches or X's memory is not the host's.
  [[nodiscard]] x_rows_read agree_x_rows_read(const dense_type& x) const {
    if constexpr (reads_host_memory) {
      if (!anyone_fetches_) return x_rows_read::fetched;
      const std::int64_t mine = in_place_answer(x);
      std::vector<std::int64_t> answers{mine, -mine};
      comm_.allreduce_inplace(answers, MPI_MIN);
      return agreed_read(answers);
    } else {
      return x_rows_read::fetched;
    }
  }

  /// A's block as CSR: in place for compressed rows, else converted (see as_compressed_rows).
  [[nodiscard]] static rows_block compressed_rows(const matrix_type& a) {
    return as_compressed_rows<typename Policy::storage_type>(execution_space{}, a.local());
  }

  /// Whether apply would pass its checks on this rank for A (as `block`, its compressed rows),
  /// X and Y (not collective: spmm() agrees over the ranks in the kept-plan lookup, so a product
  /// through a kept plan is agreed once, not twice).
  [[nodiscard]] bool accepts(const rows_block& block, const matrix_type& a, const dense_type& x,
                             const dense_type& y) const noexcept {
    try {
      check(block, a, x, y);
      return true;
    } catch (...) {
      return false;
    }
  }

  /// Y = A * X for operands every rank has checked (accepts, agreed): apply without its agreement.
  /// `read` must be agreed too (agree_x_rows_read, or the same answer from in_place_answer on
  /// every rank).
  template <detail::compiled_paths Paths = detail::compiled_paths::any>
  void apply_checked(const rows_block& block, const dense_type& x, dense_type& y,
                     x_rows_read read = x_rows_read::fetched) {
    if constexpr (Paths == detail::compiled_paths::plain)
      TESSERA_REQUIRE(options_.kernel == spmm_kernel::tessera, invalid_argument,
                      "spmm_plan: the plain product runs tessera's kernel; this plan was made for another");
    stats_scope scope(comm_, "spmm");
    const auto k = static_cast<std::size_t>(x.num_vectors());  // k_ unless the plan serves any width
    if (!anyone_fetches_) {
      apply_local<Paths>(block, x, y);
      return;
    }
    if (read == x_rows_read::in_place) {
      apply_in_place(block, x, y);
      return;
    }
    apply_fetching<Paths>(block, x, y, k);
  }

 private:
  // The checks of apply on this rank (throws; apply agrees on them).
  void check(const rows_block& block, const matrix_type& a, const dense_type& x, const dense_type& y) const {
    {
      detail::require_same_ranks("spmm", comm_, a.comm(), "A");
      detail::require_same_ranks("spmm", comm_, x.comm(), "X");
      detail::require_same_ranks("spmm", comm_, y.comm(), "Y");
      detail::require_no_alias("spmm", y.local(), "Y", x.local(), "X");
      detail::require_no_alias("spmm", y.local(), "Y", block.values, "A's values");
      TESSERA_REQUIRE(fits(x.mapping(), x.num_vectors(), options_), dimension_mismatch,
                      "spmm: X ({} x {}) is not split as the plan expects ({} x {})", x.num_rows(), x.num_vectors(),
                      x_rows_.global_rows(), k_);
      TESSERA_REQUIRE(same_rows(y.mapping(), a.mapping()) && y.num_vectors() == x.num_vectors(), dimension_mismatch,
                      "spmm: Y ({} x {}) must be split like A's rows, with X's {} columns", y.num_rows(), y.num_vectors(),
                      x.num_vectors());
      TESSERA_REQUIRE(a.local_rows() == rows_ && structure_.matches(block.row_ptr, block.col_idx, a.col_map()),
                      invalid_argument,
                      "spmm: A's sparsity structure differs from the one the plan was made for; make a new plan "
                      "(spmm(A, X) makes one per matrix)");
    }
  }

  template <detail::compiled_paths Paths>
  void apply_fetching(const rows_block& block, const dense_type& x, dense_type& y, std::size_t k) {
    auto& ws = *workspace_;
    ws.reserve_halo(static_cast<std::size_t>(halo_rows_));
    using window_matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename window_type::memory_space,
                                       Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    // Stage this rank's X where the others can fetch it: whole (for requesters that read
    // one run from me) and/or the rows each packing requester needs, one block per requester.
    const window_type& staging = ws.staging[ws.next_staging];
    if (anyone_fetches_) ws.next_staging ^= 1;
    if (stage_x_) {
      const window_matrix staged(staging.local().data(), x.local().extent(0), k);
      tessera::detail::deep_copy(staged, x.local());
    }
    if (!pack_rows_.empty() && k > 0) pack(x, window_matrix(staging.local().data() + packed_base_, pack_rows_.size(), k));
    execution_space exec;
    if (anyone_fetches_) {
      fence_before_mpi(exec);
      ws.context->barrier();
    }

    const Kokkos::View<T**, Kokkos::LayoutRight, memory_space> halo =
        Kokkos::subview(ws.halo, std::make_pair(std::size_t{0}, static_cast<std::size_t>(halo_rows_)), Kokkos::ALL());
    const auto landing = Kokkos::subview(ws.halo_landing,
                                         std::make_pair(std::size_t{0}, static_cast<std::size_t>(halo_rows_)), Kokkos::ALL());
    std::vector<request> pending;
    pending.reserve(runs_.size());
    for (const auto& r : runs_)
      pending.push_back(ws.context->get_nb(staging.segment_handle(), r.owner, r.at,
                                           std::span<T>(landing.data() + static_cast<std::size_t>(r.halo_at) * k,
                                                        static_cast<std::size_t>(r.count) * k)));
    const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space> x_local = x.local();
    if constexpr (Paths == detail::compiled_paths::any) {
      if (options_.kernel == spmm_kernel::kokkos_kernels) {
        wait_all(pending);
        copy_from_mpi(halo, landing);
        apply_kokkos_kernels(block, x_local, halo, y);
        close(ws);
        return;
      }
    }
    const bool streaming = y.local().span() * sizeof(T) >= options_.streaming_store_bytes;
    if (k > 0) multiply_rows(exec, interior_rows_, interior_state_, block, x_local, halo, y, streaming);
    wait_all(pending);
    copy_from_mpi(halo, landing);
    if (k > 0) multiply_rows(exec, boundary_rows_, boundary_state_, block, x_local, halo, y, streaming);
    exec.fence();
    close(ws);
  }

 public:
  /// Rows of X this rank fetches per product, and the one-sided gets that fetch them.
  [[nodiscard]] std::size_t halo_rows() const noexcept { return static_cast<std::size_t>(halo_rows_); }
  [[nodiscard]] std::size_t gets_per_apply() const noexcept { return runs_.size(); }
  /// Owners that pack this rank's rows into one block (fetched with one get each).
  [[nodiscard]] std::size_t packed_owners() const noexcept { return packed_owners_; }
  [[nodiscard]] global_index num_vectors() const noexcept { return k_; }
  /// Whether the plan multiplies X of any width, not only num_vectors(): when no rank fetches rows
  /// of X (one rank, a block-diagonal A, data-parallel SpDNN) nothing the plan holds depends on
  /// the width, with tessera's kernel. SpDNN's batches shrink as images die: one plan per layer
  /// serves every width (on a GPU, remaking a plan per layer and width cost more than the products).
  [[nodiscard]] bool any_width() const noexcept { return !anyone_fetches_ && options_.kernel == spmm_kernel::tessera; }
  /// The row split of X the plan was made for.
  [[nodiscard]] const mapping_type& x_rows() const noexcept { return x_rows_; }
  [[nodiscard]] const spmm_options& options() const noexcept { return options_; }
  /// Whether this plan is the one for an X split by `x_rows` with `k` columns, under `options`.
  [[nodiscard]] bool fits(const mapping_type& x_rows, global_index k, const spmm_options& options) const {
    // X's mapping carries its width: another width is the same split when the rows are.
    const bool same_split = k == k_ ? x_rows == x_rows_ : any_width() && same_rows(x_rows, x_rows_);
    return same_split && options.kernel == options_.kernel &&
           options.streaming_store_bytes == options_.streaming_store_bytes &&
           options.read_x_in_place == options_.read_x_in_place;
  }

 private:
  // With a passive-target backend the double-buffered staging orders the next overwrite (see
  // spmm_workspace); otherwise the staged X's owner must keep serving until every reader is done.
  void close(detail::spmm_workspace<T, Policy>& ws) {
    if constexpr (!is_passive_target<typename Policy::backend_type>)
      if (anyone_fetches_) ws.context->barrier();
  }

  // The product when no rank fetches: every row reads this rank's X, no staging, no barrier.
  template <detail::compiled_paths Paths>
  void apply_local(const rows_block& block, const dense_type& x, dense_type& y) {
    const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space> x_local = x.local();
    const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space> no_halo;
    if constexpr (Paths == detail::compiled_paths::any) {
      if (options_.kernel == spmm_kernel::kokkos_kernels) {
        apply_kokkos_kernels(block, x_local, no_halo, y);
        return;
      }
    }
    execution_space exec;
    const bool streaming = y.local().span() * sizeof(T) >= options_.streaming_store_bytes;
    // Every row is interior: a boundary row reads a fetched row, and nobody fetches.
    if (x.num_vectors() > 0) multiply_rows(exec, interior_rows_, interior_state_, block, x_local, no_halo, y, streaming);
    exec.fence();
  }

  // The product with X's rows read where they lie in the node's shared memory (agreed on every
  // rank): the node's rows are one array, so every entry reads through one base pointer.
  void apply_in_place(const rows_block& block, const dense_type& x, dense_type& y) {
    if constexpr (reads_host_memory) {
      const node_shared_array<T>& shared = *x.node_shared();
      const auto k = static_cast<std::size_t>(x.num_vectors());
      in_place_.prepare(Kokkos::View<const local_index*, memory_space>(block.col_idx), rows_, shared, k);
      const auto node = shared.node_span();
      const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space> x_node(node.data(), node.size() / k, k);
      const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space> no_halo;
      // Every rank's writes to its X before the product, then its reads before anyone writes again.
      shared.sync();
      comm_.barrier();
      shared.sync();
      execution_space exec;
      const bool streaming = y.local().span() * sizeof(T) >= options_.streaming_store_bytes;
      kernels::spmm_rows_for_space<execution_space, T, memory_space>(exec, in_place_.all_rows(), in_place_.state(),
                                                                     block.row_ptr, in_place_.source(), block.values, x_node, no_halo,
                                                                     y.local(), streaming);
      exec.fence();
      shared.sync();
      comm_.barrier();
    }
  }

  // One list of rows through the kernel of the plan's execution space.
  void multiply_rows(const execution_space& exec, const Kokkos::View<const local_index*, memory_space>& rows,
                     kernels::spmm_rows_state<T, memory_space>& state, const rows_block& block,
                     const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space>& x_local,
                     const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space>& halo, dense_type& y,
                     bool streaming) const {
    kernels::spmm_rows_for_space<execution_space, T, memory_space>(exec, rows, state, block.row_ptr, x_source_,
                                                                   block.values, x_local, halo, y.local(), streaming);
  }

  // X gathered in A's column-map order (LayoutLeft, as Kokkos-Kernels' multivector spmv wants), then spmv.
  void apply_kokkos_kernels(const rows_block& b, const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space>& x_local,
                            const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space>& halo, dense_type& y) {
    const auto cols = static_cast<std::size_t>(sources_.row.extent(0));
    const auto k = static_cast<std::size_t>(k_);
    const auto rows = static_cast<std::size_t>(b.rows);  // Y's local rows (checked: same rows as A)
    // Both are written whole before they are read (beta = 0: the product never reads `result`), so
    // they come from the scratch pool uninitialised: no allocation, zeroing or (on a GPU) cudaFree,
    // which waits for the whole device, per product. Fenced before the pool has them back.
    using column_major = Kokkos::View<T**, Kokkos::LayoutLeft, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const scratch<T, memory_space> gathered_memory(cols * k), result_memory(rows * k);
    const column_major gathered(gathered_memory.view().data(), cols, k), result(result_memory.view().data(), rows, k);
    detail::gather_by_column<execution_space, T, memory_space>(sources_, x_local, halo, gathered);
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
    if constexpr (spmm_through_cusparse) {
      // cuSPARSE with 32-bit offsets (the plan checked the block's size), converted on the first
      // apply and kept: A's structure is the plan's.
      if (row_ptr32_from_ != b.row_ptr.data()) {
        row_ptr32_ = kernels::offsets_as<int>(execution_space{}, Kokkos::View<const offset_type*, memory_space>(b.row_ptr));
        row_ptr32_from_ = b.row_ptr.data();
      }
      const kernels::csr32<T, memory_space> a32{b.rows, b.cols, row_ptr32_, b.col_idx, b.values};
      kernels::spmm_cusparse(execution_space{}, a32, Kokkos::View<const T**, Kokkos::LayoutLeft, memory_space>(gathered),
                             Kokkos::View<T**, Kokkos::LayoutLeft, memory_space>(result));
    } else
#endif
    {
      const KokkosSparse::CrsMatrix<T, local_index, typename Policy::device_type, void, offset_type> crs(
          "tessera::spmm::A", b.rows, b.cols, b.nnz(), b.values, b.row_ptr, b.col_idx);
      if (k > 0 && b.rows > 0) KokkosSparse::spmv("N", T{1}, crs, gathered, T{0}, result);  // else result is empty
    }
    detail::copy_to_rows<execution_space, T, memory_space>(result, y.local());
    execution_space().fence();
  }

  // Gather the rows requesters asked for into the current staging window, requester after requester.
  template <class WindowMatrix>
  void pack(const dense_type& x, const WindowMatrix& packed) const {
    const Kokkos::View<const T**, Kokkos::LayoutRight, memory_space> x_local = x.local();
    const auto rows = pack_rows_view_;
    // Host memory is packed by the host's threads (all of them, whatever the policy's space).
    using packing_space = std::conditional_t<
        Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, memory_space>::accessible,
        Kokkos::DefaultHostExecutionSpace, execution_space>;
    kernels::gather_rows_to_host<packing_space>(x_local, rows, packed);
  }

  // Owner-side packing (collective). A requester that needs more than one run of
  // an owner's rows sends it the rows (sorted); the owner packs them, at every
  // product, into one block of its staging window, and the requester fetches
  // the block with ONE get into its halo (owner-major, so the block lands
  // contiguously). A requester that needs one run from an owner (a banded A)
  // keeps reading that run straight from the owner's staged X: packing would
  // only add a copy. Both sides know the choice from the request's header.
  void plan_packing(std::size_t my_rows) {
    const int p = comm_.size();
    const auto k = static_cast<std::size_t>(k_);
    // Per owner: its runs, and whether they are adjacent in runs_ (owner-major halo).
    std::vector<std::size_t> first_run(static_cast<std::size_t>(p), runs_.size()), num_runs(static_cast<std::size_t>(p), 0);
    std::vector<bool> contiguous(static_cast<std::size_t>(p), true);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const auto o = static_cast<std::size_t>(runs_[i].owner);
      if (num_runs[o] == 0) first_run[o] = i;
      else if (runs_[i - 1].owner != runs_[i].owner) contiguous[o] = false;
      ++num_runs[o];
    }
    // An owner packs the rows a requester needs into one block when they form several runs, or one
    // run of under half its rows: staging all of X for a thin halo (a banded A) would copy the
    // whole X every product. Requesters of most of an owner's rows read its X staged whole instead
    // (copied once for all of them).
    auto requested = [&](std::size_t o) {
      std::size_t n = 0;
      for (std::size_t i = first_run[o]; i < first_run[o] + num_runs[o]; ++i) n += static_cast<std::size_t>(runs_[i].count);
      return n;
    };
    auto packs = [&](std::size_t o) {
      const auto owner_rows = static_cast<std::size_t>(x_rows_.extents(static_cast<int>(o)).rows);
      return contiguous[o] && (num_runs[o] > 1 || 2 * requested(o) < owner_rows);
    };
    // Request: header (1 = pack, 0 = read my staged X directly), then the rows to pack.
    bucket_builder<local_index> request(p);
    for (std::size_t o = 0; o < static_cast<std::size_t>(p); ++o) {
      if (num_runs[o] == 0) continue;
      request.count(static_cast<int>(o), 1 + (packs(o) ? requested(o) : 0));
    }
    request.allocate();
    for (std::size_t o = 0; o < static_cast<std::size_t>(p); ++o) {
      if (num_runs[o] == 0) continue;
      request.push(static_cast<int>(o), packs(o) ? 1 : 0);
      if (!packs(o)) continue;
      for (std::size_t i = first_run[o]; i < first_run[o] + num_runs[o]; ++i)
        for (local_index r = 0; r < runs_[i].count; ++r) request.push(static_cast<int>(o), runs_[i].first_row + r);
    }
    const typename Policy::backend_type backend{};
    const auto asked = exchange_records(backend, comm_, std::move(request).finish());
    // Owner: X staged whole at 0 if anyone reads it directly, then one block per packing requester.
    for (int r = 0; r < p; ++r) {
      const auto b = asked.bucket(r);
      if (!b.empty() && b[0] == 0) stage_x_ = true;
    }
    packed_base_ = stage_x_ ? my_rows * k : 0;
    bucket_builder<std::uint64_t> reply(p);
    for (int r = 0; r < p; ++r)
      if (!asked.bucket(r).empty()) reply.count(r);
    reply.allocate();
    for (int r = 0; r < p; ++r) {
      const auto b = asked.bucket(r);
      if (b.empty()) continue;
      if (b[0] == 0) {
        reply.push(r, 0);
        continue;
      }
      reply.push(r, static_cast<std::uint64_t>(packed_base_ + pack_rows_.size() * k));
      pack_rows_.insert(pack_rows_.end(), b.begin() + 1, b.end());
    }
    const auto where = exchange_records(backend, comm_, std::move(reply).finish());
    // Requester: one get per packing owner, at the offset it answered.
    std::vector<run> merged;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      run r = runs_[i];
      const auto o = static_cast<std::size_t>(r.owner);
      if (!packs(o)) {
        r.at = static_cast<std::size_t>(r.first_row) * k;
        merged.push_back(r);
        continue;
      }
      if (i != first_run[o]) continue;
      r.at = static_cast<std::size_t>(where.bucket(r.owner)[0]);
      r.count = 0;
      for (std::size_t j = first_run[o]; j < first_run[o] + num_runs[o]; ++j) r.count += runs_[j].count;
      merged.push_back(r);
      ++packed_owners_;
    }
    runs_ = std::move(merged);
  }

  struct run {
    int owner;
    local_index first_row;  ///< in the owner's part of X
    local_index count;
    local_index halo_at;
    std::size_t at = 0;  ///< element offset in the owner's staging window
  };

  void inspect(const rows_block& block, const Kokkos::View<global_index*, memory_space>& a_col_map,
               const mapping_type& x_rows) {
    const int me = comm_.rank();
    const auto col_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a_col_map);
    const auto cols = static_cast<std::size_t>(col_map.extent(0));
    column_sources_host local_flag("tessera::spmm::local", cols);
    Kokkos::View<local_index*, Kokkos::HostSpace> source_row("tessera::spmm::row", cols);
    struct remote_column {
      int owner;
      local_index row;  ///< on the owner
      std::size_t column;
    };
    std::vector<remote_column> remote;
    for (std::size_t c = 0; c < cols; ++c) {
      const global_index g = col_map(c);
      const int owner = x_rows.row_owner(g);
      const auto row = static_cast<local_index>(x_rows.local_row(g));
      local_flag(c) = owner == me ? 1 : 0;
      source_row(c) = row;
      if constexpr (reads_host_memory) {
        in_place_.add_column(owner, row);
      }
      if (owner != me) remote.push_back({owner, row, c});
    }
    // The halo is owner-major, each owner's rows ascending, so consecutive rows of an owner are one
    // run (one get) whatever the mapping interleaves: a row-cyclic X has no two adjacent columns on
    // one owner. Contiguous row ranges with A's ascending columns are in this order already.
    const auto before = [](const remote_column& x, const remote_column& y) {
      return x.owner < y.owner || (x.owner == y.owner && x.row < y.row);
    };
    if (!std::is_sorted(remote.begin(), remote.end(), before)) std::sort(remote.begin(), remote.end(), before);
    local_index halo = 0;
    for (const auto& r : remote) {
      if (!runs_.empty() && runs_.back().owner == r.owner && runs_.back().first_row + runs_.back().count == r.row)
        ++runs_.back().count;
      else
        runs_.push_back({r.owner, r.row, 1, halo, 0});
      source_row(r.column) = halo++;
    }
    sources_.local = Kokkos::create_mirror_view_and_copy(memory_space{}, local_flag);
    sources_.row = Kokkos::create_mirror_view_and_copy(memory_space{}, source_row);
    halo_rows_ = halo;

    // Rows that touch only local X are computed while the halo is in flight.
    const auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, block.row_ptr);
    const auto col_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, block.col_idx);
    std::vector<local_index> interior, boundary;
    for (local_index r = 0; r < block.num_rows(); ++r) {
      bool remote = false;
      for (offset_type e = row_ptr(r); e < row_ptr(r + 1) && !remote; ++e) remote = local_flag(col_idx(e)) == 0;
      (remote ? boundary : interior).push_back(r);
    }
    if (options_.kernel == spmm_kernel::tessera) {
      // tessera's kernels read per-entry sources; only Kokkos-Kernels' gather reads per-column ones.
      const execution_space exec;
      x_source_ = kernels::entry_sources(exec, Kokkos::View<const local_index*, memory_space>(block.col_idx), sources_);
      exec.fence();
      sources_ = {};
    }
    interior_rows_ = to_view<local_index, memory_space>(interior, "tessera::spmm::interior");
    boundary_rows_ = to_view<local_index, memory_space>(boundary, "tessera::spmm::boundary");
    if constexpr (kernels::has_row_groups_kernel<execution_space, T>(std::size_t{1} << 30)) {
      // The rows that share a pattern, found here (any width uses them) rather than in the first
      // product: SpDNN prepares every layer's plan before the images arrive.
      if (options_.kernel == spmm_kernel::tessera) {
        const Kokkos::View<const offset_type*, memory_space> ptr = block.row_ptr;
        interior_state_.groups = kernels::spmm_row_groups<memory_space>::make(interior_rows_, ptr, x_source_);
        boundary_state_.groups = kernels::spmm_row_groups<memory_space>::make(boundary_rows_, ptr, x_source_);
      }
    }
    rows_ = block.num_rows();
    structure_ = detail::structure_fingerprint<3>(block.row_ptr, block.col_idx, a_col_map);
  }

  using column_sources_host = Kokkos::View<std::uint8_t*, Kokkos::HostSpace>;

  communicator comm_;
  mapping_type x_rows_;
  global_index k_;
  spmm_options options_;
  local_index rows_ = 0;
  mutable detail::structure_fingerprint<3> structure_;  ///< A's row pointers, columns and column map at inspection
  std::vector<run> runs_;
  kernels::column_sources<memory_space> sources_;  ///< per column of A (Kokkos-Kernels' kernel only)
  Kokkos::View<const local_index*, memory_space> x_source_;  ///< per entry of A, its row of X (tessera's kernel only)
  Kokkos::View<const local_index*, memory_space> interior_rows_, boundary_rows_;
  // The kernel's per-row-list state on devices (schedule made on the first product): products are
  // collective and never concurrent on one plan, so apply may keep it.
  mutable kernels::spmm_rows_state<T, memory_space> interior_state_, boundary_state_;
  local_index halo_rows_ = 0;
  bool stage_x_ = false, anyone_fetches_ = false;
  std::vector<local_index> pack_rows_;  ///< rows of my X that requesters fetch packed, requester-major
  Kokkos::View<const local_index*, memory_space> pack_rows_view_;
  std::size_t packed_base_ = 0;  ///< where the packed blocks start in my staging window
  std::size_t packed_owners_ = 0;
  std::shared_ptr<detail::spmm_workspace<T, Policy>> workspace_;
  detail::spmm_in_place_reads<T, memory_space> in_place_;  ///< X read in place (host spaces)
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
  // spmm_kernel::kokkos_kernels through cuSPARSE: A's offsets as int, made by the first apply (a View
  // per apply cost a cudaMalloc and a device-wide cudaFree per product), and the offsets they came from.
  Kokkos::View<int*, memory_space> row_ptr32_;
  const offset_type* row_ptr32_from_ = nullptr;
#endif
};


}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_PLAN_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_SPMM_PLAN_HPP
#endif
