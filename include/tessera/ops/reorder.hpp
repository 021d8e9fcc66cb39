#pragma once
/// @file
/// Renumbering a square matrix's rows and columns alike within each rank (P A P^T with a
/// block-diagonal permutation P), and moving dense blocks between the two numberings. A rank keeps
/// its rows, so nothing is redistributed: what changes is the order in which a rank's kernels meet
/// its rows of X. Done once; the products on the renumbered matrix then read X with the locality
/// the ordering found (a band for reverse Cuthill-McKee, the hubs side by side by degree).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_REORDER_HPP
#endif

#include "../comm/buckets.hpp"
#include "../comm/communicator.hpp"
#include "../comm/counters.hpp"
#include "../concepts/backend.hpp"
#include "../concepts/distribution.hpp"
#include "../core/combine.hpp"
#include "../core/deep_copy.hpp"
#include "../core/error.hpp"
#include "../kernels/graph_orderings.hpp"
#include "../matrix/detail/assemble.hpp"
#include "../matrix/detail/route.hpp"
#include "../matrix/dist_dense.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../matrix/local_triplets.hpp"
#include "../matrix/to_view.hpp"
#include "../matrix/triplets.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

/// How reorder numbers each rank's rows.
enum class row_ordering {
  natural,                ///< as they are: the identity (a baseline for comparisons)
  /// Neighbours get nearby numbers: a band, X read near the diagonal. A rank whose rows already
  /// have a bandwidth no wider than the one found keeps their order (a mesh numbered well stays).
  reverse_cuthill_mckee,
  by_degree,              ///< the most connected rows first: a power-law graph's hubs share pages and cache
};

/// The name of an ordering ("natural", "reverse_cuthill_mckee", "by_degree").
[[nodiscard]] constexpr std::string_view to_string(row_ordering ordering) noexcept {
  switch (ordering) {
    case row_ordering::natural: return "natural";
    case row_ordering::reverse_cuthill_mckee: return "reverse_cuthill_mckee";
    case row_ordering::by_degree: return "by_degree";
  }
  return "unknown";
}

/// Which rows an ordering may move where.
enum class reorder_scope {
  /// Each rank renumbers its own rows by its diagonal block: no row changes rank, no data moves but
  /// one exchange of the new numbers of the columns ranks hold.
  within_ranks,
  /// One numbering of the whole matrix, found on rank 0 (A + A^T's structure gathered there: 16 bytes
  /// per entry), rows then split as A's are (or as a distribution you give splits the renumbered
  /// matrix): a row may move to another rank, and the rows each rank needs from others shrink with
  /// the band (a mesh numbered in no order gets a thin halo back).
  whole_matrix,
};

/// A renumbering of a matrix's rows (and columns alike): this rank's local row i under the split
/// before (mapping()) becomes global row new_global_row(i), which the split after (new_mapping())
/// places. Within ranks (the rows stay where they are, one split) or across them (a row may move,
/// and the split after may differ: rows balanced by nonzeros once renumbered); reorder makes one
/// from an ordering, or bring your own (a partitioner's local order, a space-filling curve).
template <matrix_policy Policy>
class row_permutation {
  static_assert(whole_row_mapping<typename Policy::mapping_type>,
                "tessera::row_permutation renumbers whole rows: it needs a distribution whose ranks own whole "
                "rows (capability whole_row_mapping)");

 public:
  using mapping_type = typename Policy::mapping_type;
  using memory_space = typename Policy::memory_space;

  /// Within ranks: this rank's new local number for each of its rows, under `rows` (collective):
  /// new_of_old must hold each of 0 .. local rows - 1 exactly once, on every rank, or every rank throws.
  row_permutation(const communicator& comm, const mapping_type& rows, std::vector<local_index> new_of_old)
      : rows_(rows), new_rows_(rows), within_ranks_(true), new_of_old_(std::move(new_of_old)) {
    comm.collectively([&] {
      check_split(comm);
      const auto n = static_cast<std::size_t>(rows.extents(comm.rank()).rows);
      TESSERA_REQUIRE(new_of_old_.size() == n, invalid_argument,
                      "row_permutation: rank {} owns {} rows but {} new numbers were given", comm.rank(), n,
                      new_of_old_.size());
      std::vector<char> taken(n, 0);
      for (std::size_t i = 0; i < n; ++i) {
        const local_index to = new_of_old_[i];
        TESSERA_REQUIRE(to >= 0 && static_cast<std::size_t>(to) < n, invalid_argument,
                        "row_permutation: rank {} renumbers its row {} as {}, outside [0, {})", comm.rank(), i, to, n);
        TESSERA_REQUIRE(!taken[static_cast<std::size_t>(to)], invalid_argument,
                        "row_permutation: rank {} gives two of its rows the number {}", comm.rank(), to);
        taken[static_cast<std::size_t>(to)] = 1;
      }
    });
    new_global_.resize(new_of_old_.size());
    for (std::size_t i = 0; i < new_of_old_.size(); ++i)
      new_global_[i] = rows_.to_global(comm.rank(), static_cast<global_index>(new_of_old_[i]), 0).row;
    new_of_old_view_ = to_view<local_index, memory_space>(new_of_old_, "tessera::row_permutation");
  }

