#pragma once
/// @file
/// The inspector's pieces of bsgemm that need no communication: flops per
/// column of B, packing columns into memory-bounded blocks (worst fit), and
/// cutting a block's A tiles into chunks (one tile per A row, cyclically).

#include "../../core/error.hpp"
#include "../../storage/block_sparse.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace tessera::detail {

/// True when the product of two tiles with these norms survives screening (threshold 0: always).
inline bool passes_screening(double norm_a, double norm_b, double threshold) noexcept {
  return threshold <= 0 || norm_a * norm_b >= threshold;
}

/// Flops of every tile column of B in A * B: f_j = sum over nonzero B(k, j) and nonzero A(i, k) of 2 m_i k n_j.
inline std::vector<double> column_flops(const block_sparse_shape& a, const block_sparse_shape& b, double threshold) {
  std::vector<double> flops(b.col_tiles().num_tiles(), 0.0);
  const auto& at = a.tiles();
  const auto& bt = b.tiles();
  for (std::size_t j = 0; j < b.col_tiles().num_tiles(); ++j)
    for (std::size_t e = b.col_begin(j); e < b.col_end(j); ++e) {
      const auto& tb = bt[b.by_col()[e]];
      const auto kk = static_cast<std::size_t>(tb.row);
      const double kn = 2.0 * static_cast<double>(b.row_tiles().size(kk)) * static_cast<double>(b.col_tiles().size(j));
      for (std::size_t f = a.col_begin(kk); f < a.col_end(kk); ++f) {
        const auto& ta = at[a.by_col()[f]];
        if (passes_screening(ta.norm, tb.norm, threshold))
          flops[j] += kn * static_cast<double>(a.row_tiles().size(static_cast<std::size_t>(ta.row)));
      }
    }
  return flops;
}

/// Worst-fit packing (the seed's §3.2.2): items sorted by non-increasing size
/// go to the open block with the most room left, or open a new block when
/// none has room. Returns the items of each block, ascending.
inline std::vector<std::vector<std::size_t>> worst_fit_blocks(const std::vector<std::size_t>& items,
                                                              const std::vector<std::size_t>& bytes,
                                                              std::size_t capacity) {
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return bytes[x] > bytes[y]; });
  std::vector<std::vector<std::size_t>> blocks;
  std::vector<std::size_t> used;
  for (std::size_t o : order) {
    std::size_t best = blocks.size();
    for (std::size_t b = 0; b < blocks.size(); ++b)
      if (used[b] + bytes[o] <= capacity && (best == blocks.size() || used[b] < used[best])) best = b;
    if (best == blocks.size()) {
      blocks.emplace_back();
      used.push_back(0);
    }
    blocks[best].push_back(items[o]);
    used[best] += bytes[o];
  }
  for (auto& b : blocks) std::sort(b.begin(), b.end());
  return blocks;
}

/// Chunks of A tiles (the seed's §3.2.3): tiles grouped by A row are taken one
/// per row in a cyclic sweep until the next one would overflow `capacity` bytes.
/// `rows[r]` lists the tiles of row r (positions in A's shape), `bytes` maps a
/// tile position to its size. Every tile lands in exactly one chunk.
template <class Bytes>
std::vector<std::vector<std::size_t>> cyclic_chunks(const std::vector<std::vector<std::size_t>>& rows, Bytes bytes,
                                                    std::size_t capacity) {
  std::vector<std::vector<std::size_t>> chunks(1);
  std::size_t filled = 0;
  std::vector<std::size_t> next(rows.size(), 0);
  for (bool any = true; any;) {
    any = false;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (next[r] == rows[r].size()) continue;
      any = true;
      const std::size_t t = rows[r][next[r]++];
      const std::size_t size = bytes(t);
      if (filled + size > capacity && !chunks.back().empty()) {
        chunks.emplace_back();
        filled = 0;
      }
      chunks.back().push_back(t);
      filled += size;
    }
  }
  if (chunks.back().empty()) chunks.pop_back();
  return chunks;
}

}  // namespace tessera::detail
