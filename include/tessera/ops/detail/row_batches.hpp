#pragma once
/// @file
/// Batches of rows under a memory budget: what the expand-sort-compress products (1-D and grid)
/// multiply at once, so that the expanded products of one batch fit.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/row_batches.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/index_types.hpp"

#include <cstddef>

namespace tessera::detail {

/// The end of the batch that starts at row `first` of `rows`: rows join while the batch's
/// expanded products, `products_of_row(r)` each of `per_product` bytes, take at most
/// `budget_bytes` (0: no limit). A row larger than the budget runs alone.
template <class ProductsOfRow>
[[nodiscard]] local_index batch_end(local_index first, local_index rows, std::size_t budget_bytes,
                                    std::size_t per_product, ProductsOfRow&& products_of_row) {
  local_index last = first;
  std::size_t bytes = 0;
  while (last < rows) {
    const std::size_t row_bytes = static_cast<std::size_t>(products_of_row(last)) * per_product;
    if (last > first && budget_bytes > 0 && bytes + row_bytes > budget_bytes) break;
    bytes += row_bytes;
    ++last;
  }
  return last;
}

}  // namespace tessera::detail