  /// Across ranks: this rank's new global number for each of its rows under `rows` (collective),
  /// the new rows split as `rows` splits them. Every global row must be given exactly once over all
  /// ranks, or every rank throws; one exchange tells each rank which rows its new rows were.
  [[nodiscard]] static row_permutation of_global_rows(const communicator& comm, const mapping_type& rows,
                                                      std::vector<global_index> new_global) {
    return row_permutation(comm, rows, std::move(new_global), rows, across_ranks_tag{});
  }

  /// The same, the new rows split as `new_rows` splits them (a split of as many rows as `rows`).
  [[nodiscard]] static row_permutation of_global_rows(const communicator& comm, const mapping_type& rows,
                                                      std::vector<global_index> new_global, const mapping_type& new_rows) {
    return row_permutation(comm, rows, std::move(new_global), new_rows, across_ranks_tag{});
  }

  /// The row split before: where A and X lie in the old numbering (and restore_rows puts Y back).
  [[nodiscard]] const mapping_type& mapping() const noexcept { return rows_; }
  /// The row split after: where P A P^T and permute_rows' P X lie. mapping() unless the rows were
  /// split anew (of_global_rows with a split of its own; reorder over the whole matrix given one).
  [[nodiscard]] const mapping_type& new_mapping() const noexcept { return new_rows_; }
  /// Whether every row stays on its rank (then new_local_row and new_of_old answer).
  [[nodiscard]] bool within_ranks() const noexcept { return within_ranks_; }
  /// The new global number of this rank's local row `old_row`.
  [[nodiscard]] global_index new_global_row(local_index old_row) const { return new_global_[static_cast<std::size_t>(old_row)]; }
  /// This rank's new global numbers, by old local row.
  [[nodiscard]] const std::vector<global_index>& new_global_rows() const noexcept { return new_global_; }
  /// The new local number of this rank's local row `old_row` (within_ranks() only).
  [[nodiscard]] local_index new_local_row(local_index old_row) const {
    TESSERA_REQUIRE(within_ranks_, invalid_argument,
                    "row_permutation::new_local_row: the permutation moves rows between ranks; ask new_global_row");
    return new_of_old_[static_cast<std::size_t>(old_row)];
  }
  /// This rank's new local numbers, old row -> new row (empty unless within_ranks()).
  [[nodiscard]] const std::vector<local_index>& new_of_old() const noexcept { return new_of_old_; }
  /// The same in the policy's memory space (what permute_rows and restore_rows read).
  [[nodiscard]] const Kokkos::View<const local_index*, memory_space>& new_of_old_view() const noexcept {
    return new_of_old_view_;
  }
  /// Across ranks: the old global number of each of this rank's new rows (by local row under new_mapping()).
  [[nodiscard]] const std::vector<global_index>& old_global_rows() const noexcept { return old_global_; }

 private:
  struct across_ranks_tag {};

