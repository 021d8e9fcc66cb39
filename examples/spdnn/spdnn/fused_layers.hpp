#pragma once
// spdnn's fused mode (examples/spdnn/spdnn/inference.hpp, --mode fused): each image's sparse row
// taken through every layer by one work item, product, bias, ReLU, cap and the drop of zeros in
// one pass per layer, with the weights in the layout that pass reads best.
//
// Why: after the first layer an image keeps 6-18% of its neurons (4,096 and more), so the dense
// batches of spmm mode spend most of their multiply-adds on zeros, and pay again to find the dead
// images and compact the batch. Here an image costs what its nonzeros cost, and a dead image stops.
//
// The layout: outputs of a layer whose columns of W(l) are identical (same inputs, same values)
// get the same value for every image, to the bit (the same products added in the same order), so
// each such class is computed once. RadiX-Net's columns come in classes of 16 (and the challenge's
// weights are all 1/16), so a row of W(l) is 2 classes, not 32 outputs: a nonzero y_j costs two
// scalar multiply-adds. A network without identical columns has classes of one output: the plain
// sparse row times sparse matrix, no worse than Gustavson's.
//
// The sums are the reference's (reference.hpp) to the bit: each output adds its inputs' products in
// ascending neuron order, one at a time, as the spmm and spgemm modes do; the kept outputs are put
// back in neuron order after each layer. (Summing the inputs of a group of identical rows apart
// first changed the rounding, and with it 3 of 60,000 categories at 1,024 neurons.)

#include "batch_kernels.hpp"

#include <tessera/comm/communicator.hpp>
#include <tessera/comm/mpi_check.hpp>
#include <tessera/comm/mpi_datatype.hpp>
#include <tessera/core/error.hpp>
#include <tessera/matrix/dist_matrix.hpp>
#include <tessera/matrix/to_view.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace spdnn {

/// Every layer W(1..L) of a square network with its outputs in classes of identical columns.
/// Layer l has classes [class_at(l), class_at(l + 1)) (global class numbers g); class g's output
/// neurons are class_member[class_ptr(g) .. class_ptr(g + 1)), ascending. Row j of layer l (index
/// i = l * neurons + j) holds W(j, k) = class_value(e) for every member k of class class_of(e), e in
/// [row_ptr(i), row_ptr(i + 1)), classes as local numbers (g - class_at(l)), ascending. A layer whose
/// weights are all one value (an iso-valued matrix, as GraphBLAS calls it: the challenge's are all
/// 1/16) has iso_value(l) = 1 and layer_value(l) that value, and its class_value entries are not
/// read: a third less of W to bring to the core per nonzero.
template <class T, class MemorySpace>
struct fused_network {
  int neurons = 0;
  int layers = 0;
  int widest = 0;  ///< the most classes of any layer
  std::int64_t weights = 0;  ///< nonzeros of W over all layers
  Kokkos::View<std::int64_t*, MemorySpace> row_ptr;
  Kokkos::View<std::int32_t*, MemorySpace> class_of;
  Kokkos::View<T*, MemorySpace> class_value;
  Kokkos::View<std::int64_t*, MemorySpace> class_at;  ///< per layer, and one past the last
  Kokkos::View<char*, MemorySpace> iso_value;          ///< per layer
  Kokkos::View<T*, MemorySpace> layer_value;           ///< per layer (iso layers)
  Kokkos::View<std::int64_t*, MemorySpace> class_ptr;
  Kokkos::View<std::int32_t*, MemorySpace> class_member;

  /// Entries of W over the class entries the kernel reads: 16 on RadiX-Net, 1 without identical columns.
  [[nodiscard]] double compression() const noexcept {
    return class_of.extent(0) == 0 ? 1.0 : static_cast<double>(weights) / static_cast<double>(class_of.extent(0));
  }
};

/// One layer on the host: CSR over the input neurons, global output ids.
struct host_layer {
  std::vector<tessera::offset_type> row_ptr;
  std::vector<std::int64_t> columns;  // global output neuron
  std::vector<double> values;
};

