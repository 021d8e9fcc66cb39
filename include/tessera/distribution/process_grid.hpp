#pragma once
/// @file
/// A p x q process grid: what the grid distributions (block_cyclic_2d, replicated_columns) and the
/// grid algorithms (ops/grid/) share, apart from any one distribution.
#include "../core/error.hpp"

#include <algorithm>
#include <cmath>

namespace tessera {

/// A p x q process grid; rank r * q + c sits at row r, column c.
struct process_grid {
  int p = 1;
  int q = 1;
  [[nodiscard]] int size() const noexcept { return p * q; }
  [[nodiscard]] int rank(int row, int col) const noexcept { return row * q + col; }
  [[nodiscard]] int row_of(int rank) const noexcept { return rank / q; }
  [[nodiscard]] int col_of(int rank) const noexcept { return rank % q; }
  /// The squarest grid of `ranks` processes with p <= q.
  [[nodiscard]] static process_grid squarest(int ranks) {
    int p = static_cast<int>(std::sqrt(static_cast<double>(ranks)));
    while (p > 1 && ranks % p != 0) --p;
    p = std::max(p, 1);
    return {p, ranks / p};
  }
  friend bool operator==(const process_grid&, const process_grid&) = default;
};

namespace detail {
/// Throw unless `grid` has exactly `ranks` processes.
inline void require_grid(const process_grid& grid, int ranks, const char* who) {
  TESSERA_REQUIRE(grid.p > 0 && grid.q > 0, invalid_argument, "{}: a {} x {} process grid is empty", who, grid.p,
                  grid.q);
  TESSERA_REQUIRE(grid.size() == ranks, dimension_mismatch,
                  "{}: a {} x {} process grid needs {} ranks but the communicator has {}", who, grid.p, grid.q,
                  grid.size(), ranks);
}

}  // namespace detail

}  // namespace tessera