  row_permutation(const communicator& comm, const mapping_type& rows, std::vector<global_index> new_global,
                  const mapping_type& new_rows, across_ranks_tag)
      : rows_(rows), new_rows_(new_rows), within_ranks_(false), new_global_(std::move(new_global)) {
    const int me = comm.rank();
    std::size_t n = 0;
    comm.collectively([&] {
      check_split(comm);  // before the split is asked about this rank
      TESSERA_REQUIRE(new_rows.num_ranks() == comm.size() && new_rows.global_rows() == rows.global_rows(),
                      dimension_mismatch,
                      "row_permutation: the split after is of {} rows over {} ranks; the split before, of {} rows over {}",
                      new_rows.global_rows(), new_rows.num_ranks(), rows.global_rows(), rows.num_ranks());
      n = static_cast<std::size_t>(rows.extents(me).rows);
      TESSERA_REQUIRE(new_global_.size() == n, invalid_argument,
                      "row_permutation: rank {} owns {} rows but {} new numbers were given", me, n, new_global_.size());
      for (std::size_t i = 0; i < n; ++i)
        TESSERA_REQUIRE(new_global_[i] >= 0 && new_global_[i] < rows.global_rows(), invalid_argument,
                        "row_permutation: rank {} renumbers its row {} as {}, outside [0, {})", me, i, new_global_[i],
                        rows.global_rows());
    });
    // Each new row's owner learns which old row it is: (new local row, old global row) pairs.
    bucket_builder<global_index> tell(comm.size());
    for (std::size_t i = 0; i < n; ++i) tell.count(new_rows.row_owner(new_global_[i]), 2);
    tell.allocate();
    for (std::size_t i = 0; i < n; ++i) {
      tell.push(new_rows.row_owner(new_global_[i]), new_rows.local_row(new_global_[i]));
      tell.push(new_rows.row_owner(new_global_[i]), rows.to_global(me, static_cast<global_index>(i), 0).row);
    }
    const typename Policy::backend_type backend{};
    const auto told = exchange_records(backend, comm, std::move(tell).finish());
    // As many new rows here as the rows given for them over all ranks, each once: every row is numbered.
    old_global_.assign(static_cast<std::size_t>(new_rows.extents(me).rows), -1);
    comm.collectively([&] {
      for (int r = 0; r < comm.size(); ++r) {
        const auto b = told.bucket(r);
        for (std::size_t k = 0; k + 1 < b.size(); k += 2) {
          TESSERA_REQUIRE(old_global_[static_cast<std::size_t>(b[k])] < 0, invalid_argument,
                          "row_permutation: global row {} is given to two rows", new_rows.to_global(me, b[k], 0).row);
          old_global_[static_cast<std::size_t>(b[k])] = b[k + 1];
        }
      }
    });
  }

  void check_split(const communicator& comm) const {
    TESSERA_REQUIRE(rows_.num_ranks() == comm.size(), dimension_mismatch,
                    "row_permutation: the row split is for {} ranks but the communicator has {}", rows_.num_ranks(),
                    comm.size());
  }

  mapping_type rows_, new_rows_;
  bool within_ranks_;
  std::vector<local_index> new_of_old_;
  std::vector<global_index> new_global_, old_global_;
  Kokkos::View<const local_index*, memory_space> new_of_old_view_;
};

/// What reorder returns: P A P^T and P.
template <matrix_value T, matrix_policy Policy>
struct reordered {
  dist_matrix<T, Policy> matrix;        ///< row i and column i of A are row and column P(i) here
  row_permutation<Policy> permutation;  ///< P: permute_rows(X, P) before a product, restore_rows(Y, P) after
};

