// A downstream program on the public API only: a distribution of its own (row blocks dealt to the
// ranks in reverse order, so rank order is not row order) in CSC storage runs spgemm, transpose and
// spmm, and every result must equal row_block x csr's. The installed conformance suite runs on a
// backend context, as a user's own test would run it on their backend. Prints the Kokkos it was
// built with.
#include <tessera/tessera.hpp>
#include <tessera/testing/backend_conformance.hpp>

#include <string_view>

namespace {

using tessera::global_index;

// Rank r owns the (P - 1 - r)-th block of rows: contiguous ranges, in reverse rank order.
struct reversed_blocks {
  static constexpr std::string_view name() noexcept { return "reversed_blocks"; }
  class mapping {
   public:
    mapping() = default;
    mapping(int ranks, global_index rows, global_index cols)
        : ranks_(ranks), rows_(rows), cols_(cols), block_((rows + ranks - 1) / (ranks > 0 ? ranks : 1)) {}
    [[nodiscard]] int num_ranks() const noexcept { return ranks_; }
    [[nodiscard]] global_index global_rows() const noexcept { return rows_; }
    [[nodiscard]] global_index global_cols() const noexcept { return cols_; }
    [[nodiscard]] int row_owner(global_index i) const noexcept { return ranks_ - 1 - static_cast<int>(i / block_); }
    [[nodiscard]] global_index local_row(global_index i) const noexcept { return i % block_; }
    [[nodiscard]] int owner(global_index i, global_index) const noexcept { return row_owner(i); }
    [[nodiscard]] tessera::local_coordinate to_local(global_index i, global_index j) const noexcept {
      return {row_owner(i), local_row(i), j};
    }
    [[nodiscard]] tessera::global_coordinate to_global(int rank, global_index li, global_index lj) const noexcept {
      return {first(rank) + li, lj};
    }
    [[nodiscard]] tessera::local_extents extents(int rank) const noexcept {
      const global_index begin = first(rank), end = begin + block_ < rows_ ? begin + block_ : rows_;
      return {end > begin ? end - begin : 0, cols_};
    }
    [[nodiscard]] mapping with_shape(global_index rows, global_index cols) const { return {ranks_, rows, cols}; }
    friend bool operator==(const mapping&, const mapping&) = default;

   private:
    [[nodiscard]] global_index first(int rank) const noexcept { return static_cast<global_index>(ranks_ - 1 - rank) * block_; }
    int ranks_ = 1;
    global_index rows_ = 0, cols_ = 0, block_ = 1;
  };
  [[nodiscard]] mapping make_mapping(int ranks, global_index rows, global_index cols) const { return {ranks, rows, cols}; }
};

double x_value(global_index i, global_index j) { return static_cast<double>((i + 2 * j) % 5); }

}  // namespace

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  const auto& comm = env.world();
  using reference = tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>;
  using mine = tessera::policy<reversed_blocks, tessera::csc, tessera::mpi_rma>;
  const auto A = tessera::generate::laplacian_2d<double, reference>(comm, 8);
  const auto B = tessera::generate::laplacian_2d<double, mine>(comm, 8);
  tessera::dist_dense<double, reference> x(comm, A.num_cols(), 3);
  tessera::dist_dense<double, mine> z(comm, B.num_cols(), 3);
  x.fill(x_value);
  z.fill(x_value);
  const bool products = tessera::compare(tessera::spgemm(B, B), tessera::spgemm(A, A)).equal;
  const bool transposes = tessera::compare(tessera::transpose(B), tessera::transpose(A)).equal;
  const auto y_ref = tessera::spmm(A, x).gather_to_root();
  const auto y = tessera::spmm(B, z).gather_to_root();
  const bool vectors = comm.max(comm.rank() == 0 && *y != *y_ref ? 1 : 0) == 0;
  // A user's unit formats tessera's messages at run time (core/format.hpp): the values must be in.
  bool message = false;
  try {
    (void)tessera::spgemm(tessera::generate::laplacian_2d<double, reference>(comm, 4), A);
  } catch (const tessera::error& e) {
    message = e.kind() == tessera::error_kind::dimension_mismatch &&
              std::string_view(e.what()).find("A is 16 x 16 but B is 64 x 64") != std::string_view::npos;
  }
  tessera::aggregator::context backend(comm);
  tessera::testing::check_backend(backend);  // throws on every rank if a check fails
  const tessera::offset_type expected = 5 * 64 - 4 * 8;
  if (comm.rank() == 0)
    fmt::print("downstream: {} x {}, {} nonzeros; reversed_blocks x csc equal to row_block x csr: spgemm {}, "
               "transpose {}, spmm {}; error message formatted {}; backend conformance passed; KOKKOS_VERSION={}\n",
               A.num_rows(), A.num_cols(), A.global_nnz(), products, transposes, vectors, message, KOKKOS_VERSION);
  return A.global_nnz() == expected && B.global_nnz() == expected && products && transposes && vectors && message ? 0
                                                                                                                  : 1;
}
