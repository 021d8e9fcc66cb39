// bench_peer_dbcsr_bsgemm: bench_bsgemm's synthetic problems (same tilings, patterns and values)
// multiplied by DBCSR's c_dbcsr_multiply_d on a p x q grid; one JSON line per measurement.
//
//   OMP_NUM_THREADS=1 mpiexec -n 2 bench_peer_dbcsr_bsgemm [--tiles 32:128,128:512]
//                     [--densities 1,0.3,0.1,0.03] [--m 1024] [--n N] [--grid-rows p] [--reps 3]
#include "support/bench_common.hpp"
#include "support/block_sparse_problems.hpp"

#include <dbcsr.h>

#include <sstream>

namespace {

using namespace tessera;

using options = bench::synthetic_options;

[[noreturn]] void usage(int code) {
  fmt::print(code == 0 ? stdout : stderr,
             "usage: bench_peer_dbcsr_bsgemm [--tiles LO:HI,...] [--densities D,...] [--m M] [--n N] [--grid-rows p]\n"
             "                               [--seed S] [--reps N]\n");
  std::exit(code);
}

options parse(int argc, char** argv) {
  options o;
  for (int k = 1; k < argc; ++k) {
    const std::string_view arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) usage(2);
      return argv[++k];
    };
    const auto taken = o.parse(arg, value);
    if (!taken) usage(2);
    if (*taken) continue;
    if (arg == "--help" || arg == "-h") usage(0);
    else usage(2);
  }
  return o;
}

std::vector<int> sizes_of(const tiled_range& r) {
  std::vector<int> s;
  for (std::size_t t = 0; t < r.num_tiles(); ++t) s.push_back(static_cast<int>(r.size(t)));
  return s;
}

// A DBCSR matrix on the p x q grid (tile (i, j) on grid (i mod p, j mod q)), filled like tessera's.
template <class Nonzero>
dbcsr_matrix make_matrix(const char* name, MPI_Comm cart, const int coords[2], const int dims[2],
                         const tiled_range& rows, const tiled_range& cols, Nonzero&& nonzero, std::uint64_t salt,
                         dbcsr_distribution& dist) {
  std::vector<int> row_dist(rows.num_tiles()), col_dist(cols.num_tiles());
  for (std::size_t i = 0; i < row_dist.size(); ++i) row_dist[i] = static_cast<int>(i) % dims[0];
  for (std::size_t j = 0; j < col_dist.size(); ++j) col_dist[j] = static_cast<int>(j) % dims[1];
  c_dbcsr_distribution_new(&dist, cart, row_dist.data(), static_cast<int>(row_dist.size()), col_dist.data(),
                           static_cast<int>(col_dist.size()));
  auto rs = sizes_of(rows), cs = sizes_of(cols);
  dbcsr_matrix m = nullptr;
  c_dbcsr_create_new(&m, name, dist, dbcsr_type_no_symmetry, rs.data(), static_cast<int>(rs.size()), cs.data(),
                     static_cast<int>(cs.size()), nullptr, &dbcsr_type_real_8, nullptr, nullptr, nullptr, nullptr);
  std::vector<double> block;
  for (std::size_t i = 0; i < rows.num_tiles(); ++i) {
    if (row_dist[i] != coords[0]) continue;
    for (std::size_t j = 0; j < cols.num_tiles(); ++j) {
      if (col_dist[j] != coords[1] || !nonzero(i, j)) continue;
      block.clear();
      for (global_index c = cols.begin(j); c < cols.end(j); ++c)  // column-major, as tessera's tiles
        for (global_index r = rows.begin(i); r < rows.end(i); ++r) block.push_back(generate::tensor_value(r, c, salt));
      c_dbcsr_put_block2d_d(m, static_cast<int>(i), static_cast<int>(j), block.data(), rs[i], cs[j], nullptr, nullptr);
    }
  }
  c_dbcsr_finalize(m);
  return m;
}