namespace detail {
/// out(to(i), :) = in(from(i), :) for this rank's rows: `scatter` writes row i to new_of_old(i),
/// otherwise row i reads new_of_old(i).
template <class T, class Policy>
void move_rows(const dist_dense<T, Policy>& in, const dist_dense<T, Policy>& out,
               const Kokkos::View<const local_index*, typename Policy::memory_space>& new_of_old, bool scatter) {
  using exec = typename Policy::execution_space;
  const auto source = in.local();
  const auto target = out.local();
  const auto width = static_cast<std::size_t>(source.extent(1));
  Kokkos::parallel_for(
      "tessera::move_rows", Kokkos::RangePolicy<exec>(exec(), 0, source.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        const auto moved = static_cast<std::size_t>(new_of_old(i));
        const std::size_t to = scatter ? moved : i, from = scatter ? i : moved;
        for (std::size_t j = 0; j < width; ++j) target(to, j) = source(from, j);
      });
  exec().fence();
}

/// Rows sent across ranks: this rank's row i of `in` goes to global row destination[i] of `out`
/// (placed by out's split), and row j of `out` comes from global row origin[j] of `in` (placed by
/// in's split; the permutation knows both directions). A sender sends its rows in its local order,
/// so a receiver knows where each arrival lands from the origins alone: only the values travel, in
/// one exchange through the policy's backend.
template <class T, class Policy>
void send_rows(const dist_dense<T, Policy>& in, const dist_dense<T, Policy>& out,
               const std::vector<global_index>& destination, const std::vector<global_index>& origin) {
  const communicator& comm = in.comm();
  const auto& rows = in.mapping();
  const auto& out_rows = out.mapping();
  const auto source = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, in.local());
  const auto width = static_cast<std::size_t>(source.extent(1));
  bucket_builder<T> what(comm.size());
  for (const global_index g : destination) what.count(out_rows.row_owner(g), width);
  what.allocate();
  for (std::size_t i = 0; i < destination.size(); ++i) {
    T* values = what.claim(out_rows.row_owner(destination[i]), width);
    for (std::size_t j = 0; j < width; ++j) values[j] = source(i, j);
  }
  const typename Policy::backend_type backend{};
  const auto values = exchange_records(backend, comm, std::move(what).finish());
  // This rank's rows in arrival order: by the rank they come from, then by their row there.
  std::vector<std::size_t> arrival(origin.size());
  std::iota(arrival.begin(), arrival.end(), std::size_t{0});
  const auto origin_key = [&](std::size_t row) {
    return std::pair{rows.row_owner(origin[row]), rows.local_row(origin[row])};
  };
  std::sort(arrival.begin(), arrival.end(), [&](std::size_t x, std::size_t y) { return origin_key(x) < origin_key(y); });
  if (width == 0) return;  // rows of no values: nothing landed, nothing to place
  comm.collectively([&] {  // a permutation that disagrees with the splits fails on every rank, not in a hang
    TESSERA_REQUIRE(values.data.size() == arrival.size() * width, internal, "send_rows: {} values arrived for {} rows of {}",
                    values.data.size(), arrival.size(), width);
  });
  auto target = Kokkos::create_mirror_view(Kokkos::HostSpace{}, out.local());
  std::size_t next = 0;
  for (int r = 0; r < comm.size(); ++r) {
    const auto v = values.bucket(r);
    for (std::size_t k = 0; k < v.size() / width; ++k, ++next)
      for (std::size_t j = 0; j < width; ++j) target(arrival[next], j) = v[k * width + j];
  }
  tessera::detail::deep_copy(out.local(), target);
}

template <class T, class Policy>
void check_rows_of(const dist_dense<T, Policy>& x, const typename Policy::mapping_type& rows, const char* what,
                   const char* which) {
  x.comm().collectively([&] {
    TESSERA_REQUIRE(same_rows(x.mapping(), rows), dimension_mismatch,
                    "{}: the block's {} rows are not split like the permutation's {} rows {}", what, x.num_rows(),
                    rows.global_rows(), which);
  });
}
}  // namespace detail

namespace detail {
/// P X (forward) or P^T X: a copy within ranks, an exchange across them.
template <class T, class Policy>
dist_dense<T, Policy> renumber_rows(const dist_dense<T, Policy>& x, const row_permutation<Policy>& p, bool forward,
                                    const char* what) {
  check_rows_of(x, forward ? p.mapping() : p.new_mapping(), what, forward ? "before" : "after");
  dist_dense<T, Policy> out(x.comm(), forward ? p.new_mapping() : p.mapping(), x.num_vectors());
  if (p.within_ranks())
    move_rows(x, out, p.new_of_old_view(), forward);
  else
    send_rows(x, out, forward ? p.new_global_rows() : p.old_global_rows(),
              forward ? p.old_global_rows() : p.new_global_rows());
  return out;
}

/// What both forms of reorder ask of A: a capability and a storage at compile time, a square
/// shape (collective) at run time.
template <class T, class Policy>
void check_reorderable(const dist_matrix<T, Policy>& a) {
  static_assert(whole_row_mapping<typename Policy::mapping_type>,
                "tessera::reorder renumbers each rank's whole rows: it needs a distribution whose ranks own whole "
                "rows (capability whole_row_mapping); redistribute a grid-distributed A to row_block first");
  static_assert(!dist_matrix<T, Policy>::tiled,
                "tessera::reorder renumbers the rows and columns of element storages (csr, csc, coo, your own); "
                "tile storages keep their tiles' shapes");
  a.comm().collectively([&] {
    TESSERA_REQUIRE(a.num_rows() == a.num_cols(), dimension_mismatch,
                    "reorder: A is {} x {}; renumbering rows and columns alike needs a square matrix", a.num_rows(),
                    a.num_cols());
  });
}
}  // namespace detail

