#pragma once
/// @file
/// bsgemm's schedule: what one rank does in every apply of a plan, worked out from the shapes
/// alone (no communication): flops per column of B, packing its columns into memory-bounded
/// blocks (worst fit, the seed's §3.2.2), cutting a block's A tiles into chunks (one tile per A
/// row, cyclically, §3.2.3), the gets that bring each chunk, and the tile products in the order
/// the executor runs them.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_SCHEDULE_HPP
#endif

#include "../../core/error.hpp"
#include "../../kernels/packed_tile_gemm.hpp"
#include "../../kernels/tile_gemm.hpp"
#include "../../matrix/make_block_sparse.hpp"
#include "../../storage/block_sparse.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace tessera {

namespace detail {
/// True when the product of two tiles with these norms survives screening (threshold 0: always).
inline bool passes_screening(double norm_a, double norm_b, double threshold) noexcept {
  return threshold <= 0 || norm_a * norm_b >= threshold;
}
}  // namespace detail

/// Flops of every tile column of B in A * B: f_j = sum over nonzero B(k, j) and nonzero A(i, k) of 2 m_i k n_j.
/// Products screened out by `threshold` (0: none) do not count.
inline std::vector<double> bsgemm_column_flops(const block_sparse_shape& a, const block_sparse_shape& b,
                                               double threshold) {
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
        if (detail::passes_screening(ta.norm, tb.norm, threshold))
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

namespace detail {

/// One get of a chunk: `count` elements at `remote` in `owner`'s A, landing at `local` in the chunk buffer.
struct bsgemm_get {
  int owner;
  std::size_t remote, local, count;
};
/// Fetched products of a chunk whose A tiles are read where they lie on `owner`.
struct bsgemm_owner_products {
  int owner;
  std::vector<kernels::tile_product> products;  ///< A at offsets on `owner`
};
/// A chunk of A tiles: the gets that bring it, the products on local A tiles (run while it
/// arrives), the products on the fetched tiles, and those again grouped by owner for in-place reads.
struct bsgemm_chunk {
  std::vector<bsgemm_get> gets;
  std::vector<kernels::tile_product> local_products, fetched_products;
  std::vector<bsgemm_owner_products> in_place;
};
/// A nonzero-size C tile of this rank: its offset in the local values, its position among the
/// local tiles, its element count.
struct bsgemm_c_tile {
  std::size_t offset, local, elements;
};

/// What one rank does in every apply of a bsgemm plan.
struct bsgemm_schedule {
  std::vector<bsgemm_chunk> chunks;
  std::size_t num_blocks = 0;
  std::size_t fetched_elements = 0;   ///< A elements fetched per apply
  std::size_t buffer_elements = 0;    ///< the largest chunk, in elements
  std::size_t packed_a_elements = 0;  ///< the packed kernel's scratch for the largest A tile
  double flops = 0;                   ///< of this rank's tile products
  std::vector<bsgemm_c_tile> c_tiles;  ///< by increasing offset
  std::vector<std::pair<std::size_t, std::size_t>> unwritten;  ///< {offset, elements} of C tiles no product writes

  [[nodiscard]] std::size_t gets() const noexcept {
    std::size_t g = 0;
    for (const auto& c : chunks) g += c.gets.size();
    return g;
  }
  /// Index into c_tiles of the C tile at `offset`.
  [[nodiscard]] std::size_t c_position(std::size_t offset) const {
    const auto it = std::lower_bound(c_tiles.begin(), c_tiles.end(), offset,
                                     [](const bsgemm_c_tile& t, std::size_t o) { return t.offset < o; });
    TESSERA_REQUIRE(it != c_tiles.end() && it->offset == offset, internal, "bsgemm: product into an unknown C tile");
    return static_cast<std::size_t>(it - c_tiles.begin());
  }
};

/// The C tiles rank `me` computes: rows of its grid row, columns of its grid column, where a
/// product survives screening or the old C (`old`, when beta * C is kept) has a tile.
template <class AMapping, class BMapping>
std::vector<std::pair<std::size_t, std::size_t>> bsgemm_c_tiles_of(int me, const AMapping& am,
                                                                   const block_sparse_shape& as, const BMapping& bm,
                                                                   const block_sparse_shape& bs,
                                                                   const block_sparse_shape* old, double threshold) {
  const auto& grid = am.grid();
  const int r = grid.row_of(me), c = grid.col_of(me);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::vector<char> mark(bs.col_tiles().num_tiles(), 0);
  for (std::size_t ti = 0; ti < as.row_tiles().num_tiles(); ++ti) {
    if (am.tile_row_owner(ti) != r) continue;
    std::fill(mark.begin(), mark.end(), 0);
    for (std::size_t e = as.row_begin(ti); e < as.row_end(ti); ++e) {
      const auto kk = static_cast<std::size_t>(as.tiles()[e].col);
      for (std::size_t f = bs.row_begin(kk); f < bs.row_end(kk); ++f) {
        const auto tj = static_cast<std::size_t>(bs.tiles()[f].col);
        if (bm.tile_col_owner(tj) == c && passes_screening(as.tiles()[e].norm, bs.tiles()[f].norm, threshold))
          mark[tj] = 1;
      }
    }
    if (old != nullptr)
      for (std::size_t e = old->row_begin(ti); e < old->row_end(ti); ++e) {
        const auto tj = static_cast<std::size_t>(old->tiles()[e].col);
        if (bm.tile_col_owner(tj) == c) mark[tj] = 1;
      }
    for (std::size_t tj = 0; tj < mark.size(); ++tj)
      if (mark[tj]) out.emplace_back(ti, tj);
  }
  return out;
}

// The fetched products of a chunk with A read where it lies on its owner: the chunk buffer's
// tiles are its gets' runs back to back, so a buffer position names an owner and an offset there.
inline std::vector<bsgemm_owner_products> read_in_place(const bsgemm_chunk& ch) {
  std::vector<bsgemm_owner_products> runs;
  for (auto p : ch.fetched_products) {
    const auto g = std::upper_bound(ch.gets.begin(), ch.gets.end(), p.a,
                                    [](std::size_t place, const bsgemm_get& x) { return place < x.local; });
    TESSERA_REQUIRE(g != ch.gets.begin(), internal, "bsgemm: fetched A tile at {} outside the chunk's gets", p.a);
    const auto& from = *std::prev(g);
    p.a = from.remote + (p.a - from.local);
    if (runs.empty() || runs.back().owner != from.owner) runs.push_back({from.owner, {}});
    runs.back().products.push_back(p);
  }
  return runs;
}

inline constexpr std::size_t npos_offset = static_cast<std::size_t>(-1);  // tile_offsets_on: not on this rank

// In execution order, the first product of every C tile overwrites it and the last one marks it
// final; the local C tiles no product writes are remembered, to be zeroed when beta = 0.
inline void mark_first_writes(bsgemm_schedule& s, const std::vector<std::size_t>& c_offset,
                              const block_sparse_shape& cs) {
  s.c_tiles.clear();  // in shape order, so by increasing offset
  for (std::size_t t = 0, local = 0; t < cs.num_nonzero_tiles(); ++t) {
    if (c_offset[t] == npos_offset) continue;
    if (cs.tile_elements(t) > 0) s.c_tiles.push_back({c_offset[t], local, cs.tile_elements(t)});
    ++local;
  }
  std::vector<kernels::tile_product*> last(s.c_tiles.size(), nullptr);
  for (auto& ch : s.chunks)
    for (auto* list : {&ch.local_products, &ch.fetched_products})
      for (auto& p : *list) {
        if (p.m == 0 || p.n == 0 || p.k == 0) continue;
        const std::size_t at = s.c_position(p.c);
        p.overwrite = last[at] == nullptr;
        last[at] = &p;
      }
  s.unwritten.clear();
  for (std::size_t at = 0; at < last.size(); ++at) {
    if (last[at] != nullptr) last[at]->last = true;
    else s.unwritten.emplace_back(s.c_tiles[at].offset, s.c_tiles[at].elements);
  }
}

/// Rank `me`'s schedule of C = A * B for these shapes and mappings, within `memory_bytes`
/// (half for a block of B columns and their C tiles, a quarter per chunk of A tiles).
template <class T, class AMapping, class BMapping, class CMapping>
bsgemm_schedule schedule_bsgemm(int me, const AMapping& am, const block_sparse_shape& as, const BMapping& bm,
                                const block_sparse_shape& bs, const CMapping& cm, const block_sparse_shape& cs,
                                std::size_t memory_bytes, double threshold) {
  bsgemm_schedule out;
  const auto& grid = am.grid();
  const int r = grid.row_of(me), c = grid.col_of(me);

  // Where every A tile of this grid row lives on its owner, and B's and C's tiles here.
  std::vector<std::vector<std::size_t>> a_offset(static_cast<std::size_t>(grid.q));
  for (int col = 0; col < grid.q; ++col) {
    std::size_t total = 0;
    a_offset[static_cast<std::size_t>(col)] = tile_offsets_on(am, as, grid.rank(r, col), total);
  }
  std::size_t unused = 0;
  const auto b_offset = tile_offsets_on(bm, bs, me, unused);
  const auto c_offset = tile_offsets_on(cm, cs, me, unused);
  const auto elems_a = [&](std::size_t t) { return as.tile_elements(t); };

  // Columns of this rank and the memory each needs in a block: its B tiles and this rank's C tiles.
  std::vector<std::size_t> columns, bytes;
  for (std::size_t tj = 0; tj < bs.col_tiles().num_tiles(); ++tj) {
    if (bm.tile_col_owner(tj) != c) continue;
    std::size_t elements = 0;
    for (std::size_t e = bs.col_begin(tj); e < bs.col_end(tj); ++e) elements += bs.tile_elements(bs.by_col()[e]);
    for (std::size_t e = cs.col_begin(tj); e < cs.col_end(tj); ++e)
      if (cm.tile_row_owner(static_cast<std::size_t>(cs.tiles()[cs.by_col()[e]].row)) == r)
        elements += cs.tile_elements(cs.by_col()[e]);
    columns.push_back(tj);
    bytes.push_back(elements * sizeof(T));
  }
  const std::size_t block_capacity = memory_bytes / 2, chunk_capacity = memory_bytes / 4;
  for (std::size_t k = 0; k < columns.size(); ++k)
    TESSERA_REQUIRE(bytes[k] <= block_capacity, invalid_argument,
                    "bsgemm: memory budget of {} bytes too small: tile column {} needs {} bytes for its B and C "
                    "tiles, and a block may use half the budget",
                    memory_bytes, columns[k], bytes[k]);
  const auto blocks = worst_fit_blocks(columns, bytes, block_capacity);
  out.num_blocks = blocks.size();

  for (const auto& block : blocks) {
    // The products of this block, and the A tiles they need grouped by A row.
    struct product {
      std::size_t a, b, c;
    };
    std::vector<product> products;
    std::vector<std::vector<std::size_t>> rows(as.row_tiles().num_tiles());
    std::vector<char> needed(as.num_nonzero_tiles(), 0);
    for (std::size_t tj : block)
      for (std::size_t e = bs.col_begin(tj); e < bs.col_end(tj); ++e) {
        const std::size_t bt = bs.by_col()[e];
        const auto kk = static_cast<std::size_t>(bs.tiles()[bt].row);
        for (std::size_t f = as.col_begin(kk); f < as.col_end(kk); ++f) {
          const std::size_t at = as.by_col()[f];
          const auto ti = static_cast<std::size_t>(as.tiles()[at].row);
          if (am.tile_row_owner(ti) != r) continue;
          if (!passes_screening(as.tiles()[at].norm, bs.tiles()[bt].norm, threshold)) continue;
          const std::size_t ct = cs.find(ti, tj);
          TESSERA_REQUIRE(ct != block_sparse_shape::npos, internal, "bsgemm: C tile ({}, {}) missing", ti, tj);
          products.push_back({at, bt, ct});
          if (!needed[at]) {
            needed[at] = 1;
            rows[ti].push_back(at);
          }
        }
      }
    for (auto& row : rows) std::sort(row.begin(), row.end());
    for (std::size_t t = 0; t < needed.size(); ++t)
      TESSERA_REQUIRE(!needed[t] || as.tile_elements(t) * sizeof(T) <= chunk_capacity, invalid_argument,
                      "bsgemm: memory budget of {} bytes too small: A tile ({}, {}) needs {} bytes and a chunk may "
                      "use a quarter of the budget",
                      memory_bytes, as.tiles()[t].row, as.tiles()[t].col, as.tile_elements(t) * sizeof(T));
    const auto cut = cyclic_chunks(rows, [&](std::size_t t) { return elems_a(t) * sizeof(T); }, chunk_capacity);
    std::vector<std::size_t> chunk_of(as.num_nonzero_tiles()), place(as.num_nonzero_tiles());
    const std::size_t first_chunk = out.chunks.size();
    const auto owner_of = [&](std::size_t at) {
      const auto& t = as.tiles()[at];
      return am.tile_owner(static_cast<std::size_t>(t.row), static_cast<std::size_t>(t.col));
    };
    const auto offset_on_owner = [&](std::size_t at) {
      return a_offset[static_cast<std::size_t>(grid.col_of(owner_of(at)))][at];
    };
    for (std::size_t k = 0; k < cut.size(); ++k) {
      bsgemm_chunk ch;
      std::size_t filled = 0;
      // A chunk's tiles by owner, as they lie there: one get per contiguous run, and the buffer
      // holds each owner's tiles in the order they are read in place.
      auto tiles_of_chunk = cut[k];
      std::sort(tiles_of_chunk.begin(), tiles_of_chunk.end(), [&](std::size_t x, std::size_t y) {
        return std::pair(owner_of(x), offset_on_owner(x)) < std::pair(owner_of(y), offset_on_owner(y));
      });
      for (std::size_t at : tiles_of_chunk) {
        chunk_of[at] = first_chunk + k;
        const int owner = owner_of(at);
        const std::size_t remote = offset_on_owner(at);
        if (owner == me) {
          place[at] = remote;  // read in place from the local A
          continue;
        }
        place[at] = filled;
        const std::size_t n = elems_a(at);
        if (n == 0) continue;  // a zero-width tile: nothing to move
        // Tiles contiguous on their owner and here travel in one get.
        if (!ch.gets.empty() && ch.gets.back().owner == owner && ch.gets.back().remote + ch.gets.back().count == remote &&
            ch.gets.back().local + ch.gets.back().count == filled)
          ch.gets.back().count += n;
        else
          ch.gets.push_back({owner, remote, filled, n});
        filled += n;
        out.fetched_elements += n;
      }
      out.buffer_elements = std::max(out.buffer_elements, filled);
      out.chunks.push_back(std::move(ch));
    }
    for (const auto& p : products) {
      const auto& ta = as.tiles()[p.a];
      const auto& tb = bs.tiles()[p.b];
      const kernels::tile_product tp{place[p.a],
                                     b_offset[p.b],
                                     c_offset[p.c],
                                     static_cast<int>(as.row_tiles().size(static_cast<std::size_t>(ta.row))),
                                     static_cast<int>(bs.col_tiles().size(static_cast<std::size_t>(tb.col))),
                                     static_cast<int>(bs.row_tiles().size(static_cast<std::size_t>(tb.row)))};
      out.flops += 2.0 * tp.m * tp.n * tp.k;
      auto& ch = out.chunks[chunk_of[p.a]];
      (owner_of(p.a) == me ? ch.local_products : ch.fetched_products).push_back(tp);
    }
  }
  // Each A tile's products together (the packed kernel packs it once, then it meets its B tiles),
  // and so, fetched tiles by owner. Empty products write nothing: C tiles only they touch are unwritten.
  for (auto& ch : out.chunks)
    for (auto* list : {&ch.local_products, &ch.fetched_products}) {
      std::erase_if(*list, [](const kernels::tile_product& t) { return t.m == 0 || t.n == 0 || t.k == 0; });
      std::stable_sort(list->begin(), list->end(),
                       [](const kernels::tile_product& x, const kernels::tile_product& y) { return x.a < y.a; });
      for (const auto& t : *list)
        out.packed_a_elements = std::max(out.packed_a_elements,
                                         kernels::packed_shape<T>::a_elements(static_cast<std::size_t>(t.m),
                                                                              static_cast<std::size_t>(t.k)));
    }
  mark_first_writes(out, c_offset, cs);
  for (auto& ch : out.chunks) ch.in_place = read_in_place(ch);
  return out;
}

}  // namespace detail

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_SCHEDULE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_BSGEMM_SCHEDULE_HPP
#endif