double checksum(dbcsr_matrix c, MPI_Comm comm) {
  dbcsr_iterator it = nullptr;
  const bool no = false, yes = true;
  c_dbcsr_iterator_start(&it, c, &no, &no, &no, &no, &yes);
  double sum = 0;
  while (c_dbcsr_iterator_blocks_left(it)) {
    int row = 0, col = 0, number = 0, rows = 0, cols = 0, row_offset = 0, col_offset = 0;
    double* block = nullptr;
    bool transposed = false;
    c_dbcsr_iterator_next_2d_block_d(it, &row, &col, &block, &transposed, &number, &rows, &cols, &row_offset,
                                     &col_offset);
    for (int e = 0; e < rows * cols; ++e) sum += block[e];
  }
  c_dbcsr_iterator_stop(&it);
  double total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
  tessera::environment env(argc, argv);
  const auto& comm = env.world();
  if (opt.grid_rows <= 0 || comm.size() % opt.grid_rows != 0) {
    if (comm.rank() == 0) fmt::print(stderr, "--grid-rows {} does not divide {} ranks\n", opt.grid_rows, comm.size());
    return 2;
  }
  int dims[2] = {opt.grid_rows, comm.size() / opt.grid_rows}, periods[2] = {0, 0}, coords[2] = {0, 0};
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(comm.get(), 2, dims, periods, 0, &cart);
  int cart_rank = 0;
  MPI_Comm_rank(cart, &cart_rank);
  MPI_Cart_coords(cart, cart_rank, 2, coords);
  c_dbcsr_init_lib(cart, nullptr);
  for (const auto& [lo, hi] : opt.tiles)
    for (double density : opt.densities) {
      const bench::synthetic_problem pr(opt.m, bench::default_n(opt.n, density), lo, hi, density, opt.seed);
      dbcsr_distribution da = nullptr, db = nullptr, dc = nullptr;
      dbcsr_matrix a = make_matrix(
          "A", cart, coords, dims, pr.m_tiles, pr.k_tiles, [&](std::size_t i, std::size_t j) { return pr.a_nonzero(i, j); },
          1, da);
      dbcsr_matrix b = make_matrix(
          "B", cart, coords, dims, pr.k_tiles, pr.n_tiles, [&](std::size_t i, std::size_t j) { return pr.b_nonzero(i, j); },
          2, db);
      dbcsr_matrix c = make_matrix("C", cart, coords, dims, pr.m_tiles, pr.n_tiles,
                                   [](std::size_t, std::size_t) { return false; }, 3, dc);
      long long flops = 0;
      const double seconds = bench::median_seconds(comm, opt.reps, [&] {
        c_dbcsr_multiply_d('N', 'N', 1.0, a, b, 0.0, c, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                           nullptr, &flops);
      });
      long long total_flops = 0;
      MPI_Allreduce(&flops, &total_flops, 1, MPI_LONG_LONG, MPI_SUM, cart);
      const double sum = checksum(c, cart);
      const double rss = bench::peak_rss_mb(comm);
      if (comm.rank() == 0)
        fmt::print("{{\"bench\": \"peer_dbcsr_bsgemm\", \"matrix\": \"synthetic-tiles{}-{}-density{}\", \"m\": {}, "
                   "\"n\": {}, \"k\": {}, \"np\": {}, \"grid\": \"{}x{}\", \"backend\": \"dbcsr\", \"flops\": {}, "
                   "\"seconds\": {:.6f}, \"reps\": {}, \"gflops\": {:.3f}, \"checksum\": {:.10g}, "
                   "\"peak_rss_mb\": {:.1f}}}\n",
                   lo, hi, density, pr.m_tiles.extent(), pr.n_tiles.extent(), pr.k_tiles.extent(), comm.size(),
                   dims[0], dims[1], total_flops, seconds, opt.reps, static_cast<double>(total_flops) / seconds * 1e-9,
                   sum, rss);
      c_dbcsr_release(&a);
      c_dbcsr_release(&b);
      c_dbcsr_release(&c);
      c_dbcsr_distribution_release(&da);
      c_dbcsr_distribution_release(&db);
      c_dbcsr_distribution_release(&dc);
    }
  c_dbcsr_finalize_lib();
  MPI_Comm_free(&cart);
  return 0;
}