/// P X: this rank's row i of X becomes row P(i) (collective; across ranks, one exchange through
/// the policy's backend). X must be split like the permutation's rows before (p.mapping(): a
/// dist_dense made with A's mapping is); P X is split as they are after (p.new_mapping()).
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_dense<T, Policy> permute_rows(const dist_dense<T, Policy>& x, const row_permutation<Policy>& p) {
  return detail::renumber_rows(x, p, true, "permute_rows");
}

/// P^T Y: the rows of a block in the permuted numbering (split as p.new_mapping()) back in the
/// original one (split as p.mapping()), collective; restore_rows(permute_rows(X, P), P) is X.
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_dense<T, Policy> restore_rows(const dist_dense<T, Policy>& y, const row_permutation<Policy>& p) {
  return detail::renumber_rows(y, p, false, "restore_rows");
}

namespace detail {
/// P A P^T from A's entries on this rank (`entries`, host triplets with global indices), P checked.
template <class T, class Policy>
reordered<T, Policy> renumbered(const dist_matrix<T, Policy>& a, const triplets<T>& entries,
                                const row_permutation<Policy>& p) {
  const communicator& comm = a.comm();
  const stats_scope scope(comm, "reorder");
  const auto& rows = a.mapping();
  const int me = comm.rank();

  // The columns other ranks own, each once, and their owners' new numbers for them.
  std::vector<global_index> remote;
  for (const global_index j : entries.cols)
    if (rows.row_owner(j) != me) remote.push_back(j);
  std::sort(remote.begin(), remote.end());
  remote.erase(std::unique(remote.begin(), remote.end()), remote.end());
  bucket_builder<local_index> ask(comm.size());
  for (const global_index j : remote) ask.count(rows.row_owner(j));
  ask.allocate();
  for (const global_index j : remote) ask.push(rows.row_owner(j), static_cast<local_index>(rows.local_row(j)));
  const typename Policy::backend_type backend{};
  const auto asked = exchange_records(backend, comm, std::move(ask).finish());
  bucket_builder<global_index> answer(comm.size());
  for (int r = 0; r < comm.size(); ++r) answer.count(r, asked.bucket(r).size());
  answer.allocate();
  for (int r = 0; r < comm.size(); ++r)
    for (const local_index old_row : asked.bucket(r)) answer.push(r, p.new_global_row(old_row));
  const auto answered = exchange_records(backend, comm, std::move(answer).finish());
  std::vector<global_index> remote_new(remote.size());
  std::vector<std::size_t> next(static_cast<std::size_t>(comm.size()), 0);
  for (std::size_t k = 0; k < remote.size(); ++k) {
    const int owner = rows.row_owner(remote[k]);
    remote_new[k] = answered.bucket(owner)[next[static_cast<std::size_t>(owner)]++];
  }

  triplets<T> moved;
  moved.reserve(entries.size());
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const global_index i = entries.rows[e], j = entries.cols[e];
    const global_index new_i = p.new_global_row(static_cast<local_index>(rows.local_row(i)));
    const global_index new_j =
        rows.row_owner(j) == me
            ? p.new_global_row(static_cast<local_index>(rows.local_row(j)))
            : remote_new[static_cast<std::size_t>(std::lower_bound(remote.begin(), remote.end(), j) - remote.begin())];
    moved.push_back(new_i, new_j, entries.values[e]);
  }
  if (!p.within_ranks())
    moved = route_to_owners<T>(comm, backend, p.new_mapping(), std::span<const global_index>(moved.rows),
                               std::span<const global_index>(moved.cols), std::span<const T>(moved.values));
  return {assemble_owned<T, Policy>(comm, p.new_mapping(), moved, combine::sum{}), p};
}

/// `ordering` of the graph of A + A^T restricted to `from`/`to` pairs on n vertices: position -> vertex.
/// Reverse Cuthill-McKee keeps the numbering it is given where that band is no wider.
inline std::vector<local_index> order_graph(std::size_t n, row_ordering ordering, const std::vector<local_index>& from,
                                            const std::vector<local_index>& to) {
  std::vector<local_index> as_now(n);
  std::iota(as_now.begin(), as_now.end(), local_index{0});
  if (ordering == row_ordering::natural) return as_now;
  const auto graph = kernels::symmetric_graph_of(n, from, to);
  if (ordering == row_ordering::by_degree) return kernels::by_decreasing_degree(graph);
  auto order = kernels::reverse_cuthill_mckee(graph);
  if (kernels::bandwidth_under(graph, as_now) <= kernels::bandwidth_under(graph, kernels::positions_of(order)))
    return as_now;
  return order;
}
}  // namespace detail