/// Layer `w` (whole on one rank) as a host_layer.
template <class T, class Policy>
host_layer host_copy(const tessera::dist_matrix<T, Policy>& w) {
  const auto& block = w.local();
  const auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, block.row_ptr);
  const auto col_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, block.col_idx);
  const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, block.values);
  const auto col_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, w.col_map());
  host_layer out;
  out.row_ptr.assign(row_ptr.data(), row_ptr.data() + row_ptr.extent(0));
  out.columns.resize(col_idx.extent(0));
  out.values.resize(col_idx.extent(0));
  for (std::size_t e = 0; e < col_idx.extent(0); ++e) {
    out.columns[e] = col_map(static_cast<std::size_t>(col_idx(e)));
    out.values[e] = static_cast<double>(values(e));
  }
  return out;
}

/// The hash of each output's column of W (its rows and values, rows ascending) and its entry
/// count, from one pass over the rows: the hashes fit in L2 where the columns themselves do not.
struct column_digests {
  std::vector<std::uint64_t> hash;
  std::vector<std::int64_t> count;
};

inline column_digests digest_columns(const host_layer& w, std::size_t n) {
  column_digests out{std::vector<std::uint64_t>(n, 0x9e3779b97f4a7c15ULL), std::vector<std::int64_t>(n, 0)};
  const auto mix = [](std::uint64_t h, std::uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xbf58476d1ce4e5b9ULL;
  };
  for (std::size_t r = 0; r + 1 < w.row_ptr.size(); ++r)
    for (auto e = w.row_ptr[r]; e < w.row_ptr[r + 1]; ++e) {
      const auto k = static_cast<std::size_t>(w.columns[static_cast<std::size_t>(e)]);
      const double v = w.values[static_cast<std::size_t>(e)];
      out.hash[k] = mix(mix(out.hash[k], r), std::bit_cast<std::uint64_t>(v == 0.0 ? 0.0 : v));  // -0 and 0 are one value
      ++out.count[k];
    }
  return out;
}

/// Classes numbered by first member (0-based, in neuron order) from each output's leader (the
/// first member of its class).
inline std::vector<std::int32_t> number_classes(const std::vector<std::int32_t>& leader, std::int32_t& classes) {
  constexpr std::int32_t none = -1;
  std::vector<std::int32_t> class_of(leader.size()), number(leader.size(), none);
  classes = 0;
  for (std::size_t k = 0; k < leader.size(); ++k) {  // ascending: a class's first member comes first
    auto& c = number[static_cast<std::size_t>(leader[k])];
    if (c == none) c = classes++;
    class_of[k] = c;
  }
  return class_of;
}

/// Outputs in ascending order of (hash, neuron): equal hashes in runs, each run's first output its
/// lowest-numbered.
inline std::vector<std::int32_t> by_hash(const std::vector<std::uint64_t>& hash) {
  std::vector<std::int32_t> order(hash.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    const auto ha = hash[static_cast<std::size_t>(a)], hb = hash[static_cast<std::size_t>(b)];
    return ha != hb ? ha < hb : a < b;
  });
  return order;
}

/// output_classes when two columns of one hash may differ: the columns copied out (rows ascending)
/// and each column of a run of equal hashes compared entry by entry with the run's earlier leaders.
inline std::vector<std::int32_t> output_classes_by_columns(const host_layer& w, std::size_t n,
                                                           const column_digests& digests, std::int32_t& classes) {
  std::vector<std::int64_t> col_ptr(n + 1, 0);
  std::partial_sum(digests.count.begin(), digests.count.end(), col_ptr.begin() + 1);
  std::vector<std::pair<std::int32_t, double>> column(w.columns.size());  // (row, value), rows ascending
  std::vector<std::int64_t> fill(col_ptr.begin(), col_ptr.end() - 1);
  for (std::size_t r = 0; r + 1 < w.row_ptr.size(); ++r)
    for (auto e = w.row_ptr[r]; e < w.row_ptr[r + 1]; ++e) {
      const auto k = static_cast<std::size_t>(w.columns[static_cast<std::size_t>(e)]);
      column[static_cast<std::size_t>(fill[k]++)] = {static_cast<std::int32_t>(r), w.values[static_cast<std::size_t>(e)]};
    }
  const auto entries = [&](std::size_t k) {
    return std::span<const std::pair<std::int32_t, double>>(column.data() + col_ptr[k], column.data() + col_ptr[k + 1]);
  };
  const auto order = by_hash(digests.hash);
  // Within a run of equal hashes, each column joins the first earlier column of the run equal to
  // it, or starts a class.
  constexpr std::int32_t none = -1;
  std::vector<std::int32_t> leader(n, none);
  for (std::size_t p = 0; p < n;) {
    std::size_t q = p + 1;
    while (q < n && digests.hash[static_cast<std::size_t>(order[q])] == digests.hash[static_cast<std::size_t>(order[p])]) ++q;
    for (std::size_t i = p; i < q; ++i) {
      const auto k = static_cast<std::size_t>(order[i]);
      for (std::size_t t = p; t < i && leader[k] == none; ++t) {
        const auto candidate = static_cast<std::size_t>(order[t]);
        if (leader[candidate] == order[t] && std::ranges::equal(entries(k), entries(candidate))) leader[k] = order[t];
      }
      if (leader[k] == none) leader[k] = static_cast<std::int32_t>(k);
    }
    p = q;
  }
  return number_classes(leader, classes);
}

