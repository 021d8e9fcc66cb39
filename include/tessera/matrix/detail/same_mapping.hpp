#pragma once
/// @file
/// Whether every rank holds the same mapping. Operations trust that all ranks split a matrix or
/// a dense block alike: a rank that believes another split (a width of 2 where the others have 3,
/// a row offset moved on the last rank) would send to or wait for the wrong ranks and hang them.
/// A mapping is summarised by what every rank can compute of every rank (global shape, each
/// rank's extents and the global coordinates of its first and last local entries), and one
/// allreduce compares the summaries.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/matrix/detail/same_mapping.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../comm/communicator.hpp"
#include "../../core/error.hpp"
#include "../../core/index_types.hpp"

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <vector>

namespace tessera::detail {

/// How much of a mapping the ranks compare: its global shape (O(1), what a dense block made on
/// every call checks), or also every rank's share (O(P), what adopting or redistributing checks).
enum class mapping_detail { shape, split };

/// A hash of what `mapping` says about its shape and (split) every rank's share.
template <class Mapping>
[[nodiscard]] std::uint64_t mapping_summary(const Mapping& mapping, mapping_detail detail) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](auto word) {
    h ^= static_cast<std::uint64_t>(word);
    h *= 0x100000001b3ull;
  };
  mix(mapping.num_ranks());
  mix(mapping.global_rows());
  mix(mapping.global_cols());
  if (detail == mapping_detail::shape) return h;
  for (int r = 0; r < mapping.num_ranks(); ++r) {
    const auto ext = mapping.extents(r);
    mix(ext.rows);
    mix(ext.cols);
    if (ext.rows > 0 && ext.cols > 0) {
      const auto first = mapping.to_global(r, 0, 0);
      const auto last = mapping.to_global(r, ext.rows - 1, ext.cols - 1);
      mix(first.row);
      mix(first.col);
      mix(last.row);
      mix(last.col);
    }
  }
  return h;
}

/// Runs `local_checks` on this rank and agrees, in one allreduce, both on their outcome (a failure
/// on any rank is raised on every rank, as communicator::collectively does) and on `mapping` being
/// the same everywhere (as far as `detail` compares): what a constructor made on every call (a
/// dense block) pays, instead of one agreement for each.
template <class Mapping, class Checks>
void agree_checks_and_mapping(const communicator& comm, const Mapping& mapping, const char* what,
                              mapping_detail detail, Checks&& local_checks) {
  std::exception_ptr failure;
  try {
    local_checks();
  } catch (...) {
    failure = std::current_exception();
  }
  const std::uint64_t mine = failure ? 0 : mapping_summary(mapping, detail);
  std::vector<std::uint64_t> bounds{failure ? 0u : 1u, mine, ~mine};
  comm.allreduce_inplace(bounds, MPI_MIN);
  if (bounds[0] == 0) comm.agree(failure);  // someone failed: its message, on every rank
  TESSERA_REQUIRE(bounds[1] == ~bounds[2], dimension_mismatch,
                  "{}: the ranks hold different distributions ({} x {} on rank {}): every rank must pass the same "
                  "mapping (the same shape, width and split)",
                  what, mapping.global_rows(), mapping.global_cols(), comm.rank());
}

}  // namespace tessera::detail