/// P A P^T for a permutation of your own (collective): A square, split like p's rows. Each rank
/// asks the owners of the columns it holds for their new numbers (one exchange through the
/// policy's backend, counted under "reorder") and sends each renumbered entry to its row's new
/// owner (none moves when p is within ranks).
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] reordered<T, Policy> reorder(const dist_matrix<T, Policy>& a, const row_permutation<Policy>& p) {
  detail::check_reorderable(a);
  a.comm().collectively([&] {
    TESSERA_REQUIRE(same_rows(a.mapping(), p.mapping()), dimension_mismatch,
                    "reorder: A's {} rows are not split like the permutation's {} rows", a.num_rows(),
                    p.mapping().global_rows());
  });
  return detail::renumbered(a, local_triplets(a), p);
}

namespace detail {
/// The split `split` makes of the renumbered rows: its mapping of A's shape, refined (where the
/// distribution rebalances, row_block by nonzeros) from each new row's entries, which one exchange
/// brings to the new row's owner under that mapping.
template <class T, class Policy>
typename Policy::mapping_type split_of_renumbered(const dist_matrix<T, Policy>& a, const triplets<T>& entries,
                                                  const std::vector<global_index>& new_global,
                                                  const typename Policy::distribution_type& split) {
  const communicator& comm = a.comm();
  const auto& rows = a.mapping();
  auto made = split.make_mapping(comm.size(), a.num_rows(), a.num_cols());
  if constexpr (rebalancing_distribution<typename Policy::distribution_type>) {
    std::vector<offset_type> old_counts(new_global.size(), 0);
    for (const global_index i : entries.rows) ++old_counts[static_cast<std::size_t>(rows.local_row(i))];
    bucket_builder<global_index> tell(comm.size());  // (new local row, entries) to its owner under `made`
    for (const global_index g : new_global) tell.count(made.row_owner(g), 2);
    tell.allocate();
    for (std::size_t i = 0; i < new_global.size(); ++i) {
      tell.push(made.row_owner(new_global[i]), made.local_row(new_global[i]));
      tell.push(made.row_owner(new_global[i]), old_counts[i]);
    }
    const typename Policy::backend_type backend{};
    const auto told = exchange_records(backend, comm, std::move(tell).finish());
    std::vector<offset_type> counts(static_cast<std::size_t>(made.extents(comm.rank()).rows), 0);
    for (int r = 0; r < comm.size(); ++r) {
      const auto b = told.bucket(r);
      for (std::size_t k = 0; k + 1 < b.size(); k += 2) counts[static_cast<std::size_t>(b[k])] = b[k + 1];
    }
    if (auto better = split.rebalance(comm, made, counts)) return std::move(*better);
  }
  return made;
}

/// reorder(A, ordering, scope[, split]): `split` null keeps A's split.
template <class T, class Policy>
reordered<T, Policy> reorder_by(const dist_matrix<T, Policy>& a, row_ordering ordering, reorder_scope scope,
                                const typename Policy::distribution_type* split) {
  check_reorderable(a);
  const communicator& comm = a.comm();
  comm.collectively([&] {
    TESSERA_REQUIRE(ordering == row_ordering::natural || ordering == row_ordering::reverse_cuthill_mckee ||
                        ordering == row_ordering::by_degree,
                    invalid_argument, "reorder: {} is not a row_ordering", static_cast<int>(ordering));
    TESSERA_REQUIRE(scope == reorder_scope::within_ranks || scope == reorder_scope::whole_matrix, invalid_argument,
                    "reorder: {} is not a reorder_scope", static_cast<int>(scope));
    TESSERA_REQUIRE(split == nullptr || scope == reorder_scope::whole_matrix, invalid_argument,
                    "reorder: a split for the renumbered rows needs reorder_scope::whole_matrix; within ranks every "
                    "row stays on its rank");
  });
  const auto& rows = a.mapping();
  const int me = comm.rank();
  const auto n = static_cast<std::size_t>(a.local_rows());
  const triplets<T> entries = local_triplets(a);
  if (scope == reorder_scope::within_ranks) {
    std::vector<local_index> from, to;
    for (std::size_t e = 0; e < entries.size(); ++e) {
      if (rows.row_owner(entries.cols[e]) != me) continue;
      from.push_back(static_cast<local_index>(rows.local_row(entries.rows[e])));
      to.push_back(static_cast<local_index>(rows.local_row(entries.cols[e])));
    }
    const auto order = order_graph(n, ordering, from, to);
    return renumbered(a, entries, row_permutation<Policy>(comm, rows, kernels::positions_of(order)));
  }
  comm.collectively([&] {
    TESSERA_REQUIRE(a.num_rows() <= std::numeric_limits<local_index>::max(), unsupported,
                    "reorder: ordering the whole matrix numbers its {} rows on one rank, at most {}", a.num_rows(),
                    std::numeric_limits<local_index>::max());
  });
  std::vector<global_index> pairs;  // the natural order needs no graph
  if (ordering != row_ordering::natural) {
    pairs.reserve(2 * entries.size());
    for (std::size_t e = 0; e < entries.size(); ++e) {
      pairs.push_back(entries.rows[e]);
      pairs.push_back(entries.cols[e]);
    }
  }
  const auto all = comm.gather_concatenated(pairs, 0);
  std::vector<global_index> position;  // global old row -> global new row, made on rank 0
  if (me == 0) {
    std::vector<local_index> from(all.size() / 2), to(all.size() / 2);
    for (std::size_t e = 0; e < from.size(); ++e) {
      from[e] = static_cast<local_index>(all[2 * e]);
      to[e] = static_cast<local_index>(all[2 * e + 1]);
    }
    const auto order = order_graph(static_cast<std::size_t>(a.num_rows()), ordering, from, to);
    position.resize(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) position[static_cast<std::size_t>(order[k])] = static_cast<global_index>(k);
  }
  comm.broadcast(position, 0);
  std::vector<global_index> mine(n);
  for (std::size_t i = 0; i < n; ++i)
    mine[i] = position[static_cast<std::size_t>(rows.to_global(me, static_cast<global_index>(i), 0).row)];
  auto new_rows = split != nullptr ? split_of_renumbered(a, entries, mine, *split) : rows;
  return renumbered(a, entries, row_permutation<Policy>::of_global_rows(comm, rows, std::move(mine), new_rows));
}
}  // namespace detail

