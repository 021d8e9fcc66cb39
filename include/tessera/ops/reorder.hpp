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
#include "../core/combine.hpp"
#include "../core/error.hpp"
#include "../kernels/graph_orderings.hpp"
#include "../matrix/detail/assemble.hpp"
#include "../matrix/dist_dense.hpp"
#include "../matrix/dist_matrix.hpp"
#include "../matrix/local_triplets.hpp"
#include "../matrix/to_view.hpp"
#include "../matrix/triplets.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
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

/// A renumbering of every rank's rows within the rank: local row i becomes local row
/// new_local_row(i) of the same rank, under one row split (mapping()). reorder makes one from an
/// ordering; you may bring your own (a partitioner's or a space-filling curve's local order).
template <matrix_policy Policy>
class row_permutation {
  static_assert(whole_row_mapping<typename Policy::mapping_type>,
                "tessera::row_permutation renumbers whole rows: it needs a distribution whose ranks own whole "
                "rows (capability whole_row_mapping)");

 public:
  using mapping_type = typename Policy::mapping_type;
  using memory_space = typename Policy::memory_space;

  /// This rank's new number for each of its rows, under `rows` (collective): new_of_old must
  /// hold each of 0 .. local rows - 1 exactly once, on every rank, or every rank throws.
  row_permutation(const communicator& comm, const mapping_type& rows, std::vector<local_index> new_of_old)
      : rows_(rows), new_of_old_(std::move(new_of_old)) {
    comm.collectively([&] {
      TESSERA_REQUIRE(rows.num_ranks() == comm.size(), dimension_mismatch,
                      "row_permutation: the row split is for {} ranks but the communicator has {}", rows.num_ranks(),
                      comm.size());
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
    new_of_old_view_ = to_view<local_index, memory_space>(new_of_old_, "tessera::row_permutation");
  }

  /// The row split the numbering is for.
  [[nodiscard]] const mapping_type& mapping() const noexcept { return rows_; }
  /// The new local number of this rank's local row `old_row`.
  [[nodiscard]] local_index new_local_row(local_index old_row) const { return new_of_old_[static_cast<std::size_t>(old_row)]; }
  /// This rank's new numbers, old row -> new row.
  [[nodiscard]] const std::vector<local_index>& new_of_old() const noexcept { return new_of_old_; }
  /// The same in the policy's memory space (what permute_rows and restore_rows read).
  [[nodiscard]] const Kokkos::View<const local_index*, memory_space>& new_of_old_view() const noexcept {
    return new_of_old_view_;
  }

 private:
  mapping_type rows_;
  std::vector<local_index> new_of_old_;
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

template <class T, class Policy>
void check_rows_of(const dist_dense<T, Policy>& x, const row_permutation<Policy>& p, const char* what) {
  x.comm().collectively([&] {
    TESSERA_REQUIRE(same_rows(x.mapping(), p.mapping()), dimension_mismatch,
                    "{}: the block's {} rows are not split like the permutation's {} rows", what, x.num_rows(),
                    p.mapping().global_rows());
  });
}
}  // namespace detail

/// P X: row i of each rank's X becomes its row P(i) (collective). X must be split like the
/// permutation's rows (a dist_dense made with the matrix's mapping is).
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_dense<T, Policy> permute_rows(const dist_dense<T, Policy>& x, const row_permutation<Policy>& p) {
  detail::check_rows_of(x, p, "permute_rows");
  dist_dense<T, Policy> out(x.comm(), x.mapping(), x.num_vectors());
  detail::move_rows(x, out, p.new_of_old_view(), true);
  return out;
}

/// P^T Y: the rows of a block in the permuted numbering back in the original one (collective);
/// restore_rows(permute_rows(X, P), P) is X.
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_dense<T, Policy> restore_rows(const dist_dense<T, Policy>& y, const row_permutation<Policy>& p) {
  detail::check_rows_of(y, p, "restore_rows");
  dist_dense<T, Policy> out(y.comm(), y.mapping(), y.num_vectors());
  detail::move_rows(y, out, p.new_of_old_view(), false);
  return out;
}

/// P A P^T for a permutation of your own (collective): A square, split like p's rows. Each rank
/// asks the owners of the columns it holds for their new numbers (one exchange through the
/// policy's backend, counted under "reorder") and assembles its renumbered rows; no entry moves
/// to another rank.
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] reordered<T, Policy> reorder(const dist_matrix<T, Policy>& a, const row_permutation<Policy>& p) {
  static_assert(whole_row_mapping<typename Policy::mapping_type>,
                "tessera::reorder renumbers each rank's whole rows: it needs a distribution whose ranks own whole "
                "rows (capability whole_row_mapping); redistribute a grid-distributed A to row_block first");
  static_assert(!dist_matrix<T, Policy>::tiled,
                "tessera::reorder renumbers the rows and columns of element storages (csr, csc, coo, your own); "
                "tile storages keep their tiles' shapes");
  const communicator& comm = a.comm();
  const stats_scope scope(comm, "reorder");
  const auto& rows = a.mapping();
  comm.collectively([&] {
    TESSERA_REQUIRE(a.num_rows() == a.num_cols(), dimension_mismatch,
                    "reorder: A is {} x {}; renumbering rows and columns alike needs a square matrix", a.num_rows(),
                    a.num_cols());
    TESSERA_REQUIRE(same_rows(rows, p.mapping()), dimension_mismatch,
                    "reorder: A's {} rows are not split like the permutation's {} rows", a.num_rows(),
                    p.mapping().global_rows());
  });
  const int me = comm.rank();
  const triplets<T> entries = local_triplets(a);
  const auto new_global = [&](int owner, local_index new_row) {
    return rows.to_global(owner, static_cast<global_index>(new_row), 0).row;
  };

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
  bucket_builder<local_index> answer(comm.size());
  for (int r = 0; r < comm.size(); ++r) answer.count(r, asked.bucket(r).size());
  answer.allocate();
  for (int r = 0; r < comm.size(); ++r)
    for (const local_index old_row : asked.bucket(r)) answer.push(r, p.new_local_row(old_row));
  const auto answered = exchange_records(backend, comm, std::move(answer).finish());
  std::vector<global_index> remote_new(remote.size());
  std::vector<std::size_t> next(static_cast<std::size_t>(comm.size()), 0);
  for (std::size_t k = 0; k < remote.size(); ++k) {
    const int owner = rows.row_owner(remote[k]);
    remote_new[k] = new_global(owner, answered.bucket(owner)[next[static_cast<std::size_t>(owner)]++]);
  }

  triplets<T> renumbered;
  renumbered.reserve(entries.size());
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const global_index i = entries.rows[e], j = entries.cols[e];
    const global_index new_i = new_global(me, p.new_local_row(static_cast<local_index>(rows.local_row(i))));
    global_index new_j;
    if (rows.row_owner(j) == me) {
      new_j = new_global(me, p.new_local_row(static_cast<local_index>(rows.local_row(j))));
    } else {
      new_j = remote_new[static_cast<std::size_t>(std::lower_bound(remote.begin(), remote.end(), j) - remote.begin())];
    }
    renumbered.push_back(new_i, new_j, entries.values[e]);
  }
  return {detail::assemble_owned<T, Policy>(comm, rows, renumbered, combine::sum{}), p};
}

