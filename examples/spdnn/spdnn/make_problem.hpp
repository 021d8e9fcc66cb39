#pragma once
// Building an SpDNN problem (problem.hpp): the network's layers generated or read, the features
// split over the ranks in the form the mode computes in.

#include "network.hpp"
#include "problem.hpp"
#include "read_layers.hpp"
#include "tsv.hpp"
#include "tsv_rows.hpp"

#include <tessera/comm/mpi_check.hpp>
#include <tessera/core/uninitialized_allocator.hpp>
#include <tessera/distribution/row_block.hpp>
#include <tessera/matrix/build.hpp>
#include <tessera/matrix/dist_matrix.hpp>
#include <tessera/matrix/local_triplets.hpp>
#include <tessera/matrix/to_view.hpp>
#include <tessera/matrix/triplets.hpp>
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
#include <vector>

namespace spdnn {

/// The form each variant computes in (see the top of this file).
inline bool uses_row_form(scheme parallel, mode product) { return parallel == scheme::data && product != mode::spmm; }

/// W(l) (row form) or W'(l) for l = 1..L of the RadiX-Net, each rank generating its share of W's rows (collective).
template <class T, class Policy>
std::vector<tessera::dist_matrix<T, Policy>> generated_layers(const tessera::communicator& comm, const radixnet& net,
                                                              int layers, bool row_form) {
  std::vector<tessera::dist_matrix<T, Policy>> out;
  const tessera::row_block::mapping rows(comm.size(), net.neurons(), net.neurons());
  for (int l = 1; l <= layers; ++l) {
    tessera::triplets<T> t;
    for (auto i = rows.row_begin(comm.rank()); i < rows.row_end(comm.rank()); ++i)
      for (int j : net.row_columns(l, static_cast<int>(i)))
        row_form ? t.push_back(i, j, static_cast<T>(challenge_weight)) : t.push_back(j, i, static_cast<T>(challenge_weight));
    out.push_back(tessera::build_from_triplets<T, Policy>(comm, net.neurons(), net.neurons(), t));
  }
  return out;
}

/// Images [first, first + count) of the generator as (neuron, image + shift) triplets, or (image + shift, neuron).
template <class T>
tessera::triplets<T> generated_image_entries(const feature_generator& gen, std::int64_t first, std::int64_t count,
                                             std::int64_t shift, bool row_form = false) {
  tessera::triplets<T> t;
  for (std::int64_t r = first; r < first + count; ++r)
    for (int n : gen.image(r)) row_form ? t.push_back(r + shift, n, T(1)) : t.push_back(n, r + shift, T(1));
  return t;
}

/// Where the features come from: the generator, or entries (image, neuron, value) read from a file.
struct feature_source {
  const feature_generator* generator = nullptr;
  std::int64_t images = 0;          ///< generator: how many; file: how many at most (0: as many as its lines)
  const tsv_columns* file = nullptr;  ///< file: this rank's lines (0-based image, neuron), read on the world
};

/// The number of images a features file holds (its largest id + 1), checked on every rank before
/// anything is sized by it (collective over world): memory and time grow with it. An image has at
/// least one line in every file the challenge publishes or --write writes, so an id beyond the
/// file's line count cannot be one; `declared` (if positive) bounds the ids too.
inline std::int64_t images_in(const tessera::communicator& world, const tsv_columns& file, std::int64_t declared) {
  world.collectively([&] {
    TESSERA_REQUIRE(file.largest_first >= 0, parse_error, "{}:{}: no images: a features file holds at least one 'image neuron value' line",
                    file.path, std::max<std::int64_t>(file.lines, 1));
    TESSERA_REQUIRE(declared <= 0 || file.largest_first < declared, parse_error,
                    "{}:{}: image {} is beyond the {} images declared", file.path, file.largest_first_line,
                    file.largest_first + 1, declared);
    TESSERA_REQUIRE(file.largest_first < file.lines, parse_error,
                    "{}:{}: image {} is beyond the file's {} lines (each image has at least one line)", file.path,
                    file.largest_first_line, file.largest_first + 1, file.lines);
  });
  return file.largest_first + 1;
}

/// The problem of this rank: the layers on `comm` (world or self) and the
/// features split accordingly (collective over world). `layers` must be in
/// the form uses_row_form(parallel, product) says.
template <class T, class Policy>
problem<T, Policy> make_problem(const tessera::communicator& world, scheme parallel, mode product, int neurons,
                                std::vector<tessera::dist_matrix<T, Policy>> layers, const feature_source& source,
                                const tessera::communicator& comm) {
  const bool row_form = uses_row_form(parallel, product);
  comm.collectively([&] {
    TESSERA_REQUIRE(product != mode::fused || parallel == scheme::data, invalid_argument,
                    "spdnn: the fused mode runs data-parallel only (every rank holds every layer whole): use it with --parallel data");
  });
  problem<T, Policy> p{comm, std::move(layers), {}, row_form, 0, 0, {}};
  std::int64_t images = source.images;
  if (source.file != nullptr) images = images_in(world, *source.file, source.images);
  p.total_images = images;
  const tessera::row_block::mapping split(world.size(), images, neurons);
  const auto mine_first = split.row_begin(world.rank()), mine_count = split.row_end(world.rank()) - mine_first;

  if (parallel == scheme::model) {
    if (source.generator != nullptr) {
      const auto t = generated_image_entries<T>(*source.generator, mine_first, mine_count, 0);
      p.features.push_back(tessera::build_from_triplets<T, Policy>(world, neurons, images, t));
    } else {
      const auto values = values_as<T>(*source.file);
      p.features.push_back(tessera::build_from_triplets<T, Policy>(
          world, neurons, images, std::span<const tessera::global_index>(source.file->second),
          std::span<const tessera::global_index>(source.file->first), std::span<const T>(values)));
    }
    return p;
  }
  // Data parallelism: this rank's images, on its own communicator.
  p.first_image = mine_first;
  if (source.generator != nullptr) {
    const auto t = generated_image_entries<T>(*source.generator, mine_first, mine_count, -mine_first, row_form);
    p.features.push_back(row_form ? tessera::build_from_triplets<T, Policy>(comm, mine_count, neurons, t)
                                  : tessera::build_from_triplets<T, Policy>(comm, neurons, mine_count, t));
    return p;
  }
  // Lines were read wherever they fell: route them to their image's rank, assembled by image. That
  // block (this rank's images in order, their neurons) is the row form on `comm` as it stands; the
  // other form is its transpose there. One assembly, not a second one from triplets.
  const auto values = values_as<T>(*source.file);
  const auto routed = tessera::build_from_triplets<T, Policy>(
      world, images, neurons, std::span<const tessera::global_index>(source.file->first),
      std::span<const tessera::global_index>(source.file->second), std::span<const T>(values));
  tessera::dist_matrix<T, Policy> mine(comm, typename Policy::distribution_type{}.make_mapping(1, mine_count, neurons),
                                       routed.local(), routed.col_map());
  p.features.push_back(row_form ? std::move(mine) : tessera::transpose(mine));
  return p;
}

/// make_problem from features read by read_tsv_rows on world (collective over world). With data
/// parallelism, csr storage and the file's lines in (image, neuron) order, each rank keeps the
/// images whose lines it read, as it read them: the images are split where the file's bytes were,
/// at whole images (one whose lines cross a share's end goes whole to the lowest rank holding a line
/// of it: those lines are all that move), so each rank's images hold about the same number of
/// nonzeros. Anything else takes the routed make_problem above.
template <class T, class Policy>
problem<T, Policy> make_problem(const tessera::communicator& world, scheme parallel, mode product, int neurons,
                                std::vector<tessera::dist_matrix<T, Policy>> layers, tsv_rows<T>& rows,
                                std::int64_t declared_images, const tessera::communicator& comm) {
  const std::int64_t images = images_in(world, rows.file, declared_images);
  // Of every rank: in order, entries, rows, first (image, neuron), last (image, neuron), first row's entries.
  constexpr std::size_t fields = 8;
  std::vector<std::int64_t> mine(fields, -1);
  mine[0] = rows.in_order ? 1 : 0;
  mine[1] = static_cast<std::int64_t>(rows.size());
  mine[2] = static_cast<std::int64_t>(rows.row_id.size());
  if (rows.in_order && rows.size() > 0)
    mine = {1, mine[1], mine[2], rows.row_id.front(), rows.column.front(), rows.row_id.back(), rows.column.back(),
            static_cast<std::int64_t>(rows.row_size(0))};
  const auto all = world.allgather_concatenated(mine);
  const auto of = [&](int r, std::size_t field) { return all[fields * static_cast<std::size_t>(r) + field]; };
  const int ranks = world.size(), me = world.rank();
  bool in_order = parallel == scheme::data && std::same_as<typename Policy::storage_type, tessera::csr>;
  for (int r = 0, previous = -1; r < ranks && in_order; ++r) {
    in_order = of(r, 0) == 1;
    if (of(r, 1) == 0) continue;
    if (previous >= 0)
      in_order = in_order && std::pair(of(previous, 5), of(previous, 6)) < std::pair(of(r, 3), of(r, 4));
    previous = r;
  }
  if (!in_order) {
    rows.to_columns();
    const feature_source source{nullptr, declared_images, &rows.file};
    return make_problem<T, Policy>(world, parallel, product, neurons, std::move(layers), source, comm);
  }

  // Who keeps each rank's first image (the lowest rank holding a line of it), and where each rank's
  // images start: the ranks that keep none start where the next one does.
  std::vector<int> keeper(static_cast<std::size_t>(ranks), -1);
  for (int r = 0; r < ranks; ++r) {
    if (of(r, 1) == 0) continue;
    keeper[static_cast<std::size_t>(r)] = r;
    for (int q = r - 1; q >= 0; --q) {
      if (of(q, 1) == 0) continue;
      if (of(q, 5) != of(r, 3)) break;
      keeper[static_cast<std::size_t>(r)] = q;
    }
  }
  std::vector<std::int64_t> start(static_cast<std::size_t>(ranks) + 1, images);
  for (int r = ranks - 1; r >= 0; --r) {
    const auto k = static_cast<std::size_t>(r);
    const bool keeps_first = keeper[k] == r, keeps_more = of(r, 2) > 1;
    start[k] = keeps_first ? of(r, 3) : keeper[k] >= 0 && keeps_more ? of(r, 3) + 1 : start[k + 1];
  }
  start[0] = 0;

  // The lines of a first image kept elsewhere go to its keeper, after its own (ranks in order).
  std::vector<int> send_columns(static_cast<std::size_t>(ranks), 0), receive_columns(send_columns), send_values(send_columns),
      receive_values(send_columns), send_at(send_columns), receive_columns_at(send_columns), receive_values_at(send_columns);
  std::size_t arriving = 0;
  // MPI counts bytes in an int here.
  constexpr std::int64_t most_moving =
      std::numeric_limits<int>::max() / static_cast<std::int64_t>(std::max(sizeof(T), sizeof(tessera::local_index)));
  world.collectively([&] {
    for (int r = 0; r < ranks; ++r) {
      const auto k = static_cast<std::size_t>(r);
      if (keeper[k] < 0 || keeper[k] == r) continue;
      TESSERA_REQUIRE(of(r, 7) <= most_moving, unsupported, "{}: image {} has {} lines on rank {}; at most {} can move to another rank",
                      rows.file.path, of(r, 3) + 1, of(r, 7), r, most_moving);
      if (r == me) {
        send_columns[static_cast<std::size_t>(keeper[k])] = static_cast<int>(of(r, 7) * static_cast<std::int64_t>(sizeof(tessera::local_index)));
        send_values[static_cast<std::size_t>(keeper[k])] = static_cast<int>(of(r, 7) * static_cast<std::int64_t>(sizeof(T)));
      }
      if (keeper[k] == me) {
        receive_columns_at[k] = static_cast<int>(arriving * sizeof(tessera::local_index));
        receive_values_at[k] = static_cast<int>(arriving * sizeof(T));
        receive_columns[k] = static_cast<int>(of(r, 7) * static_cast<std::int64_t>(sizeof(tessera::local_index)));
        receive_values[k] = static_cast<int>(of(r, 7) * static_cast<std::int64_t>(sizeof(T)));
        arriving += static_cast<std::size_t>(of(r, 7));
        TESSERA_REQUIRE(static_cast<std::int64_t>(arriving) <= most_moving, unsupported,
                        "{}: {} lines would move to rank {}; at most {} can", rows.file.path, arriving, me, most_moving);
      }
    }
  });
  const std::size_t had = rows.column.size;
  rows.column.resize(had + arriving);
  rows.value.resize(had + arriving);
  TESSERA_MPI(MPI_Alltoallv(rows.column.begin(), send_columns.data(), send_at.data(), MPI_BYTE, rows.column.begin() + had,
                            receive_columns.data(), receive_columns_at.data(), MPI_BYTE, world.get()));
  TESSERA_MPI(MPI_Alltoallv(rows.value.begin(), send_values.data(), send_at.data(), MPI_BYTE, rows.value.begin() + had,
                            receive_values.data(), receive_values_at.data(), MPI_BYTE, world.get()));

  // A first image kept elsewhere lies before `first`: rows_block leaves it out.
  const auto first = start[static_cast<std::size_t>(me)], count = start[static_cast<std::size_t>(me) + 1] - first;
  auto [block, col_map] = rows_block<T, typename Policy::memory_space>(std::move(rows), first, count, neurons);
  tessera::dist_matrix<T, Policy> features(comm, typename Policy::distribution_type{}.make_mapping(1, count, neurons),
                                           std::move(block), std::move(col_map));
  const bool row_form = uses_row_form(parallel, product);
  problem<T, Policy> p{comm, std::move(layers), {}, row_form, first, images, {}};
  p.features.push_back(row_form ? std::move(features) : tessera::transpose(features));
  return p;
}

}  // namespace spdnn