/// The classes if every output equals the first output of its run of equal hashes (checked
/// exactly, row by row: every entry of the output has its equal in the same row of that first
/// output, and both hold as many entries); nullopt where two different columns share a hash.
inline std::optional<std::vector<std::int32_t>> classes_by_hash(const host_layer& w, const column_digests& digests,
                                                                std::int32_t& classes) {
  const std::size_t n = digests.hash.size();
  const auto order = by_hash(digests.hash);
  std::vector<std::int32_t> leader(n);
  for (std::size_t p = 0; p < n;) {
    std::size_t q = p + 1;
    while (q < n && digests.hash[static_cast<std::size_t>(order[q])] == digests.hash[static_cast<std::size_t>(order[p])]) ++q;
    for (std::size_t i = p; i < q; ++i) leader[static_cast<std::size_t>(order[i])] = order[p];
    p = q;
  }
  bool equal = true;
  for (std::size_t k = 0; k < n && equal; ++k)
    equal = digests.count[k] == digests.count[static_cast<std::size_t>(leader[k])];
  // Row by row: where[k] is the position of output k's entry in the current row (or -1).
  std::vector<std::int64_t> where(n, -1);
  for (std::size_t r = 0; r + 1 < w.row_ptr.size() && equal; ++r) {
    const auto first = w.row_ptr[r], last = w.row_ptr[r + 1];
    for (auto e = first; e < last; ++e) where[static_cast<std::size_t>(w.columns[static_cast<std::size_t>(e)])] = e;
    for (auto e = first; e < last && equal; ++e) {
      const auto k = static_cast<std::size_t>(w.columns[static_cast<std::size_t>(e)]);
      const auto at = where[static_cast<std::size_t>(leader[k])];
      equal = at >= 0 && w.values[static_cast<std::size_t>(at)] == w.values[static_cast<std::size_t>(e)];
    }
    for (auto e = first; e < last; ++e) where[static_cast<std::size_t>(w.columns[static_cast<std::size_t>(e)])] = -1;
  }
  if (!equal) return std::nullopt;
  return number_classes(leader, classes);
}

/// Each output's class (0-based, numbered by first member) in a layer: outputs with identical
/// columns of W (the same rows, the same values) share one. Columns are compared by a hash of their
/// entries: each output is taken to be equal to the first output of its run of equal hashes, and
/// that is then checked exactly, row by row (every entry of the output has its equal in the same
/// row of the leader, and both hold as many entries), so the classes never rest on the hash alone.
/// A failed check (two different columns with one hash) falls back to comparing the columns
/// themselves. Row by row, because copying the columns out and comparing them scattered every
/// weight into a column-major copy and read it back at random: 3.4 s of the 3.8 s that preparing
/// the 120 layers of 16,384 neurons took per rank.
inline std::vector<std::int32_t> output_classes(const host_layer& w, int neurons, std::int32_t& classes) {
  const auto n = static_cast<std::size_t>(neurons);
  const auto digests = digest_columns(w, n);
  if (auto class_of = classes_by_hash(w, digests, classes)) return std::move(*class_of);
  return output_classes_by_columns(w, n, digests, classes);
}

/// One layer in the fused kernel's layout, numbered from 0 within the layer (fuse_layers joins them).
template <class T>
struct fused_layer {
  std::vector<std::int64_t> row_ptr;       ///< neurons + 1, from 0
  std::vector<std::int32_t> class_of;      ///< per entry: the class it reaches
  std::vector<T> class_value;              ///< per entry
  std::vector<std::int64_t> class_ptr;     ///< classes + 1, from 0: offsets into class_member
  std::vector<std::int32_t> class_member;  ///< neurons: each class's members, ascending
  std::int64_t weights = 0;                ///< nonzeros of W
  T value = T(0);                          ///< the first weight (all of them where iso)
  bool iso = false;

