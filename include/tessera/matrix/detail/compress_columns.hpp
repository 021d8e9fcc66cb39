#pragma once
/// @file
/// Compressing global column indices to local ones: the distinct columns in order (a column map)
/// and each entry's position among them.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/matrix/detail/compress_columns.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/error.hpp"
#include "../../core/index_types.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tessera::detail {

/// The distinct global columns of `cols`, ascending, and each entry's position among them (its
/// compressed local column). A marker array over the global columns when their count is within a
/// small multiple of the entries (linear time), else sort and binary search. Every column must
/// lie in [0, global_cols).
struct compressed_columns {
  std::vector<global_index> used;
  std::vector<local_index> local;
};

inline compressed_columns compress_columns(const std::vector<global_index>& cols, global_index global_cols) {
  compressed_columns out;
  out.local.resize(cols.size());
  const auto limit = static_cast<global_index>(8 * cols.size()) + (global_index{1} << 16);
  if (global_cols >= 0 && global_cols <= limit) {
    std::vector<local_index> position(static_cast<std::size_t>(global_cols), -1);
    for (global_index c : cols) {
      TESSERA_REQUIRE(c >= 0 && c < global_cols, internal, "compress_columns: column {} outside [0, {})", c, global_cols);
      position[static_cast<std::size_t>(c)] = 0;
    }
    for (std::size_t c = 0; c < position.size(); ++c)
      if (position[c] == 0) {
        position[c] = static_cast<local_index>(out.used.size());
        out.used.push_back(static_cast<global_index>(c));
      }
    for (std::size_t e = 0; e < cols.size(); ++e) out.local[e] = position[static_cast<std::size_t>(cols[e])];
    return out;
  }
  out.used = cols;
  std::sort(out.used.begin(), out.used.end());
  out.used.erase(std::unique(out.used.begin(), out.used.end()), out.used.end());
  for (std::size_t e = 0; e < cols.size(); ++e)
    out.local[e] =
        static_cast<local_index>(std::lower_bound(out.used.begin(), out.used.end(), cols[e]) - out.used.begin());
  return out;
}

}  // namespace tessera::detail
