// bench_spmm: Y = A * X with X of k columns (k = 1, 16, 64 by default), the
// inspector once, the executor timed. One JSON line per kernel (tessera's, Kokkos-Kernels') and k.
//
//   mpiexec -n 2 bench_spmm --rmat 14 [--k 1,16,64] [--backend rma|progress|aggregator] [--reps 5]
//                           [--stream-gbs GB/s | --stream-gbs measure] [--streaming-stores auto|off]
//                           [--distribution row_block|block_cyclic_2d|replicated_columns] [--grid PxQ] [--block B]
//                           [--vectors row_block|grid_aligned] [--type double|float] [--kernels all|tessera]
//                           [--gather-roof] [--x-memory private|node_shared]
//                           [--x-in-place automatic|always|never] [--order natural|rcm|degree]
//                           [--order-scope within_ranks|whole_matrix] [--order-split as_before|nonzeros]
//
// With a grid distribution A is redistributed first and X and Y stay row_block (or, with
// --vectors grid_aligned, are laid out along A's grid): the 2-D product (rows of X fetched per
// column block, partial Y reduced on its owners), reported as kernel "grid".
//
// Every line carries bytes_min, the bytes one product must touch at least (over all ranks: A's
// local CSR, row pointers + column indices + values, the rows of X its columns name and all of Y)
// and bandwidth_gbs = bytes_min / seconds. Given STREAM's triad bandwidth of the same ranks
// (bench_stream; "measure" runs it here first, whose arrays then count in peak_rss_mb), it adds
// bandwidth_fraction = bandwidth_gbs / STREAM: 1 is the memory-bandwidth bound.
//
// --gather-roof adds, to tessera's lines of doubles at k = 8, 16 and 32 by rows, the time every
// rank takes to read as many rows of k doubles as it has entries at uniformly random places of an
// array as large as the X it gathers from (its rows and its halo; bench_common's random_row_gather,
// measured right after the product): gather_roof_seconds and gather_fraction = that time over the
// product's. STREAM's roof assumes each row of X is read from memory once; on a matrix whose
// columns come in no order (R-MAT) the kernel reads a row per entry, and this is that read's cost
// on this machine, latency and cache sizes included. Above 1: the matrix's order let the caches
// hold the rows it re-reads (hubs) better than uniform reads would.
//
// --x-memory node_shared puts X in node-shared memory (share_on_node; row_block, tessera's kernel
// only): ranks read the rows of X their node peers own in place, nothing staged or fetched, where
// every rank reads only from its own node and spmm_options::read_x_in_place allows it (--x-in-place;
// by default where the shared memory has huge pages, x_shared_huge_pages, or X is small). x_rows_read says which the
// product did.
//
// --order rcm|degree renumbers A's rows and columns first (tessera::reorder, reverse Cuthill-McKee
// or by degree; within each rank, or with --order-scope whole_matrix over the whole matrix, rows
// moving between ranks; row_block only, outside the timing: reorder_seconds) and multiplies the
// renumbered A by X permuted alike: the locality an ordering gives X's reads. --order-split nonzeros
// (with whole_matrix) splits the renumbered rows by nonzeros (row_block::balance::nonzeros) instead of
// as A's were: an ordering that puts a power-law graph's hubs first otherwise gives one rank most
// of the entries. With
// --scramble (bench_common) the input's vertices are relabelled at random first, as a mesh
// numbered in no useful order comes.
//
// --type float multiplies in single precision (row_block only; SpDNN's type), --kernels tessera
// skips Kokkos-Kernels' kernel. A layer of the Graph Challenge's network as a Matrix Market file:
// bench/spdnn_layer_to_mtx.py (rows that share a pattern: kernels/spmm_row_groups.hpp).
#include "bench_spmm_runs.hpp"

#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

int main(int argc, char** argv) {
  // --k is this benchmark's own option; the rest follow bench_common's conventions.
  bench_spmm::settings s;
  std::string stream;  // --stream-gbs: a figure in GB/s, or "measure"
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--k" && i + 1 < argc) {
      s.widths.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) s.widths.push_back(std::stol(item));
    } else if (std::string_view(argv[i]) == "--stream-gbs" && i + 1 < argc) {
      stream = argv[++i];
    } else if (std::string_view(argv[i]) == "--streaming-stores" && i + 1 < argc) {
      s.streaming = std::string_view(argv[++i]) != "off";
    } else if (std::string_view(argv[i]) == "--type" && i + 1 < argc) {
      s.single = std::string_view(argv[++i]) == "float";
    } else if (std::string_view(argv[i]) == "--gather-roof") {
      s.gather_roof = true;
    } else if (std::string_view(argv[i]) == "--x-memory" && i + 1 < argc) {
      s.x_node_shared = std::string_view(argv[++i]) == "node_shared";
    } else if (std::string_view(argv[i]) == "--x-in-place" && i + 1 < argc) {
      const std::string_view when = argv[++i];
      s.read_x_in_place = when == "always" ? tessera::x_in_place::always
                          : when == "never" ? tessera::x_in_place::never
                                            : tessera::x_in_place::automatic;
    } else if (std::string_view(argv[i]) == "--order" && i + 1 < argc) {
      const std::string_view order = argv[++i];
      if (order == "rcm" || order == "reverse_cuthill_mckee") s.order = tessera::row_ordering::reverse_cuthill_mckee;
      else if (order == "degree" || order == "by_degree") s.order = tessera::row_ordering::by_degree;
      else if (order == "natural") s.order = tessera::row_ordering::natural;
      else {
        std::fprintf(stderr, "bench_spmm: --order natural|rcm|degree, not %s\n", argv[i]);
        return 2;
      }
    } else if (std::string_view(argv[i]) == "--order-scope" && i + 1 < argc) {
      s.order_scope = std::string_view(argv[++i]) == "whole_matrix" ? tessera::reorder_scope::whole_matrix
                                                                    : tessera::reorder_scope::within_ranks;
    } else if (std::string_view(argv[i]) == "--order-split" && i + 1 < argc) {
      s.order_split_by_nonzeros = std::string_view(argv[++i]) == "nonzeros";
    } else if (std::string_view(argv[i]) == "--kernels" && i + 1 < argc) {
      s.only_tessera = std::string_view(argv[++i]) == "tessera";
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  char** rest_args = rest.data();
  const auto args = tessera::bench::parse(rest_count, rest_args);
  if (s.single && args.distribution != "row_block") {
    std::fprintf(stderr, "bench_spmm: --type float runs on --distribution row_block only, not %s\n", args.distribution.c_str());
    return 2;
  }
  tessera::environment env(rest_count, rest_args, tessera::bench::environment_for(args.backend));
  if (stream == "measure")
    s.stream_gbs = tessera::bench::stream_triad_bytes_per_second(env.world(), std::size_t{1} << 25, 5) / 1e9;
  else if (!stream.empty())
    s.stream_gbs = std::stod(stream);
  int status = 0;
  const int known = tessera::bench::with_backend(args.backend, [&]<class Backend>() {
    status = tessera::bench::with_distribution(args, [&]<class Distribution>(const Distribution& d) {
      if constexpr (std::is_same_v<Distribution, tessera::row_block>)
        s.single ? bench_spmm::run_rows<Backend, float>(env.world(), args, s) : bench_spmm::run_rows<Backend, double>(env.world(), args, s);
      else
        bench_spmm::run_grid<Backend>(env.world(), args, s, d);
    });
  });
  return known != 0 ? known : status;
}