  [[nodiscard]] std::int32_t classes() const noexcept { return static_cast<std::int32_t>(class_ptr.size()) - 1; }
};

/// Layer w (whole on one rank, neurons x neurons: fuse_layers checks) in the fused kernel's layout.
template <class T, class Policy>
fused_layer<T> fuse_layer(const tessera::dist_matrix<T, Policy>& w, int neurons) {
  const auto n = static_cast<std::size_t>(neurons);
  const auto host = host_copy(w);
  std::int32_t classes = 0;
  const auto class_of_output = output_classes(host, neurons, classes);
  fused_layer<T> out;
  // Members, ascending within each class.
  out.class_ptr.assign(static_cast<std::size_t>(classes) + 1, 0);
  for (const auto c : class_of_output) ++out.class_ptr[static_cast<std::size_t>(c) + 1];
  std::partial_sum(out.class_ptr.begin(), out.class_ptr.end(), out.class_ptr.begin());
  out.class_member.resize(n);
  std::vector<std::int64_t> at(out.class_ptr.begin(), out.class_ptr.end() - 1);
  for (std::size_t k = 0; k < n; ++k)
    out.class_member[static_cast<std::size_t>(at[static_cast<std::size_t>(class_of_output[k])]++)] = static_cast<std::int32_t>(k);
  // Rows: one entry per class they reach (every member of it, with one value), classes ascending.
  out.row_ptr.reserve(n + 1);
  out.row_ptr.push_back(0);
  std::vector<std::int64_t> seen_in_row(static_cast<std::size_t>(classes), -1);
  std::vector<std::pair<std::int32_t, T>> row;
  for (std::size_t r = 0; r < n; ++r) {
    row.clear();
    for (auto e = host.row_ptr[r]; e < host.row_ptr[r + 1]; ++e) {
      const auto c = class_of_output[static_cast<std::size_t>(host.columns[static_cast<std::size_t>(e)])];
      if (std::exchange(seen_in_row[static_cast<std::size_t>(c)], static_cast<std::int64_t>(r)) == static_cast<std::int64_t>(r)) continue;
      row.emplace_back(c, static_cast<T>(host.values[static_cast<std::size_t>(e)]));
    }
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [c, v] : row) {
      out.class_of.push_back(c);
      out.class_value.push_back(v);
    }
    out.row_ptr.push_back(static_cast<std::int64_t>(out.class_of.size()));
  }
  if (!host.values.empty()) {
    out.value = static_cast<T>(host.values.front());
    out.iso = std::all_of(host.values.begin(), host.values.end(), [&](double v) { return static_cast<T>(v) == out.value; });
  }
  out.weights = static_cast<std::int64_t>(host.columns.size());
  return out;
}

namespace detail {

/// Every layer whole on one rank and neurons x neurons, or the same refusal on each rank that checks.
template <class T, class Policy>
void require_fusable(const std::vector<tessera::dist_matrix<T, Policy>>& layers, int neurons) {
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& w = layers[l];
    TESSERA_REQUIRE(w.comm().size() == 1 && w.num_rows() == neurons && w.num_cols() == neurons, invalid_argument,
                    "spdnn: the fused mode needs every layer whole on each rank and {} x {}; layer {} is {} x {} on {} rank(s)",
                    neurons, neurons, l + 1, w.num_rows(), w.num_cols(), w.comm().size());
  }
}

