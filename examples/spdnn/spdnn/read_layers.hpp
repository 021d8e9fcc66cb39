#pragma once
// The challenge's weight files read into the layers W(l) (row form) or W'(l): split over the ranks
// of a communicator (model parallelism), or whole on every rank, each file read by one rank and
// its block broadcast (data parallelism).

#include "tsv.hpp"
#include "tsv_rows.hpp"

#include <tessera/comm/communicator.hpp>
#include <tessera/comm/mpi_check.hpp>
#include <tessera/comm/mpi_datatype.hpp>
#include <tessera/core/huge_pages.hpp>
#include <tessera/distribution/row_block.hpp>
#include <tessera/matrix/build.hpp>
#include <tessera/matrix/dist_matrix.hpp>
#include <tessera/core/uninitialized_allocator.hpp>
#include <tessera/ops/transpose.hpp>
#include <tessera/storage/csr.hpp>

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace spdnn {

/// The challenge's weight file of layer l in `dir` (or in dir/neuron{N}).
inline std::string weight_file(const std::string& dir, int neurons, int layer) {
  const std::string name = fmt::format("n{}-l{}.tsv", neurons, layer);
  const auto nested = std::filesystem::path(dir) / fmt::format("neuron{}", neurons) / name;
  if (std::filesystem::exists(nested)) return nested.string();
  return (std::filesystem::path(dir) / name).string();
}

/// A file's values as T, for build_from_triplets' spans (its indices are passed as they were read:
/// no copy into triplets). Not zeroed before they are written.
template <class T>
std::vector<T, tessera::uninitialized_allocator<T>> values_as(const tsv_columns& file) {
  std::vector<T, tessera::uninitialized_allocator<T>> out(file.value.size());
  std::transform(file.value.begin(), file.value.end(), out.begin(), [](double v) { return static_cast<T>(v); });
  return out;
}

/// W(l) (row form) or W'(l) read from the challenge's file of layer l, in parallel over comm (collective).
/// On one rank (data parallelism) a file in row order is the block as it was read (tsv_rows.hpp).
template <class T, class Policy>
tessera::dist_matrix<T, Policy> read_layer(const tessera::communicator& comm, const std::string& dir, int neurons,
                                           int layer, bool row_form) {
  const auto path = weight_file(dir, neurons, layer);
  const bool whole = comm.size() == 1 && std::same_as<typename Policy::storage_type, tessera::csr>;
  tsv_rows<T> rows;
  if (whole) {
    rows = read_tsv_rows<T>(comm, path, weights_layout(neurons));
  } else {
    rows.file = read_tsv(comm, path, weights_layout(neurons));
    rows.in_order = false;
  }
  const tsv_columns& cols = rows.file;
  // An empty layer would silently kill every image: a file error, not a network.
  const auto weights = comm.sum(static_cast<std::int64_t>(rows.size()));
  comm.collectively([&] {
    TESSERA_REQUIRE(weights > 0, parse_error, "{}:{}: no weights: a layer file holds at least one 'row column value' line",
                    cols.path, std::max<std::int64_t>(cols.lines, 1));
  });
  if constexpr (std::same_as<typename Policy::storage_type, tessera::csr>) {
    if (rows.in_order) {
      auto [block, col_map] = rows_block<T, typename Policy::memory_space>(std::move(rows), 0, neurons, neurons);
      tessera::dist_matrix<T, Policy> w(comm, typename Policy::distribution_type{}.make_mapping(1, neurons, neurons),
                                        std::move(block), std::move(col_map));
      return row_form ? w : tessera::transpose(w);
    }
  }
  const auto values = values_as<T>(cols);
  const std::span<const tessera::global_index> first(cols.first), second(cols.second);
  return tessera::build_from_triplets<T, Policy>(comm, neurons, neurons, row_form ? first : second,
                                                 row_form ? second : first, std::span<const T>(values));
}

/// W(l) (row form) or W'(l) for l = 1..L read from the challenge's files, in parallel over comm (collective).
template <class T, class Policy>
std::vector<tessera::dist_matrix<T, Policy>> read_layers(const tessera::communicator& comm, const std::string& dir,
                                                         int neurons, int layers, bool row_form) {
  std::vector<tessera::dist_matrix<T, Policy>> out;
  for (int l = 1; l <= layers; ++l) out.push_back(read_layer<T, Policy>(comm, dir, neurons, l, row_form));
  return out;
}

/// The layers whole on each rank of `world`, each on `alone` (a communicator of that rank only: data
/// parallelism), as read_layers(alone, ...) gives them, with each file read once in all: rank r
/// reads and assembles layers r + 1, r + 1 + P, ..., and sends each assembled block to the others
/// (8 bytes per weight in float instead of parsing the file's 20-odd again on every rank). A malformed file
/// is reported on every rank: the lowest-numbered layer that failed.
template <class T, class Policy>
std::vector<tessera::dist_matrix<T, Policy>> read_layers_once(const tessera::communicator& world,
                                                              const tessera::communicator& alone, const std::string& dir,
                                                              int neurons, int layers, bool row_form) {
  using matrix = tessera::dist_matrix<T, Policy>;
  const int ranks = world.size();
  std::vector<std::optional<matrix>> mine(static_cast<std::size_t>(std::max(layers, 0)));
  std::exception_ptr failure;
  int failed_layer = std::numeric_limits<int>::max();
  for (int l = 1 + world.rank(); l <= layers && !failure; l += ranks) {
    try {
      mine[static_cast<std::size_t>(l - 1)].emplace(read_layer<T, Policy>(alone, dir, neurons, l, row_form));
    } catch (...) {
      failure = std::current_exception();
      failed_layer = l;
    }
  }
  const int first_failed = world.min(failed_layer);
  world.collectively([&] {
    if (failure && failed_layer == first_failed) std::rethrow_exception(failure);
  });

  // Every layer's entries and mapped columns, from its reader: one allreduce, then each block is
  // broadcast straight from its reader's arrays into the others' (copying each through vectors on
  // both sides cost more than the broadcasts).
  using mem = typename Policy::memory_space;
  using host = Kokkos::HostSpace;
  std::vector<std::int64_t> sizes(2 * mine.size(), 0);
  for (std::size_t k = 0; k < mine.size(); ++k)
    if (mine[k]) {
      sizes[2 * k] = mine[k]->local().nnz();
      sizes[2 * k + 1] = static_cast<std::int64_t>(mine[k]->col_map().extent(0));
    }
  world.allreduce_inplace(sizes, MPI_SUM);
  world.collectively([&] {
    for (std::size_t k = 0; k < mine.size(); ++k)
      TESSERA_REQUIRE(sizes[2 * k] <= std::numeric_limits<int>::max(), unsupported,
                      "spdnn: layer {} has {} weights; at most {} can be sent to the other ranks", k + 1, sizes[2 * k],
                      std::numeric_limits<int>::max());
  });
  const auto broadcast = [&](auto& view, MPI_Datatype type, int owner) {
    if (view.extent(0) > 0) TESSERA_MPI(MPI_Bcast(view.data(), static_cast<int>(view.extent(0)), type, owner, world.get()));
  };
  // The columns and values of the blocks this rank receives, in one array per kind: each block's
  // are a piece of it. Advised as huge pages, they are first touched (inside the broadcasts) at a
  // page fault per 2 MiB instead of per 4 KiB: a block of 2 MiB per kind, as at N = 16384, is
  // under what one array of its own could be given, and the faults were half the broadcasts' time.
  const auto fresh = [](const char* label) { return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)); };
  std::size_t received = 0;
  for (std::size_t k = 0; k < mine.size(); ++k)
    if (!mine[k]) received += static_cast<std::size_t>(sizes[2 * k]);
  Kokkos::View<tessera::local_index*, host> received_columns(fresh("spdnn::received_col_idx"), received);
  Kokkos::View<T*, host> received_values(fresh("spdnn::received_values"), received);
  tessera::advise_huge_pages(received_columns.data(), received * sizeof(tessera::local_index));
  tessera::advise_huge_pages(received_values.data(), received * sizeof(T));
  std::size_t next_received = 0;

  std::vector<matrix> out;
  out.reserve(mine.size());
  const auto mapping = typename Policy::distribution_type{}.make_mapping(1, neurons, neurons);
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const int owner = static_cast<int>(k) % ranks;
    const auto entries = static_cast<std::size_t>(sizes[2 * k]), mapped = static_cast<std::size_t>(sizes[2 * k + 1]);
    // On the reader, the block's own arrays (host mirrors of host memory are the arrays themselves).
    const bool reader = mine[k].has_value();
    const auto piece = std::make_pair(next_received, next_received + (reader ? 0 : entries));
    next_received = piece.second;
    Kokkos::View<tessera::offset_type*, host> ptr(fresh("spdnn::row_ptr"), reader ? 0 : static_cast<std::size_t>(neurons) + 1);
    Kokkos::View<tessera::local_index*, host> col = Kokkos::subview(received_columns, piece);
    Kokkos::View<T*, host> val = Kokkos::subview(received_values, piece);
    Kokkos::View<tessera::global_index*, host> map(fresh("spdnn::col_map"), reader ? 0 : mapped);
    if (reader) {
      ptr = Kokkos::create_mirror_view_and_copy(host{}, mine[k]->local().row_ptr);
      col = Kokkos::create_mirror_view_and_copy(host{}, mine[k]->local().col_idx);
      val = Kokkos::create_mirror_view_and_copy(host{}, mine[k]->local().values);
      map = Kokkos::create_mirror_view_and_copy(host{}, mine[k]->col_map());
    }
    broadcast(ptr, MPI_INT64_T, owner);
    broadcast(col, MPI_INT32_T, owner);
    broadcast(val, tessera::mpi_datatype<T>(), owner);
    broadcast(map, MPI_INT64_T, owner);
    if (mine[k]) {
      out.push_back(std::move(*mine[k]));
      continue;
    }
    typename matrix::local_block_type block;
    block.rows = neurons;
    block.cols = static_cast<tessera::local_index>(mapped);
    block.row_ptr = Kokkos::create_mirror_view_and_copy(mem{}, ptr);
    block.col_idx = Kokkos::create_mirror_view_and_copy(mem{}, col);
    block.values = Kokkos::create_mirror_view_and_copy(mem{}, val);
    out.emplace_back(alone, mapping, std::move(block), Kokkos::create_mirror_view_and_copy(mem{}, map));
  }
  return out;
}

}  // namespace spdnn
