#pragma once
/// @file
/// Uniformly random sparse matrices with k draws per row.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_UNIFORM_RANDOM_HPP
#endif

#include "../core/error.hpp"
#include "../matrix/build.hpp"
#include "detail/counter_rng.hpp"
#include "share.hpp"

#include <cstdint>

namespace tessera::generate {

/// A rows x cols matrix where each row draws k columns uniformly (collective).
/// Repeated draws are summed, so a row has at most k entries. Values are
/// uniform in (0, 1] (floating types) or 1..9 (integers). Entry (i, t) depends
/// only on (seed, i, t): the same matrix at every rank count.
template <matrix_value T, matrix_policy Policy>
[[nodiscard]] dist_matrix<T, Policy> uniform_random(const communicator& comm, global_index rows, global_index cols,
                                                    int nnz_per_row, std::uint64_t seed = 1) {
  comm.collectively([&] {
    TESSERA_REQUIRE(rows >= 0 && cols >= 0, invalid_argument, "uniform_random: negative shape {} x {}", rows, cols);
    TESSERA_REQUIRE(nnz_per_row >= 0, invalid_argument, "uniform_random: negative nonzeros per row {}", nnz_per_row);
    TESSERA_REQUIRE(cols > 0 || nnz_per_row == 0 || rows == 0, invalid_argument,
                    "uniform_random: {} nonzeros per row need at least one column", nnz_per_row);
  });
  const auto mine = detail::own_share(comm, rows);
  triplets<T> entries;
  entries.reserve(static_cast<std::size_t>((mine.end - mine.begin) * nnz_per_row));
  for (global_index i = mine.begin; i < mine.end; ++i)
    for (int t = 0; t < nnz_per_row; ++t) {
      const std::uint64_t index = static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(nnz_per_row) + static_cast<std::uint64_t>(t);
      const std::uint64_t col_word = detail::random_word(seed, 1, index);
      const std::uint64_t value_word = detail::random_word(seed, 2, index);
      entries.push_back(i, static_cast<global_index>(col_word % static_cast<std::uint64_t>(cols)),
                        detail::random_value<T>(value_word));
    }
  return build_from_triplets<T, Policy>(comm, rows, cols, entries);
}

}  // namespace tessera::generate

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_UNIFORM_RANDOM_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_UNIFORM_RANDOM_HPP
#endif