/// The fused layers one after the other: fused_network's arrays.
template <class T, class MemorySpace>
fused_network<T, MemorySpace> join_layers(const std::vector<fused_layer<T>>& layers, int neurons) {
  fused_network<T, MemorySpace> out;
  out.neurons = neurons;
  out.layers = static_cast<int>(layers.size());
  std::vector<std::int64_t> row_ptr{0}, class_at{0}, class_ptr{0};
  std::vector<std::int32_t> class_of, class_member;
  std::vector<T> class_value, layer_value;
  std::vector<char> iso_value;
  for (const auto& layer : layers) {
    const auto entries = static_cast<std::int64_t>(class_of.size()), members = static_cast<std::int64_t>(class_member.size());
    for (std::size_t r = 1; r < layer.row_ptr.size(); ++r) row_ptr.push_back(entries + layer.row_ptr[r]);
    for (std::size_t c = 1; c < layer.class_ptr.size(); ++c) class_ptr.push_back(members + layer.class_ptr[c]);
    class_of.insert(class_of.end(), layer.class_of.begin(), layer.class_of.end());
    class_value.insert(class_value.end(), layer.class_value.begin(), layer.class_value.end());
    class_member.insert(class_member.end(), layer.class_member.begin(), layer.class_member.end());
    class_at.push_back(class_at.back() + layer.classes());
    iso_value.push_back(layer.iso ? 1 : 0);
    layer_value.push_back(layer.value);
    out.widest = std::max(out.widest, static_cast<int>(layer.classes()));
    out.weights += layer.weights;
  }
  out.row_ptr = tessera::to_view<std::int64_t, MemorySpace>(row_ptr, "spdnn::row_ptr");
  out.class_of = tessera::to_view<std::int32_t, MemorySpace>(class_of, "spdnn::class_of");
  out.class_value = tessera::to_view<T, MemorySpace>(class_value, "spdnn::class_value");
  out.class_at = tessera::to_view<std::int64_t, MemorySpace>(class_at, "spdnn::class_at");
  out.iso_value = tessera::to_view<char, MemorySpace>(iso_value, "spdnn::iso_value");
  out.layer_value = tessera::to_view<T, MemorySpace>(layer_value, "spdnn::layer_value");
  out.class_ptr = tessera::to_view<std::int64_t, MemorySpace>(class_ptr, "spdnn::class_ptr");
  out.class_member = tessera::to_view<std::int32_t, MemorySpace>(class_member, "spdnn::class_member");
  return out;
}

}  // namespace detail

/// The layers in the fused kernel's layout (see fused_network). Each layer must be whole on a
/// communicator of one rank (data parallelism: every rank holds every layer) and square,
/// `neurons` x `neurons`; anything else is refused.
template <class T, class Policy>
fused_network<T, typename Policy::memory_space> fuse_layers(const std::vector<tessera::dist_matrix<T, Policy>>& layers,
                                                           int neurons) {
  detail::require_fusable(layers, neurons);
  std::vector<fused_layer<T>> fused;
  fused.reserve(layers.size());
  for (const auto& w : layers) fused.push_back(fuse_layer(w, neurons));
  return detail::join_layers<T, typename Policy::memory_space>(fused, neurons);
}

/// fuse_layers with the work shared over `world` (collective), whose every rank holds the same
/// layers (data parallelism): rank r lays out layers r + 1, r + 1 + P, ... and broadcasts each to
/// the others, so that P ranks of a node spend 1/P of the time each rank alone would (2.0 -> about
/// 1.1 s at 2 ranks for 120 layers of 16,384 neurons). Layers that differ between ranks (in count or
/// in weights per layer) are refused on every rank.
template <class T, class Policy>
fused_network<T, typename Policy::memory_space> fuse_layers(const tessera::communicator& world,
                                                           const std::vector<tessera::dist_matrix<T, Policy>>& layers,
                                                           int neurons) {
  world.collectively([&] { detail::require_fusable(layers, neurons); });
  const int ranks = world.size();
  // The layer count, then each layer's weights, the same on every rank (checked in that order: the
  // second reduction's length is the count); then each layer's entries and classes from its owner.
  const auto count = static_cast<std::int64_t>(layers.size());
  const bool same_count = world.min(count) == world.max(count);
  std::vector<std::int64_t> weights(layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l) weights[l] = static_cast<std::int64_t>(layers[l].local().nnz());
  auto low = weights, high = weights;
  if (same_count) {
    world.allreduce_inplace(low, MPI_MIN);
    world.allreduce_inplace(high, MPI_MAX);
  }
  world.collectively([&] {
    TESSERA_REQUIRE(same_count && low == high, invalid_argument,
                    "spdnn: the fused mode shares its layout work over the ranks, which must hold the same layers; "
                    "they hold different counts or weights per layer");
  });
  std::vector<fused_layer<T>> fused(layers.size());
  std::vector<std::int64_t> sizes(2 * layers.size(), 0);
  for (std::size_t l = static_cast<std::size_t>(world.rank()); l < layers.size(); l += static_cast<std::size_t>(ranks)) {
    fused[l] = fuse_layer(layers[l], neurons);
    sizes[2 * l] = static_cast<std::int64_t>(fused[l].class_of.size());
    sizes[2 * l + 1] = fused[l].classes();
  }
  world.allreduce_inplace(sizes, MPI_SUM);
  const auto broadcast = [&](auto& values, MPI_Datatype type, int owner) {
    TESSERA_REQUIRE(values.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()), unsupported,
                    "spdnn: {} values of a fused layer cannot be broadcast in one message", values.size());
    if (!values.empty())
      TESSERA_MPI(MPI_Bcast(values.data(), static_cast<int>(values.size()), type, owner, world.get()));
  };
  const auto n = static_cast<std::size_t>(neurons);
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const int owner = static_cast<int>(l % static_cast<std::size_t>(ranks));
    auto& layer = fused[l];
    if (owner != world.rank()) {
      const auto entries = static_cast<std::size_t>(sizes[2 * l]), classes = static_cast<std::size_t>(sizes[2 * l + 1]);
      layer.row_ptr.resize(n + 1);
      layer.class_of.resize(entries);
      layer.class_value.resize(entries);
      layer.class_ptr.resize(classes + 1);
      layer.class_member.resize(n);
      layer.weights = weights[l];
    }
    broadcast(layer.row_ptr, MPI_INT64_T, owner);
    broadcast(layer.class_of, MPI_INT32_T, owner);
    broadcast(layer.class_value, tessera::mpi_datatype<T>(), owner);
    broadcast(layer.class_ptr, MPI_INT64_T, owner);
    broadcast(layer.class_member, MPI_INT32_T, owner);
    std::array<T, 2> scalars{layer.value, layer.iso ? T(1) : T(0)};
    TESSERA_MPI(MPI_Bcast(scalars.data(), 2, tessera::mpi_datatype<T>(), owner, world.get()));
    layer.value = scalars[0];
    layer.iso = scalars[1] != T(0);
  }
  return detail::join_layers<T, typename Policy::memory_space>(fused, neurons);
}

