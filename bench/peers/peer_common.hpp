#pragma once
// Shared by the peer comparison benchmarks (bench_peer_<peer>_<op>): the same command line as
// tessera's benchmarks, the same input matrix (built by tessera's own generators or Matrix Market
// reader, with the same seed and the same row-block distribution), this rank's rows of it as plain
// CSR arrays with global column indices, from which each peer builds its own matrix, and the same
// JSON line fields, so that checksums and times can be compared line by line with bench_spmm,
// bench_spgemm and bench_transpose.
#include "support/bench_common.hpp"

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::bench::peer {

/// The command line: bench_common's flags plus `--k 1,16,64` (SpMM widths).
struct peer_args {
  args base;
  std::vector<long> widths{1, 16, 64};
  std::vector<char*> rest;  // argv without --k, for bench_common's parser and the peers' initialisers
  int rest_count = 0;
  char** rest_argv = nullptr;
};

inline peer_args parse(int argc, char** argv) {
  peer_args p;
  p.rest.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--k" && i + 1 < argc) {
      p.widths.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) p.widths.push_back(std::stol(item));
    } else {
      p.rest.push_back(argv[i]);
    }
  }
  p.rest_count = static_cast<int>(p.rest.size());
  p.rest.push_back(nullptr);
  p.rest_argv = p.rest.data();
  int count = p.rest_count;
  char** rest_args = p.rest_argv;
  p.base = tessera::bench::parse(count, rest_args);
  return p;
}

/// This rank's rows [row_begin, row_end) of the input, CSR with global column indices, sorted.
struct local_csr {
  global_index rows = 0, cols = 0, global_nnz = 0;
  global_index row_begin = 0, row_end = 0;
  std::vector<global_index> row_ptr{0};  // local, starts at 0
  std::vector<global_index> col_idx;
  std::vector<double> values;

  [[nodiscard]] global_index local_rows() const noexcept { return row_end - row_begin; }
};

/// The same matrix tessera's benchmarks use (row_block, csr, mpi_rma), as this rank's CSR rows.
inline local_csr input_rows(const communicator& comm, const args& a) {
  using P = policy<row_block, csr, mpi_rma>;
  const auto m = input_matrix<double, P>(comm, a);
  local_csr out;
  out.rows = m.num_rows();
  out.cols = m.num_cols();
  out.global_nnz = m.global_nnz();
  out.row_begin = m.mapping().row_begin(comm.rank());
  out.row_end = m.mapping().row_end(comm.rank());
  auto t = local_triplets(m);  // sorted by global row, then global column
  out.row_ptr.assign(static_cast<std::size_t>(out.local_rows()) + 1, 0);
  for (global_index r : t.rows) ++out.row_ptr[static_cast<std::size_t>(r - out.row_begin) + 1];
  for (std::size_t i = 1; i < out.row_ptr.size(); ++i) out.row_ptr[i] += out.row_ptr[i - 1];
  out.col_idx = std::move(t.cols);
  out.values = std::move(t.values);
  return out;
}

/// Every rank's first row (size + 1 entries), for peers that want the full row split (collective).
inline std::vector<global_index> row_offsets(const communicator& comm, const local_csr& a) {
  const auto counts = comm.allgather(a.local_rows());
  std::vector<global_index> offsets(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) offsets[i + 1] = offsets[i] + counts[i];
  return offsets;
}

/// X(i, j) of every SpMM benchmark (bench_spmm fills X the same way).
inline double x_value(global_index i, global_index j) { return 1.0 / static_cast<double>(1 + (i + j) % 7); }

/// One JSON line of an operation's result, with the fields of tessera's own lines.
struct result {
  std::string bench;  // e.g. "peer_petsc_spgemm"
  std::string peer;   // "petsc", "tpetra", "combblas"
  std::string op;     // "A*A", "A*At", "A^T", "A*X", ...
  std::string matrix;
  int np = 0;
  long k = -1;  // SpMM width (-1: not an SpMM)
  double seconds = 0;
  int reps = 0;
  global_index nnz_in = 0;
  global_index nnz_out = -1;  // -1: not printed
  double checksum = 0;
  double peak_rss_before_mb = 0;
  double peak_rss_mb = 0;
  std::string extra;  // more ", \"key\": value" pairs, already formatted
};

/// A line's common fields: bench "peer_<peer>_<kind>", the input's name, ranks, reps, input nonzeros, time.
inline result measured(const communicator& comm, const peer_args& args, const std::string& peer, const std::string& kind,
                       std::string op, global_index nnz_in, double seconds) {
  result r;
  r.bench = "peer_" + peer + "_" + kind;
  r.peer = peer;
  r.op = std::move(op);
  r.matrix = matrix_name(args.base);
  r.np = comm.size();
  r.reps = args.base.reps;
  r.nnz_in = nnz_in;
  r.seconds = seconds;
  return r;
}

inline void print(const communicator& comm, const result& r) {
  if (comm.rank() != 0) return;
  std::string line = fmt::format("{{\"bench\": \"{}\", \"peer\": \"{}\", \"op\": \"{}\", \"matrix\": \"{}\", \"np\": {}, "
                                 "\"backend\": \"mpi\"",
                                 r.bench, r.peer, r.op, r.matrix, r.np);
  if (r.k >= 0) line += fmt::format(", \"k\": {}", r.k);
  line += fmt::format(", \"seconds\": {:.6f}, \"reps\": {}, \"nnz\": {}", r.seconds, r.reps, r.nnz_in);
  if (r.k >= 0)
    line += fmt::format(", \"gflops\": {:.4f}",
                        2.0 * static_cast<double>(r.nnz_in) * static_cast<double>(r.k) / r.seconds / 1e9);
  if (r.nnz_out >= 0) line += fmt::format(", \"nnz_out\": {}", r.nnz_out);
  line += fmt::format(", \"checksum\": {:.10g}, \"peak_rss_before_mb\": {:.1f}, \"peak_rss_mb\": {:.1f}{}}}\n", r.checksum,
                      r.peak_rss_before_mb, r.peak_rss_mb, r.extra);
  fmt::print("{}", line);
  std::fflush(stdout);
}

}  // namespace tessera::bench::peer