/// P A P^T with P found by `ordering` (collective). Within ranks (the default), each rank orders
/// its diagonal block, the rows and columns it owns, as the undirected graph of A + A^T (the
/// columns other ranks own follow their owners' numbering). Over the whole matrix, rank 0 orders
/// the graph of all of A + A^T (gathered there, 16 bytes per entry, at most 2^31 entries) and the
/// rows are split as A's: rows move between ranks. Serial host work, O(nnz log nnz); do it once
/// and keep the vectors in the new numbering between products (permute_rows / restore_rows cost a
/// copy of the block each, and an exchange across ranks).
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] reordered<T, Policy> reorder(const dist_matrix<T, Policy>& a, row_ordering ordering,
                                           reorder_scope scope = reorder_scope::within_ranks) {
  return detail::reorder_by(a, ordering, scope, nullptr);
}

/// The same over the whole matrix (`scope` must be reorder_scope::whole_matrix), the renumbered rows
/// split as `split` splits a matrix built from them: its mapping, refined where it rebalances from
/// the renumbered rows' entries. An ordering that gathers a power-law graph's hubs gathers their
/// entries at the front, so split equal rows it leaves one rank most of the work;
/// `row_block{row_block::balance::nonzeros}` gives every rank about nnz / P entries again (one more
/// exchange of a count per row). P's new_mapping() is that split: permute_rows(X, P) returns X
/// split so, restore_rows(Y, P) returns Y split as A.
/// @code
/// auto [Ap, P] = tessera::reorder(A, tessera::row_ordering::by_degree, tessera::reorder_scope::whole_matrix,
///                                 tessera::row_block{tessera::row_block::balance::nonzeros});
/// @endcode
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] reordered<T, Policy> reorder(const dist_matrix<T, Policy>& a, row_ordering ordering, reorder_scope scope,
                                           const typename Policy::distribution_type& split) {
  return detail::reorder_by(a, ordering, scope, &split);
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_REORDER_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_REORDER_HPP
#endif