namespace detail {

/// The per-image buffers of the fused kernel (a work item's scratch): the class sums (`acc`,
/// zeroed between layers), the image's nonzeros in neuron order (`index`, `value`), and the
/// kept neurons' values and marks (`by_neuron`, `marked`: a bit per neuron, left cleared).
template <class T>
struct image_buffers {
  T* acc;
  std::int32_t* index;
  T* value;
  T* by_neuron;
  std::uint64_t* marked;
};

/// The lowest set bit of a nonzero word.
KOKKOS_INLINE_FUNCTION int lowest_set_bit(std::uint64_t x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return std::countr_zero(x);
#endif
}

/// One image through every layer (the body of run_fused's work item), from its nonzeros in
/// b.index/b.value (neuron order). Returns how many it kept after the last layer (0: dead).
template <class T, class MemorySpace>
KOKKOS_INLINE_FUNCTION std::int32_t image_through_layers(const fused_network<T, MemorySpace>& net, bias_relu_clamp<T> act,
                                                         std::int32_t count, const image_buffers<T>& b) {
  for (int l = 0; l < net.layers && count > 0; ++l) {
    const std::int64_t rows_at = static_cast<std::int64_t>(l) * net.neurons;
    // The product: each class's sum over the image's nonzeros in neuron order, as the reference adds.
    if (net.iso_value(static_cast<std::size_t>(l))) {
      const T w = net.layer_value(static_cast<std::size_t>(l));
      for (std::int32_t e = 0; e < count; ++e) {
        const T y = b.value[e];
        const auto r = static_cast<std::size_t>(rows_at + b.index[e]);
        for (auto c = net.row_ptr(r); c < net.row_ptr(r + 1); ++c) {
          T& sum = b.acc[net.class_of(static_cast<std::size_t>(c))];
          sum += y * w;
        }
      }
    } else {
      for (std::int32_t e = 0; e < count; ++e) {
        const T y = b.value[e];
        const auto r = static_cast<std::size_t>(rows_at + b.index[e]);
        for (auto c = net.row_ptr(r); c < net.row_ptr(r + 1); ++c) {
          T& sum = b.acc[net.class_of(static_cast<std::size_t>(c))];
          sum += y * net.class_value(static_cast<std::size_t>(c));
        }
      }
    }
    // The activation, once per class; a kept class marks its members.
    const auto first_class = net.class_at(static_cast<std::size_t>(l));
    const auto classes = static_cast<std::int32_t>(net.class_at(static_cast<std::size_t>(l) + 1) - first_class);
    bool any = false;
    for (std::int32_t g = 0; g < classes; ++g) {
      const T y = act(b.acc[g]);
      b.acc[g] = T(0);
      if (y == T(0)) continue;
      any = true;
      const auto global = static_cast<std::size_t>(first_class + g);
      for (auto m = net.class_ptr(global); m < net.class_ptr(global + 1); ++m) {
        const auto k = static_cast<std::size_t>(net.class_member(static_cast<std::size_t>(m)));
        b.marked[k / 64] |= std::uint64_t{1} << (k % 64);
        b.by_neuron[k] = y;
      }
    }
    // Back to neuron order: the marked bits, word by word (a walk over every neuron cost more
    // than the layer's product and activation together).
    count = 0;
    if (!any) break;
    for (std::int32_t word = 0; word < (net.neurons + 63) / 64; ++word) {
      std::uint64_t bits = b.marked[word];
      b.marked[word] = 0;
      while (bits != 0) {
        const std::int32_t k = word * 64 + lowest_set_bit(bits);
        bits &= bits - 1;
        b.index[count] = k;
        b.value[count] = b.by_neuron[k];
        ++count;
      }
    }
  }
  return count;
}

}  // namespace detail