/// P A P^T with P found by `ordering` on each rank's diagonal block (collective): the rows and
/// the columns the rank owns, as the undirected graph of A + A^T (columns other ranks own follow
/// their owners' numbering). Serial host work per rank, O(nnz log nnz); do it once and
/// keep the vectors in the new numbering between products (permute_rows / restore_rows cost a copy
/// of the block each).
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] reordered<T, Policy> reorder(const dist_matrix<T, Policy>& a, row_ordering ordering) {
  static_assert(whole_row_mapping<typename Policy::mapping_type>,
                "tessera::reorder renumbers each rank's whole rows: it needs a distribution whose ranks own whole "
                "rows (capability whole_row_mapping); redistribute a grid-distributed A to row_block first");
  static_assert(!dist_matrix<T, Policy>::tiled,
                "tessera::reorder renumbers the rows and columns of element storages (csr, csc, coo, your own); "
                "tile storages keep their tiles' shapes");
  const communicator& comm = a.comm();
  comm.collectively([&] {
    TESSERA_REQUIRE(a.num_rows() == a.num_cols(), dimension_mismatch,
                    "reorder: A is {} x {}; renumbering rows and columns alike needs a square matrix", a.num_rows(),
                    a.num_cols());
    TESSERA_REQUIRE(ordering == row_ordering::natural || ordering == row_ordering::reverse_cuthill_mckee ||
                        ordering == row_ordering::by_degree,
                    invalid_argument, "reorder: {} is not a row_ordering", static_cast<int>(ordering));
  });
  const auto& rows = a.mapping();
  const int me = comm.rank();
  const auto n = static_cast<std::size_t>(a.local_rows());
  std::vector<local_index> order(n);
  if (ordering == row_ordering::natural) {
    std::iota(order.begin(), order.end(), local_index{0});
  } else {
    const triplets<T> entries = local_triplets(a);
    std::vector<local_index> from, to;
    from.reserve(entries.size());
    to.reserve(entries.size());
    for (std::size_t e = 0; e < entries.size(); ++e) {
      if (rows.row_owner(entries.cols[e]) != me) continue;
      from.push_back(static_cast<local_index>(rows.local_row(entries.rows[e])));
      to.push_back(static_cast<local_index>(rows.local_row(entries.cols[e])));
    }
    const auto graph = kernels::symmetric_graph_of(n, from, to);
    if (ordering == row_ordering::by_degree) {
      order = kernels::by_decreasing_degree(graph);
    } else {
      order = kernels::reverse_cuthill_mckee(graph);
      std::vector<local_index> as_now(n);
      std::iota(as_now.begin(), as_now.end(), local_index{0});
      if (kernels::bandwidth_under(graph, as_now) <= kernels::bandwidth_under(graph, kernels::positions_of(order)))
        order = std::move(as_now);
    }
  }
  return reorder(a, row_permutation<Policy>(comm, rows, kernels::positions_of(order)));
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_REORDER_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_REORDER_HPP
#endif
