// Must NOT compile: a distribution that scatters entries by a hash of (i, j) satisfies the
// general mapping concept but has neither capability spgemm needs: whole rows on each rank
// (whole_row_mapping) or a grid that re-tiles (retiling_grid_mapping). The test expects
// tessera's static_assert sentence, naming both and the way out.
#include <tessera/comm/mpi_rma.hpp>
#include <tessera/environment.hpp>
#include <tessera/matrix/build.hpp>
#include <tessera/ops/spgemm_default.hpp>
#include <tessera/storage/csr.hpp>

#include <string_view>

namespace hashed_example {

struct hashed_entries {
  static constexpr std::string_view name() noexcept { return "hashed_entries"; }
  class mapping {
   public:
    mapping() = default;
    mapping(int ranks, tessera::global_index rows, tessera::global_index cols) : ranks_(ranks), rows_(rows), cols_(cols) {}
    [[nodiscard]] int num_ranks() const noexcept { return ranks_; }
    [[nodiscard]] tessera::global_index global_rows() const noexcept { return rows_; }
    [[nodiscard]] tessera::global_index global_cols() const noexcept { return cols_; }
    [[nodiscard]] int owner(tessera::global_index i, tessera::global_index j) const noexcept {
      return static_cast<int>((i * 31 + j) % ranks_);
    }
    [[nodiscard]] tessera::local_coordinate to_local(tessera::global_index i, tessera::global_index j) const noexcept {
      return {owner(i, j), i, j};
    }
    [[nodiscard]] tessera::global_coordinate to_global(int, tessera::global_index i, tessera::global_index j) const noexcept {
      return {i, j};
    }
    [[nodiscard]] tessera::local_extents extents(int) const noexcept { return {rows_, cols_}; }
    friend bool operator==(const mapping&, const mapping&) = default;

   private:
    int ranks_ = 1;
    tessera::global_index rows_ = 0, cols_ = 0;
  };
  [[nodiscard]] mapping make_mapping(int ranks, tessera::global_index rows, tessera::global_index cols) const {
    return {ranks, rows, cols};
  }
};

}  // namespace hashed_example

int main(int argc, char** argv) {
  tessera::environment env(argc, argv);
  using P = tessera::policy<hashed_example::hashed_entries, tessera::csr, tessera::mpi_rma>;
  const auto a = tessera::build_from_triplets<double, P>(env.world(), 8, 8, tessera::triplets<double>{});
  return static_cast<int>(tessera::spgemm(a, a).global_nnz());
}