/// Images through every layer of `net`, one work item per image (a team of one, its buffers in the
/// team's scratch), starting from `features` (images x neurons, CSR, each row's columns
/// ascending; local column c is neuron col_map(c), ascending). Returns per image 1 if it kept a
/// nonzero after the last layer.
template <class T, class Policy, class Rows, class ColMap>
Kokkos::View<char*, typename Policy::memory_space> run_fused(const fused_network<T, typename Policy::memory_space>& net,
                                                             const Rows& features, const ColMap& col_map, bias_relu_clamp<T> act) {
  using exec = typename Policy::execution_space;
  using team_policy = Kokkos::TeamPolicy<exec, Kokkos::Schedule<Kokkos::Dynamic>>;
  const auto images = static_cast<std::size_t>(features.rows);
  const Kokkos::View<char*, typename Policy::memory_space> alive("spdnn::alive", images);
  if (images == 0) return alive;
  constexpr std::size_t align = 64;
  const auto rounded = [](std::size_t bytes) { return (bytes + align - 1) / align * align; };
  const auto n = static_cast<std::size_t>(net.neurons), widest = static_cast<std::size_t>(net.widest);
  const std::size_t acc_bytes = rounded(widest * sizeof(T)), index_bytes = rounded(n * sizeof(std::int32_t)),
                    value_bytes = rounded(n * sizeof(T)), mark_bytes = rounded((n + 63) / 64 * sizeof(std::uint64_t));
  const std::size_t scratch = acc_bytes + index_bytes + 2 * value_bytes + mark_bytes + align;
  const auto row_ptr = features.row_ptr;
  const auto col_idx = features.col_idx;
  const auto feature_values = features.values;
  Kokkos::parallel_for(
      "spdnn::fused", team_policy(static_cast<int>(images), 1).set_scratch_size(1, Kokkos::PerTeam(scratch)),
      KOKKOS_LAMBDA(const typename team_policy::member_type& m) {
        char* base = static_cast<char*>(m.team_scratch(1).get_shmem_aligned(scratch - align, align));
        detail::image_buffers<T> b{};
        b.acc = reinterpret_cast<T*>(base);
        b.index = reinterpret_cast<std::int32_t*>(base + acc_bytes);
        b.value = reinterpret_cast<T*>(base + acc_bytes + index_bytes);
        b.by_neuron = reinterpret_cast<T*>(base + acc_bytes + index_bytes + value_bytes);
        b.marked = reinterpret_cast<std::uint64_t*>(base + acc_bytes + index_bytes + 2 * value_bytes);
        for (std::size_t g = 0; g < widest; ++g) b.acc[g] = T(0);
        for (std::size_t w = 0; w < (n + 63) / 64; ++w) b.marked[w] = 0;
        const auto i = static_cast<std::size_t>(m.league_rank());
        std::int32_t count = 0;
        for (auto e = row_ptr(i); e < row_ptr(i + 1); ++e) {
          b.index[count] = static_cast<std::int32_t>(col_map(static_cast<std::size_t>(col_idx(e))));
          b.value[count] = feature_values(e);
          ++count;
        }
        alive(i) = detail::image_through_layers(net, act, count, b) > 0 ? 1 : 0;
      });
  exec().fence();
  return alive;
}

}  // namespace spdnn
